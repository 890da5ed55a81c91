// Renderer: runs a parsed template once, against one context. Internal to core/jinja.
//
// It holds everything that changes during a render (scopes, output buffer, counters), so the
// parse tree stays immutable and a Template can render on many threads, one Renderer each.
//
// Scoping follows jinja2: the root scope holds the context and top-level sets; each for-loop
// iteration, macro call, {% with %}, {% filter %} and block set runs in a child scope whose sets
// vanish at its end (`if` opens none); names not found in the scopes are the global functions.
// A macro reads names through the scope it was defined in, as of the time of the call.
//
// Errors carry the line of the innermost failing expression or statement ("line N: ..."), except
// raise_exception's, which keep the template's message unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/jinja/ast.h"
#include "core/jinja/builtins.h"
#include "core/jinja/template.h"
#include "core/jinja/value.h"
#include "core/util/status.h"

namespace radixserve::jinja {

struct Scope {
  std::shared_ptr<Scope> parent;
  std::unordered_map<std::string, Value> vars;
};

class Renderer {
 public:
  explicit Renderer(const RenderOptions& options) : options_(options) {}
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  Result<std::string> Render(const Body& body, const nlohmann::ordered_json& context);

  // Services for filters, tests, methods and globals (eval.cc).
  const RenderOptions& options() const { return options_; }
  // x.name: the attribute (a method of str/dict/list), else the item; Undefined when neither.
  Result<Value> GetAttr(const Value& obj, const std::string& name);
  // x[key]: the item, else the attribute named key; Undefined when neither.
  Result<Value> GetItem(const Value& obj, const Value& key);
  Result<Value> Call(const Value& callee, const CallArgs& args);
  Result<Value> ApplyFilter(std::string_view name, const Value& input, const CallArgs& args);
  Result<bool> ApplyTest(std::string_view name, const Value& input, const CallArgs& args);
  // Fails when a string or list a template builds would exceed the output limit.
  Status CheckSize(size_t size) const;
  // Python str() of a value, failing when its text would exceed the output limit.
  Result<std::string> Str(const Value& v) const;
  // Counts n loop iterations (or items a filter walks) against the render's total.
  Status CountIterations(int64_t n);
  // A new namespace, tracked so that reference cycles between namespaces end with the render.
  Value NewNamespace(Dict attrs, bool is_loop = false);

 private:
  enum class Jump { kNone, kBreak, kContinue };

  // Statements (render.cc).
  Status Exec(const Body& body);
  Status ExecStmt(const Stmt& s);
  Status ExecFor(const Stmt& s);
  Status ExecSetBlock(const Stmt& s);
  Status ExecFilterBlock(const Stmt& s);
  Status Assign(const Target& target, const Value& value, int line);
  // Renders body in a child scope into *out.
  Status Capture(const Body& body, std::string* out);
  Status Write(std::string_view text);
  Result<Value> CallMacro(const Callable& fn, const CallArgs& args);
  Status BindMacroArgs(const Stmt& macro, const CallArgs& args);

  // Expressions (eval.cc).
  Result<Value> Eval(const Expr& e);
  Result<Value> EvalInner(const Expr& e);
  Result<CallArgs> EvalArgs(const std::vector<Arg>& args);
  Result<Value> EvalContainer(const Expr& e);
  Result<Value> EvalCall(const Expr& e);
  Result<Value> EvalUnary(const Expr& e);
  Result<Value> EvalOperator(const Expr& e);
  Result<Value> EvalCompare(const Expr& e);
  Result<Value> EvalSlice(const Expr& e);
  Value Lookup(const std::string& name) const;
  // Prefixes "line N: " to the first error of the render (raise_exception's excepted).
  Status Located(int line, Status status);
  // Counts one level of evaluation (statement or expression); fails past 1000 levels or 2 MiB of
  // stack, so that recursion through macros cannot exhaust the stack.
  Status Nest();
  struct Unnest {
    int* n;
    ~Unnest() { --*n; }
  };

  const RenderOptions& options_;
  std::shared_ptr<Scope> root_;
  std::shared_ptr<Scope> scope_;
  std::string* out_ = nullptr;
  Value block_text_;  // the captured text a {% filter %} chain filters
  int64_t iterations_ = 0;
  int call_depth_ = 0;
  int nesting_ = 0;           // statements and expressions being evaluated, macro calls included
  uintptr_t stack_base_ = 0;  // the stack address where Render started
  Jump jump_ = Jump::kNone;
  bool located_ = false;
  std::vector<std::weak_ptr<Namespace>> namespaces_;  // every namespace of this render
};

}  // namespace radixserve::jinja
