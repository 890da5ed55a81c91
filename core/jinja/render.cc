// Statement half of the Renderer: output, control flow, assignment, macros.
#include <algorithm>

#include "core/jinja/errors.h"
#include "core/jinja/json.h"
#include "core/jinja/ops.h"
#include "core/jinja/renderer.h"

namespace radixserve::jinja {

Renderer::~Renderer() {
  // Namespaces can refer to each other in cycles (ns.self = ns) that reference counting never
  // frees: empty every one still alive, holding them all so none is freed halfway through.
  std::vector<std::shared_ptr<Namespace>> alive;
  for (const auto& weak : namespaces_) {
    if (auto ns = weak.lock()) alive.push_back(std::move(ns));
  }
  for (const auto& ns : alive) ns->attrs.clear();
}

Result<std::string> Renderer::Render(const Body& body, const nlohmann::ordered_json& context) {
  if (!context.is_object() && !context.is_null()) {
    return Status::FailedPrecondition("the render context must be a JSON object");
  }
  root_ = std::make_shared<Scope>();
  for (const auto& [key, json] : context.items()) {
    RS_ASSIGN_OR_RETURN(Value value, FromJson(json));
    root_->vars[key] = std::move(value);
  }
  scope_ = root_;
  stack_base_ = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  std::string out;
  out_ = &out;
  RS_RETURN_IF_ERROR(Exec(body));
  return out;
}

Value Renderer::NewNamespace(Dict attrs, bool is_loop) {
  std::shared_ptr<Namespace> ns(new Namespace);  // not make_shared: weak refs must not pin its memory
  ns->attrs = std::move(attrs);
  ns->is_loop = is_loop;
  if (namespaces_.size() >= 64 && namespaces_.size() == namespaces_.capacity()) {
    // Drop the freed ones; keep at least half the room free so that compacting stays amortised O(1).
    std::erase_if(namespaces_, [](const std::weak_ptr<Namespace>& w) { return w.expired(); });
    if (namespaces_.size() * 2 > namespaces_.capacity()) namespaces_.reserve(namespaces_.capacity() * 2);
  }
  namespaces_.push_back(ns);
  return Value::FromNamespace(std::move(ns));
}

Status Renderer::CheckSize(size_t size) const {
  if (size <= options_.limits.max_output_bytes) return Status::Ok();
  return LimitError("a string or list would exceed the output limit of " +
                    std::to_string(options_.limits.max_output_bytes) + " bytes");
}

Result<std::string> Renderer::Str(const Value& v) const {
  std::string text = PyStr(v, options_.limits.max_output_bytes);
  RS_RETURN_IF_ERROR(CheckSize(text.size()));
  return text;
}

Status Renderer::CountIterations(int64_t n) {
  iterations_ += n;
  if (iterations_ <= options_.limits.max_loop_iterations) return Status::Ok();
  return LimitError("more than " + std::to_string(options_.limits.max_loop_iterations) +
                    " loop iterations in one render");
}

Status Renderer::Write(std::string_view text) {
  if (out_->size() + text.size() > options_.limits.max_output_bytes) {
    return LimitError("the output would exceed " + std::to_string(options_.limits.max_output_bytes) + " bytes");
  }
  out_->append(text);
  return Status::Ok();
}

Status Renderer::Nest() {
  // A level takes about a kilobyte of stack (several under sanitizers): both bounds keep a render
  // well inside a thread's stack. The count makes the limit the same everywhere; the measured
  // stack use is the backstop for builds with larger frames.
  constexpr int kMaxLevels = 1000;
  constexpr uintptr_t kMaxStackBytes = 2 << 20;
  const auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  const uintptr_t used = stack_base_ > here ? stack_base_ - here : here - stack_base_;
  if (++nesting_ <= kMaxLevels && used <= kMaxStackBytes) return Status::Ok();
  --nesting_;
  return LimitError("the render nests too deeply (statements, expressions and macro calls together)");
}

Status Renderer::Exec(const Body& body) {
  for (const StmtPtr& s : body) {
    Status st = Nest();
    if (!st.ok()) return Located(s->line, std::move(st));
    Unnest unnest{&nesting_};
    st = ExecStmt(*s);
    if (!st.ok()) return Located(s->line, std::move(st));
    if (jump_ != Jump::kNone) break;
  }
  return Status::Ok();
}

Status Renderer::ExecStmt(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::kText:
      return Write(s.text);
    case StmtKind::kOutput: {
      RS_ASSIGN_OR_RETURN(Value v, Eval(*s.expr));
      RS_ASSIGN_OR_RETURN(std::string text, Str(v));
      return Write(text);
    }
    case StmtKind::kIf:
      for (const IfBranch& branch : s.branches) {
        bool take = true;
        if (branch.cond) {
          RS_ASSIGN_OR_RETURN(Value cond, Eval(*branch.cond));
          take = cond.Truthy();
        }
        if (take) return Exec(branch.body);
      }
      return Status::Ok();
    case StmtKind::kFor:
      return ExecFor(s);
    case StmtKind::kSet: {
      RS_ASSIGN_OR_RETURN(Value v, Eval(*s.expr));
      return Assign(s.target, v, s.line);
    }
    case StmtKind::kSetBlock:
      return ExecSetBlock(s);
    case StmtKind::kMacro: {
      Callable fn;
      fn.kind = Callable::Kind::kMacro;
      fn.name = s.text;
      fn.macro = &s;
      fn.closure = scope_;
      scope_->vars[s.text] = Value::FromCallable(std::move(fn));
      return Status::Ok();
    }
    case StmtKind::kFilterBlock:
      return ExecFilterBlock(s);
    case StmtKind::kWith: {
      auto inner = std::make_shared<Scope>();
      inner->parent = scope_;
      for (const auto& [name, expr] : s.assigns) {  // values see the outer scope only
        RS_ASSIGN_OR_RETURN(Value v, Eval(*expr));
        inner->vars[name] = std::move(v);
      }
      auto outer = scope_;
      scope_ = inner;
      Status st = Exec(s.body);
      scope_ = outer;
      return st;
    }
    case StmtKind::kBreak:
      jump_ = Jump::kBreak;
      return Status::Ok();
    case StmtKind::kContinue:
      jump_ = Jump::kContinue;
      return Status::Ok();
  }
  return Status::Internal("unknown statement");
}

