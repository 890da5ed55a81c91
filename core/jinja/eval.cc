// Expression half of the Renderer: names, lookups, calls, operators.
#include <string>

#include "core/jinja/errors.h"
#include "core/jinja/json.h"
#include "core/jinja/ops.h"
#include "core/jinja/py_string.h"
#include "core/jinja/renderer.h"

namespace radixserve::jinja {

namespace {

// jinja2's object_type_repr: how undefined-attribute messages name an object.
std::string ObjectTypeRepr(const Value& v) {
  if (v.is_none()) return "None";
  if (v.is_markup()) return "markupsafe.Markup object";
  if (v.is_namespace()) return v.ns().is_loop ? "jinja2.runtime.LoopContext object" : "jinja2.utils.Namespace object";
  if (v.is_callable() && v.fn().kind == Callable::Kind::kMacro) return "jinja2.runtime.Macro object";
  return v.TypeName() + " object";
}

Value NoAttribute(const Value& obj, const std::string& name) {
  return Value::Undefined(PyReprString(ObjectTypeRepr(obj)) + " has no attribute " + PyReprString(name));
}

Value NoElement(const Value& obj, const Value& key) {
  std::string repr = PyRepr(key, 200);
  if (repr.size() > 200) repr = repr.substr(0, 200) + "...";
  return Value::Undefined(ObjectTypeRepr(obj) + " has no element " + repr);
}

Value BoundMethod(const Value& self, const std::string& name) {
  Callable fn;
  fn.kind = Callable::Kind::kMethod;
  fn.name = name;
  fn.self = self;
  return Value::FromCallable(std::move(fn));
}

// Python's slice.indices(len): the clamped start and stop, and the positions they select.
struct SliceRange {
  int64_t begin, end;
  std::vector<int64_t> positions;
};

SliceRange SliceIndices(int64_t len, const Value& start, const Value& stop, int64_t step) {
  const int64_t lower = step > 0 ? 0 : -1;
  const int64_t upper = step > 0 ? len : len - 1;
  auto clamp = [&](const Value& v, int64_t fallback) {
    if (v.is_none()) return fallback;
    int64_t i = v.as_int();
    if (i < 0) i += len;
    return i < lower ? lower : i > upper ? upper : i;
  };
  SliceRange out{clamp(start, step > 0 ? lower : upper), clamp(stop, step > 0 ? upper : lower), {}};
  for (int64_t i = out.begin; step > 0 ? i < out.end : i > out.end; i += step) out.positions.push_back(i);
  return out;
}

}  // namespace

Status Renderer::Located(int line, Status status) {
  if (located_ || status.code() == StatusCode::kInvalidArgument) return status;
  located_ = true;
  return Status(status.code(), "line " + std::to_string(line) + ": " + status.message());
}

Value Renderer::Lookup(const std::string& name) const {
  for (const Scope* s = scope_.get(); s != nullptr; s = s->parent.get()) {
    auto it = s->vars.find(name);
    if (it != s->vars.end()) return it->second;
  }
  if (IsGlobalFunction(name)) {
    Callable fn;
    fn.name = name;
    return Value::FromCallable(std::move(fn));
  }
  return Value::Undefined(PyReprString(name) + " is undefined");
}

Result<Value> Renderer::GetAttr(const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case Value::Kind::kUndefined:
      return UndefinedError(obj.str());
    case Value::Kind::kDict: {
      if (HasMethod(obj, name)) return BoundMethod(obj, name);
      const Value* v = obj.dict().Find(name);
      return v ? *v : NoAttribute(obj, name);
    }
    case Value::Kind::kNamespace: {
      const Value* v = obj.ns().attrs.Find(name);
      if (v) return *v;
      return HasMethod(obj, name) ? BoundMethod(obj, name) : NoAttribute(obj, name);
    }
    default:
      return HasMethod(obj, name) ? BoundMethod(obj, name) : NoAttribute(obj, name);
  }
}

Result<Value> Renderer::GetItem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return UndefinedError(obj.str());
  if (obj.is_dict() && CheckHashable(key).ok()) {
    if (const Value* v = obj.dict().Find(key)) return *v;
  }
  if ((obj.is_sequence() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    const bool is_string = obj.is_string();
    std::vector<std::string_view> cps;
    if (is_string) cps = Codepoints(obj.str());
    const int64_t len = is_string ? static_cast<int64_t>(cps.size()) : static_cast<int64_t>(obj.items().size());
    int64_t i = key.as_int();
    if (i < 0) i += len;
    if (i < 0 || i >= len) return NoElement(obj, key);
    return is_string ? Value::Str(std::string(cps[i])) : obj.items()[i];
  }
  if (key.is_string()) {
    if (obj.is_namespace()) return GetAttr(obj, key.str());
    return HasMethod(obj, key.str()) ? BoundMethod(obj, key.str()) : NoAttribute(obj, key.str());
  }
  return NoElement(obj, key);
}

