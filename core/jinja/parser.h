// Parser: tokens -> statement tree, following jinja2's grammar. Internal to core/jinja.
//
// Expression precedence, loosest first (as jinja2's parser, not Python's):
//   a if c else b | or | and | not | comparisons (== != < <= > >= in, not in; chained)
//   | + - | ~ | * / // % | ** | unary - + | postfix: .x [i] [a:b:c] (args), filters |f and
//   tests `is [not] t` (so `a + b | f` is `a + (b | f)` and `not x is t` is `not (x is t)`).
// Statements: if/elif/else, for (with `if` filter, else, loop.*), set (plain, tuple, ns.attr,
// block), macro, filter blocks, with, print, break, continue, and transformers' {% generation %}
// (renders its body). include/import/extends/block/call and recursive loops are refused
// (kUnsupported), as are unknown filters and tests, except inside an if or inline if, where jinja2
// too fails only if they run.
//
// A Parser is used once, from one thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/jinja/ast.h"
#include "core/jinja/lexer.h"
#include "core/util/status.h"

namespace radixserve::jinja {

// Parses a whole template.
Result<Body> ParseTemplate(std::vector<Token> tokens);

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}
  Result<Body> ParseAll();

 private:
  // Statements (parser.cc).
  Status ParseBody(Body* body, std::vector<std::string_view> end_tags);
  Status ParseStatement(Body* body);
  Status ParseBlockBody(Body* body, std::vector<std::string_view> end_tags, bool drop_end);
  Result<StmtPtr> ParseIf();
  Result<StmtPtr> ParseFor();
  Result<StmtPtr> ParseSet();
  Result<StmtPtr> ParseMacro();
  Result<StmtPtr> ParseFilterBlock();
  Result<StmtPtr> ParseWith();
  Result<Target> ParseTarget(bool allow_attr, bool allow_tuple, std::string_view end_name);
  // Unknown filters and tests fail the parse, except where jinja2 only fails when they run: in an
  // if statement or inline if of the same scope ("soft"; loop, macro, block-set, filter and with
  // bodies start a new scope).
  Status CheckNames(const Body& body, bool soft) const;
  Status CheckNames(const Expr* e, bool soft) const;

  // Expressions (parse_expr.cc).
  Result<ExprPtr> ParseExpression(bool with_condexpr = true);
  Result<ExprPtr> ParseTuple(bool with_condexpr, bool explicit_parens, std::string_view end_name = {});
  Result<ExprPtr> ParseCondExpr();
  Result<ExprPtr> ParseOr();
  Result<ExprPtr> ParseAnd();
  Result<ExprPtr> ParseNot();
  Result<ExprPtr> ParseCompare();
  Result<ExprPtr> ParseMath1();
  Result<ExprPtr> ParseConcat();
  Result<ExprPtr> ParseMath2();
  Result<ExprPtr> ParsePow();
  Result<ExprPtr> ParseUnary(bool with_filter);
  Result<ExprPtr> ParsePrimary();
  Result<ExprPtr> ParsePostfix(ExprPtr node);
  Result<ExprPtr> ParseFilterExpr(ExprPtr node);
  Result<ExprPtr> ParseSubscript(ExprPtr node);
  Result<ExprPtr> ParseFilter(ExprPtr node, bool start_inline);
  Result<ExprPtr> ParseTest(ExprPtr node);
  Status ParseCallArgs(std::vector<Arg>* args);
  Result<ExprPtr> ParseList();
  Result<ExprPtr> ParseDict();

  // Tokens.
  const Token& cur() const { return t_[i_]; }
  const Token& look() const { return t_[i_ + 1 < t_.size() ? i_ + 1 : i_]; }
  void next() {
    if (i_ + 1 < t_.size()) ++i_;
  }
  bool IsOp(std::string_view op) const { return cur().type == TokenType::kOperator && cur().value == op; }
  bool IsName(std::string_view name) const { return cur().type == TokenType::kName && cur().value == name; }
  bool SkipOp(std::string_view op);
  bool SkipName(std::string_view name);
  Status ExpectOp(std::string_view op);
  Status ExpectName(std::string_view name);
  Status Expect(TokenType type, std::string_view what);
  std::string Describe(const Token& t) const;
  Status Fail(const std::string& message) const;  // syntax error at the current line
  Status Unsupported(int line, const std::string& message) const;
  ExprPtr NewExpr(ExprKind kind, int line) const;

  // Nesting guard: statements and expressions may nest at most kMaxNesting deep.
  Status Enter();
  struct Leave {
    Parser* p;
    ~Leave() { --p->depth_; }
  };

  std::vector<Token> t_;
  size_t i_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;         // for loops around the current point (break/continue)
  std::vector<Stmt*> macros_;  // macros being parsed (their varargs/kwargs use)
};

}  // namespace radixserve::jinja