Status Renderer::ExecFor(const Stmt& s) {
  RS_ASSIGN_OR_RETURN(Value iterable, Eval(*s.expr));
  RS_ASSIGN_OR_RETURN(std::vector<Value> items, PyIter(iterable));
  const auto outer = scope_;
  auto new_scope = [&] {
    auto inner = std::make_shared<Scope>();
    inner->parent = outer;
    return inner;
  };
  if (s.cond) {  // a filtered loop: loop.* count only the items that pass
    std::vector<Value> kept;
    for (Value& item : items) {
      RS_RETURN_IF_ERROR(CountIterations(1));
      scope_ = new_scope();
      Status st = Assign(s.target, item, s.line);
      Result<Value> pass = st.ok() ? Eval(*s.cond) : Result<Value>(st);
      scope_ = outer;
      if (!pass.ok()) return pass.status();
      if (pass->Truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    if (s.else_body.empty()) return Status::Ok();
    scope_ = new_scope();
    Status st = Exec(s.else_body);
    scope_ = outer;
    return st;
  }
  const int64_t n = static_cast<int64_t>(items.size());
  Value loop = NewNamespace(Dict(), true);
  Dict& attrs = loop.ns().attrs;
  for (int64_t i = 0; i < n; ++i) {
    RS_RETURN_IF_ERROR(CountIterations(1));
    attrs.Set(Value::Str("index0"), Value::Int(i));
    attrs.Set(Value::Str("index"), Value::Int(i + 1));
    attrs.Set(Value::Str("revindex0"), Value::Int(n - i - 1));
    attrs.Set(Value::Str("revindex"), Value::Int(n - i));
    attrs.Set(Value::Str("first"), Value::Bool(i == 0));
    attrs.Set(Value::Str("last"), Value::Bool(i == n - 1));
    attrs.Set(Value::Str("length"), Value::Int(n));
    attrs.Set(Value::Str("depth0"), Value::Int(0));
    attrs.Set(Value::Str("depth"), Value::Int(1));
    attrs.Set(Value::Str("previtem"), i > 0 ? items[i - 1] : Value::Undefined("there is no previous item"));
    attrs.Set(Value::Str("nextitem"), i + 1 < n ? items[i + 1] : Value::Undefined("there is no next item"));
    scope_ = new_scope();
    scope_->vars["loop"] = loop;
    Status st = Assign(s.target, items[i], s.line);
    if (st.ok()) st = Exec(s.body);
    scope_ = outer;
    RS_RETURN_IF_ERROR(st);
    const Jump jump = jump_;
    jump_ = Jump::kNone;
    if (jump == Jump::kBreak) break;
  }
  return Status::Ok();
}

Status Renderer::Assign(const Target& target, const Value& value, int line) {
  if (!target.attr.empty()) {
    const Value ns = Lookup(target.names[0]);
    if (!ns.is_namespace() || ns.ns().is_loop) {
      return Located(line, PyError("TemplateRuntimeError", "cannot assign attribute on non-namespace object"));
    }
    ns.ns().attrs.Set(Value::Str(target.attr), value);
    return Status::Ok();
  }
  if (!target.tuple) {
    scope_->vars[target.names[0]] = value;
    return Status::Ok();
  }
  RS_ASSIGN_OR_RETURN(std::vector<Value> parts, PyIter(value));
  const size_t want = target.names.size();
  if (parts.size() < want) {
    return ValueError("not enough values to unpack (expected " + std::to_string(want) + ", got " +
                      std::to_string(parts.size()) + ")");
  }
  if (parts.size() > want) return ValueError("too many values to unpack (expected " + std::to_string(want) + ")");
  for (size_t i = 0; i < want; ++i) scope_->vars[target.names[i]] = std::move(parts[i]);
  return Status::Ok();
}

Status Renderer::Capture(const Body& body, std::string* out) {
  auto outer = scope_;
  scope_ = std::make_shared<Scope>();
  scope_->parent = outer;
  std::string* saved = out_;
  out_ = out;
  Status st = Exec(body);
  out_ = saved;
  scope_ = outer;
  return st;
}

Status Renderer::ExecSetBlock(const Stmt& s) {
  std::string text;
  RS_RETURN_IF_ERROR(Capture(s.body, &text));
  if (jump_ != Jump::kNone) return Status::Ok();  // {% break %} inside: leave without assigning
  Value value = Value::Str(std::move(text));
  if (s.expr) {
    Value saved = std::move(block_text_);
    block_text_ = std::move(value);
    Result<Value> filtered = Eval(*s.expr);
    block_text_ = std::move(saved);
    if (!filtered.ok()) return filtered.status();
    value = std::move(filtered).value();
  }
  return Assign(s.target, value, s.line);
}

Status Renderer::ExecFilterBlock(const Stmt& s) {
  std::string text;
  RS_RETURN_IF_ERROR(Capture(s.body, &text));
  if (jump_ != Jump::kNone) return Status::Ok();  // {% break %} inside: leave without writing
  Value saved = std::move(block_text_);
  block_text_ = Value::Str(std::move(text));
  Result<Value> filtered = Eval(*s.expr);
  block_text_ = std::move(saved);
  if (!filtered.ok()) return filtered.status();
  RS_ASSIGN_OR_RETURN(std::string out, Str(*filtered));
  return Write(out);
}

Result<Value> Renderer::CallMacro(const Callable& fn, const CallArgs& args) {
  if (call_depth_ >= options_.limits.max_call_depth) {
    return LimitError("macro calls nest deeper than " + std::to_string(options_.limits.max_call_depth));
  }
  auto scope = std::make_shared<Scope>();
  scope->parent = fn.closure.lock();
  if (!scope->parent) scope->parent = root_;
  const auto saved_scope = scope_;
  std::string* const saved_out = out_;
  std::string text;
  scope_ = scope;
  out_ = &text;
  ++call_depth_;
  Status st = BindMacroArgs(*fn.macro, args);
  if (st.ok()) st = Exec(fn.macro->body);
  --call_depth_;
  out_ = saved_out;
  scope_ = saved_scope;
  jump_ = Jump::kNone;
  RS_RETURN_IF_ERROR(st);
  return Value::Str(std::move(text));
}

// jinja2's Macro.__call__: positional arguments fill the parameters in order, keywords fill the
// rest, defaults are evaluated (in the macro's scope, seeing earlier parameters) for what is left.
Status Renderer::BindMacroArgs(const Stmt& macro, const CallArgs& args) {
  const size_t n = macro.params.size();
  std::vector<std::pair<std::string, Value>> keywords = args.keyword;
  for (size_t i = 0; i < n; ++i) {
    const MacroParam& param = macro.params[i];
    if (i < args.positional.size()) {
      scope_->vars[param.name] = args.positional[i];
      continue;
    }
    auto it = std::find_if(keywords.begin(), keywords.end(), [&](const auto& kw) { return kw.first == param.name; });
    if (it != keywords.end()) {
      scope_->vars[param.name] = std::move(it->second);
      keywords.erase(it);
    } else if (param.default_value) {
      RS_ASSIGN_OR_RETURN(Value v, Eval(*param.default_value));
      scope_->vars[param.name] = std::move(v);
    } else {
      scope_->vars[param.name] = Value::Undefined("parameter '" + param.name + "' was not provided");
    }
  }
  if (macro.uses_kwargs) {
    Dict kwargs;
    for (auto& [name, value] : keywords) kwargs.Set(Value::Str(name), std::move(value));
    scope_->vars["kwargs"] = Value::FromDict(std::move(kwargs));
  } else if (!keywords.empty()) {
    return TypeError("macro '" + macro.text + "' takes no keyword argument '" + keywords.front().first + "'");
  }
  if (macro.uses_varargs) {
    std::vector<Value> rest;
    for (size_t i = n; i < args.positional.size(); ++i) rest.push_back(args.positional[i]);
    scope_->vars["varargs"] = Value::Tuple(std::move(rest));
  } else if (args.positional.size() > n) {
    return TypeError("macro '" + macro.text + "' takes not more than " + std::to_string(n) + " argument(s)");
  }
  return Status::Ok();
}

}  // namespace radixserve::jinja