Result<Value> Renderer::Call(const Value& callee, const CallArgs& args) {
  if (callee.is_undefined()) return UndefinedError(callee.str());
  if (!callee.is_callable()) return TypeError(std::string("'") + callee.TypeName() + "' object is not callable");
  const Callable& fn = callee.fn();
  switch (fn.kind) {
    case Callable::Kind::kGlobal:
      return CallGlobal(*this, fn.name, args);
    case Callable::Kind::kMethod:
      return CallMethod(*this, fn.self, fn.name, args);
    case Callable::Kind::kMacro:
      return CallMacro(fn, args);
  }
  return Status::Internal("unknown callable");
}

Result<Value> Renderer::ApplyFilter(std::string_view name, const Value& input, const CallArgs& args) {
  FilterFn filter = FindFilter(name);
  if (filter == nullptr) return PyError("TemplateRuntimeError", "No filter named " + PyReprString(name) + ".");
  return filter(*this, input, args);
}

Result<bool> Renderer::ApplyTest(std::string_view name, const Value& input, const CallArgs& args) {
  TestFn test = FindTest(name);
  if (test == nullptr) return PyError("TemplateRuntimeError", "No test named " + PyReprString(name) + ".");
  return test(*this, input, args);
}

Result<CallArgs> Renderer::EvalArgs(const std::vector<Arg>& args) {
  CallArgs out;
  for (const Arg& arg : args) {
    RS_ASSIGN_OR_RETURN(Value v, Eval(*arg.value));
    if (arg.name.empty()) {
      out.positional.push_back(std::move(v));
    } else {
      out.keyword.emplace_back(arg.name, std::move(v));
    }
  }
  return out;
}

Result<Value> Renderer::Eval(const Expr& e) {
  Status st = Nest();
  if (!st.ok()) return Located(e.line, std::move(st));
  Unnest unnest{&nesting_};
  Result<Value> r = EvalInner(e);
  if (!r.ok()) return Located(e.line, r.status());
  return r;
}

// Each kind of expression has its own function, so that the frames of this recursion stay small.
Result<Value> Renderer::EvalInner(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kLiteral:
      return e.literal;
    case ExprKind::kName:
      return Lookup(e.name);
    case ExprKind::kList:
    case ExprKind::kTuple:
    case ExprKind::kDict:
      return EvalContainer(e);
    case ExprKind::kGetAttr:
    case ExprKind::kGetItem: {
      RS_ASSIGN_OR_RETURN(Value obj, Eval(*e.a));
      if (e.kind == ExprKind::kGetAttr) return GetAttr(obj, e.name);
      RS_ASSIGN_OR_RETURN(Value key, Eval(*e.b));
      return GetItem(obj, key);
    }
    case ExprKind::kSlice:
      return EvalSlice(e);
    case ExprKind::kCall:
    case ExprKind::kFilter:
    case ExprKind::kTest:
      return EvalCall(e);
    case ExprKind::kNeg:
    case ExprKind::kPos:
    case ExprKind::kNot:
      return EvalUnary(e);
    case ExprKind::kCompare:
      return EvalCompare(e);
    case ExprKind::kBinary:
    case ExprKind::kConcat:
    case ExprKind::kAnd:
    case ExprKind::kOr:
    case ExprKind::kCond:
      return EvalOperator(e);
  }
  return Status::Internal("unknown expression");
}

Result<Value> Renderer::EvalContainer(const Expr& e) {
  Value v;
  if (e.kind == ExprKind::kDict) {
    Dict dict;
    for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
      RS_ASSIGN_OR_RETURN(Value key, Eval(*e.items[i]));
      RS_RETURN_IF_ERROR(CheckHashable(key));
      RS_ASSIGN_OR_RETURN(Value value, Eval(*e.items[i + 1]));
      dict.Set(std::move(key), std::move(value));
    }
    v = Value::FromDict(std::move(dict));
  } else {
    std::vector<Value> items;
    items.reserve(e.items.size());
    for (const ExprPtr& item : e.items) {
      RS_ASSIGN_OR_RETURN(Value x, Eval(*item));
      items.push_back(std::move(x));
    }
    v = e.kind == ExprKind::kList ? Value::List(std::move(items)) : Value::Tuple(std::move(items));
  }
  RS_RETURN_IF_ERROR(CheckNesting(v));
  return v;
}

// Calls, filters and tests: the callee or input, then the arguments.
Result<Value> Renderer::EvalCall(const Expr& e) {
  Value input = block_text_;  // a filter without input filters the text of its block
  if (e.a) {
    RS_ASSIGN_OR_RETURN(input, Eval(*e.a));
  }
  RS_ASSIGN_OR_RETURN(CallArgs args, EvalArgs(e.args));
  if (e.kind == ExprKind::kCall) return Call(input, args);
  if (e.kind == ExprKind::kFilter) {
    if (e.filter == nullptr) return Status::Unsupported("unknown filter '" + e.name + "'");
    return e.filter(*this, input, args);
  }
  if (e.test == nullptr) return Status::Unsupported("unknown test '" + e.name + "'");
  RS_ASSIGN_OR_RETURN(bool pass, e.test(*this, input, args));
  return Value::Bool(pass);
}

