// The parse tree of a template: expressions and statements. Internal to core/jinja.
//
// Built once by the parser and never changed afterwards, so one tree is rendered by any number of
// threads at once. Every node records its source line for error messages.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/jinja/builtins.h"
#include "core/jinja/value.h"

namespace radixserve::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind : uint8_t {
  kLiteral,  // literal
  kName,     // name
  kList,     // items
  kTuple,    // items
  kDict,     // items: key, value, key, value...
  kGetAttr,  // a.name
  kGetItem,  // a[b]
  kSlice,    // a[b:c:d]; b, c, d may be null
  kCall,     // a(args)
  kFilter,   // a|name(args); a is null in {% filter %} and {% set x | f %} (the block's text)
  kTest,     // a is name(args)
  kNeg,      // -a
  kPos,      // +a
  kNot,      // not a
  kBinary,   // a name b, name one of + - * / // % **
  kConcat,   // items joined by ~
  kCompare,  // a ops[0] items[0] ops[1] items[1]... (Python chaining)
  kAnd,      // a and b
  kOr,       // a or b
  kCond,     // a if b else c; c null: Undefined when b is false
};

// One argument of a call, filter or test; an empty name is positional.
struct Arg {
  std::string name;
  ExprPtr value;
};

struct Expr {
  ExprKind kind;
  int line = 0;
  Value literal;
  std::string name;
  ExprPtr a, b, c;
  std::vector<ExprPtr> items;
  std::vector<std::string> ops;  // kCompare: "==", "!=", "<", "<=", ">", ">=", "in", "notin"
  std::vector<Arg> args;
  FilterFn filter = nullptr;  // kFilter, resolved at parse time; null: unknown (fails if it runs)
  TestFn test = nullptr;      // kTest, likewise
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class StmtKind : uint8_t {
  kText,         // text
  kOutput,       // {{ expr }}
  kIf,           // branches
  kFor,          // for target in expr [if cond] body [else else_body]
  kSet,          // set target = expr
  kSetBlock,     // set target [| expr] body endset (expr: filter chain or null)
  kMacro,        // macro text(params) body
  kFilterBlock,  // filter expr body endfilter
  kWith,         // with assigns body
  kBreak,
  kContinue,
};

// An assignment target: `x`, `a, b` (tuple) or `ns.attr`.
struct Target {
  std::vector<std::string> names;
  std::string attr;  // non-empty: set names[0].attr
  bool tuple = false;
};

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null: required (Undefined when not passed)
};

struct IfBranch {
  ExprPtr cond;  // null: the else branch
  Body body;
};

struct Stmt {
  StmtKind kind;
  int line = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr cond;
  Target target;
  Body body, else_body;
  std::vector<IfBranch> branches;
  std::vector<MacroParam> params;
  std::vector<std::pair<std::string, ExprPtr>> assigns;
  bool uses_varargs = false;  // kMacro: the body reads `varargs` / `kwargs`
  bool uses_kwargs = false;
};

}  // namespace radixserve::jinja