Result<Value> Renderer::EvalUnary(const Expr& e) {
  RS_ASSIGN_OR_RETURN(Value v, Eval(*e.a));
  if (e.kind == ExprKind::kNot) return Value::Bool(!v.Truthy());
  const bool neg = e.kind == ExprKind::kNeg;
  if (v.is_undefined()) return UndefinedError(v.str());
  if (v.is_float()) return Value::Float(neg ? -v.as_double() : v.as_double());
  if (v.is_int() || v.is_bool()) {
    if (neg && v.as_int() == INT64_MIN) return PyError("OverflowError", "integer result does not fit in 64 bits");
    return Value::Int(neg ? -v.as_int() : v.as_int());
  }
  return TypeError(std::string("bad operand type for unary ") + (neg ? "-" : "+") + ": '" + v.TypeName() + "'");
}

// Binary operators, ~, and/or (which return an operand, not a bool) and the inline if.
Result<Value> Renderer::EvalOperator(const Expr& e) {
  if (e.kind == ExprKind::kConcat) {
    std::string out;
    for (const ExprPtr& item : e.items) {
      RS_ASSIGN_OR_RETURN(Value v, Eval(*item));
      RS_ASSIGN_OR_RETURN(std::string text, Str(v));
      out += text;
      RS_RETURN_IF_ERROR(CheckSize(out.size()));
    }
    return Value::Str(std::move(out));
  }
  if (e.kind == ExprKind::kCond) {
    RS_ASSIGN_OR_RETURN(Value cond, Eval(*e.b));
    if (cond.Truthy()) return Eval(*e.a);
    if (e.c) return Eval(*e.c);
    return Value::Undefined("the inline if-expression on line " + std::to_string(e.line) +
                            " evaluated to false and no else section was defined.");
  }
  RS_ASSIGN_OR_RETURN(Value a, Eval(*e.a));
  if (e.kind == ExprKind::kAnd || e.kind == ExprKind::kOr) {
    if (a.Truthy() == (e.kind == ExprKind::kOr)) return a;
    return Eval(*e.b);
  }
  RS_ASSIGN_OR_RETURN(Value b, Eval(*e.b));
  return BinaryOp(e.name, a, b, options_.limits.max_output_bytes);
}

Result<Value> Renderer::EvalCompare(const Expr& e) {
  RS_ASSIGN_OR_RETURN(Value left, Eval(*e.a));
  for (size_t i = 0; i < e.ops.size(); ++i) {
    RS_ASSIGN_OR_RETURN(Value right, Eval(*e.items[i]));
    RS_ASSIGN_OR_RETURN(bool holds, CompareOp(e.ops[i], left, right));
    if (!holds) return Value::Bool(false);
    left = std::move(right);
  }
  return Value::Bool(true);
}

Result<Value> Renderer::EvalSlice(const Expr& e) {
  RS_ASSIGN_OR_RETURN(Value obj, Eval(*e.a));
  Value bounds[3] = {Value::None(), Value::None(), Value::None()};
  const Expr* parts[3] = {e.b.get(), e.c.get(), e.items[0].get()};
  for (int i = 0; i < 3; ++i) {
    if (parts[i] == nullptr) continue;
    RS_ASSIGN_OR_RETURN(bounds[i], Eval(*parts[i]));
    if (!bounds[i].is_none() && !bounds[i].is_int() && !bounds[i].is_bool()) {
      if (bounds[i].is_undefined()) return UndefinedError(bounds[i].str());
      return TypeError("slice indices must be integers or None or have an __index__ method");
    }
  }
  if (obj.is_undefined()) return UndefinedError(obj.str());
  const int64_t step = bounds[2].is_none() ? 1 : bounds[2].as_int();
  if (step == 0) return ValueError("slice step cannot be zero");
  if (obj.is_string()) {
    const auto cps = Codepoints(obj.str());
    std::string out;
    for (int64_t i : SliceIndices(static_cast<int64_t>(cps.size()), bounds[0], bounds[1], step).positions) {
      out += cps[i];
    }
    return Value::Str(std::move(out));
  }
  if (obj.is_sequence()) {
    const SliceRange slice = SliceIndices(static_cast<int64_t>(obj.items().size()), bounds[0], bounds[1], step);
    std::vector<Value> out;
    for (int64_t i : slice.positions) out.push_back(obj.items()[i]);
    switch (obj.list().kind) {
      case ListKind::kTuple:
        return Value::Tuple(std::move(out));
      case ListKind::kRange: {  // a slice of a range is a range
        const int64_t* r = obj.list().range;
        return Value::Range(r[0] + slice.begin * r[2], r[0] + slice.end * r[2], r[2] * step, std::move(out));
      }
      default:
        return Value::List(std::move(out));
    }
  }
  return Value::Undefined(ObjectTypeRepr(obj) + " has no element slice");
}

}  // namespace radixserve::jinja
