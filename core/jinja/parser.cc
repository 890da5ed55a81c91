#include "core/jinja/parser.h"

#include <algorithm>

#include "core/jinja/py_string.h"

namespace radixserve::jinja {

namespace {

// Deeper nesting than this (blocks inside blocks, parentheses inside parentheses) is refused, so
// that parsing and rendering cannot exhaust the stack.
constexpr int kMaxNesting = 100;

}  // namespace

Result<Body> ParseTemplate(std::vector<Token> tokens) { return Parser(std::move(tokens)).ParseAll(); }

Result<Body> Parser::ParseAll() {
  Body body;
  RS_RETURN_IF_ERROR(ParseBody(&body, {}));
  if (cur().type != TokenType::kEof) return Fail("unexpected " + Describe(cur()));
  RS_RETURN_IF_ERROR(CheckNames(body, false));
  return body;
}

Status Parser::CheckNames(const Expr* e, bool soft) const {
  if (e == nullptr) return Status::Ok();
  if (!soft && ((e->kind == ExprKind::kFilter && !e->filter) || (e->kind == ExprKind::kTest && !e->test))) {
    return Unsupported(
        e->line, std::string(e->kind == ExprKind::kFilter ? "unknown filter '" : "unknown test '") + e->name + "'");
  }
  soft = soft || e->kind == ExprKind::kCond;
  for (const Expr* child : {e->a.get(), e->b.get(), e->c.get()}) RS_RETURN_IF_ERROR(CheckNames(child, soft));
  for (const ExprPtr& item : e->items) RS_RETURN_IF_ERROR(CheckNames(item.get(), soft));
  for (const Arg& arg : e->args) RS_RETURN_IF_ERROR(CheckNames(arg.value.get(), soft));
  return Status::Ok();
}

Status Parser::CheckNames(const Body& body, bool soft) const {
  for (const StmtPtr& s : body) {
    switch (s->kind) {
      case StmtKind::kIf:
        for (const IfBranch& branch : s->branches) {
          RS_RETURN_IF_ERROR(CheckNames(branch.cond.get(), true));
          RS_RETURN_IF_ERROR(CheckNames(branch.body, true));
        }
        break;
      case StmtKind::kFor:
        RS_RETURN_IF_ERROR(CheckNames(s->expr.get(), soft));
        RS_RETURN_IF_ERROR(CheckNames(s->cond.get(), false));
        RS_RETURN_IF_ERROR(CheckNames(s->body, false));
        RS_RETURN_IF_ERROR(CheckNames(s->else_body, false));
        break;
      case StmtKind::kWith:
        for (const auto& assign : s->assigns) RS_RETURN_IF_ERROR(CheckNames(assign.second.get(), soft));
        RS_RETURN_IF_ERROR(CheckNames(s->body, false));
        break;
      case StmtKind::kMacro:
        for (const MacroParam& param : s->params) RS_RETURN_IF_ERROR(CheckNames(param.default_value.get(), false));
        RS_RETURN_IF_ERROR(CheckNames(s->body, false));
        break;
      case StmtKind::kSetBlock:
      case StmtKind::kFilterBlock:
        RS_RETURN_IF_ERROR(CheckNames(s->expr.get(), false));
        RS_RETURN_IF_ERROR(CheckNames(s->body, false));
        break;
      default:  // text, output, set, break, continue
        RS_RETURN_IF_ERROR(CheckNames(s->expr.get(), soft));
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- tokens

bool Parser::SkipOp(std::string_view op) {
  if (!IsOp(op)) return false;
  next();
  return true;
}

bool Parser::SkipName(std::string_view name) {
  if (!IsName(name)) return false;
  next();
  return true;
}

Status Parser::ExpectOp(std::string_view op) {
  if (!SkipOp(op)) return Fail("expected '" + std::string(op) + "', got " + Describe(cur()));
  return Status::Ok();
}

Status Parser::ExpectName(std::string_view name) {
  if (!SkipName(name)) return Fail("expected '" + std::string(name) + "', got " + Describe(cur()));
  return Status::Ok();
}

Status Parser::Expect(TokenType type, std::string_view what) {
  if (cur().type != type) return Fail("expected " + std::string(what) + ", got " + Describe(cur()));
  next();
  return Status::Ok();
}

std::string Parser::Describe(const Token& t) const {
  switch (t.type) {
    case TokenType::kData:
      return "template data";
    case TokenType::kVarBegin:
      return "'{{'";
    case TokenType::kVarEnd:
      return "end of print statement";
    case TokenType::kBlockBegin:
      return "'{%'";
    case TokenType::kBlockEnd:
      return "end of statement block";
    case TokenType::kString:
      return "string " + PyReprString(t.value);
    case TokenType::kEof:
      return "end of template";
    default:
      return "'" + t.value + "'";
  }
}

Status Parser::Fail(const std::string& message) const {
  return Status::Corrupt("line " + std::to_string(cur().line) + ": syntax error: " + message);
}

Status Parser::Unsupported(int line, const std::string& message) const {
  return Status::Unsupported("line " + std::to_string(line) + ": " + message);
}

ExprPtr Parser::NewExpr(ExprKind kind, int line) const {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  return e;
}

Status Parser::Enter() {
  if (++depth_ > kMaxNesting) {
    return Status::ResourceExhausted("line " + std::to_string(cur().line) + ": template nests deeper than " +
                                     std::to_string(kMaxNesting) + " levels");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- statements

Status Parser::ParseBody(Body* body, std::vector<std::string_view> end_tags) {
  while (cur().type != TokenType::kEof) {
    const Token& t = cur();
    if (t.type == TokenType::kData) {
      auto s = std::make_unique<Stmt>();
      s->kind = StmtKind::kText;
      s->line = t.line;
      s->text = t.value;
      body->push_back(std::move(s));
      next();
    } else if (t.type == TokenType::kVarBegin) {
      auto s = std::make_unique<Stmt>();
      s->kind = StmtKind::kOutput;
      s->line = t.line;
      next();
      RS_ASSIGN_OR_RETURN(s->expr, ParseTuple(true, false));
      RS_RETURN_IF_ERROR(Expect(TokenType::kVarEnd, "end of print statement"));
      body->push_back(std::move(s));
    } else if (t.type == TokenType::kBlockBegin) {
      next();
      if (cur().type == TokenType::kName &&
          std::find(end_tags.begin(), end_tags.end(), cur().value) != end_tags.end()) {
        return Status::Ok();  // the caller consumes the end tag
      }
      RS_RETURN_IF_ERROR(ParseStatement(body));
      RS_RETURN_IF_ERROR(Expect(TokenType::kBlockEnd, "end of statement block"));
    } else {
      return Fail("unexpected " + Describe(t));
    }
  }
  if (!end_tags.empty()) {
    std::string expected;
    for (std::string_view tag : end_tags) expected += (expected.empty() ? "'" : " or '") + std::string(tag) + "'";
    return Fail("unexpected end of template, expected " + expected);
  }
  return Status::Ok();
}

// "%}" body "{% end_tag": leaves the parser on the end tag's name, or past it with drop_end.
Status Parser::ParseBlockBody(Body* body, std::vector<std::string_view> end_tags, bool drop_end) {
  SkipOp(":");
  RS_RETURN_IF_ERROR(Expect(TokenType::kBlockEnd, "end of statement block"));
  RS_RETURN_IF_ERROR(ParseBody(body, std::move(end_tags)));
  if (drop_end) next();
  return Status::Ok();
}

Status Parser::ParseStatement(Body* body) {
  RS_RETURN_IF_ERROR(Enter());
  Leave leave{this};
  if (cur().type != TokenType::kName) return Fail("tag name expected");
  const std::string tag = cur().value;
  const int line = cur().line;
  Result<StmtPtr> stmt = Status::Internal("unset");
  if (tag == "if") {
    stmt = ParseIf();
  } else if (tag == "for") {
    stmt = ParseFor();
  } else if (tag == "set") {
    stmt = ParseSet();
  } else if (tag == "macro") {
    stmt = ParseMacro();
  } else if (tag == "filter") {
    stmt = ParseFilterBlock();
  } else if (tag == "with") {
    stmt = ParseWith();
  } else if (tag == "generation") {
    // transformers' AssistantTracker marks assistant text with {% generation %}: it renders its
    // body unchanged (in a scope of its own, as the call block it compiles to).
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kWith;
    s->line = line;
    next();
    RS_RETURN_IF_ERROR(ParseBlockBody(&s->body, {"endgeneration"}, true));
    stmt = std::move(s);
  } else if (tag == "print") {
    next();
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::kOutput;
    s->line = line;
    RS_ASSIGN_OR_RETURN(s->expr, ParseTuple(true, false));
    stmt = std::move(s);
  } else if (tag == "break" || tag == "continue") {
    if (loop_depth_ == 0) return Fail("'" + tag + "' outside of a loop");
    next();
    auto s = std::make_unique<Stmt>();
    s->kind = tag == "break" ? StmtKind::kBreak : StmtKind::kContinue;
    s->line = line;
    stmt = std::move(s);
  } else if (tag == "include" || tag == "import" || tag == "from" || tag == "extends" || tag == "block" ||
             tag == "call" || tag == "autoescape") {
    return Unsupported(line, "the '" + tag + "' tag is not supported (templates are rendered on their own)");
  } else {
    return Fail("unknown tag '" + tag + "'");
  }
  if (!stmt.ok()) return stmt.status();
  body->push_back(std::move(stmt).value());
  return Status::Ok();
}

Result<StmtPtr> Parser::ParseIf() {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::kIf;
  s->line = cur().line;
  next();  // if
  while (true) {
    IfBranch branch;
    RS_ASSIGN_OR_RETURN(branch.cond, ParseTuple(false, false));
    RS_RETURN_IF_ERROR(ParseBlockBody(&branch.body, {"elif", "else", "endif"}, false));
    s->branches.push_back(std::move(branch));
    const std::string tag = cur().value;
    next();
    if (tag == "elif") continue;
    if (tag == "else") {
      IfBranch otherwise;
      RS_RETURN_IF_ERROR(ParseBlockBody(&otherwise.body, {"endif"}, true));
      s->branches.push_back(std::move(otherwise));
    }
    return s;
  }
}

Result<StmtPtr> Parser::ParseFor() {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::kFor;
  s->line = cur().line;
  next();  // for
  RS_ASSIGN_OR_RETURN(s->target, ParseTarget(false, true, "in"));
  RS_RETURN_IF_ERROR(ExpectName("in"));
  RS_ASSIGN_OR_RETURN(s->expr, ParseTuple(false, false, "recursive"));
  if (SkipName("if")) {
    RS_ASSIGN_OR_RETURN(s->cond, ParseExpression());
  }
  if (IsName("recursive")) return Unsupported(cur().line, "recursive for loops are not supported");
  ++loop_depth_;
  Status st = ParseBlockBody(&s->body, {"endfor", "else"}, false);
  --loop_depth_;
  RS_RETURN_IF_ERROR(st);
  const std::string tag = cur().value;
  next();
  if (tag == "else") RS_RETURN_IF_ERROR(ParseBlockBody(&s->else_body, {"endfor"}, true));
  return s;
}

Result<Target> Parser::ParseTarget(bool allow_attr, bool allow_tuple, std::string_view end_name) {
  Target target;
  if (allow_attr && cur().type == TokenType::kName && look().type == TokenType::kOperator && look().value == ".") {
    target.names.push_back(cur().value);
    next();
    next();
    if (cur().type != TokenType::kName) return Fail("expected an attribute name, got " + Describe(cur()));
    target.attr = cur().value;
    next();
    return target;
  }
  const bool parens = allow_tuple && SkipOp("(");
  while (true) {
    if (cur().type != TokenType::kName) return Fail("can't assign to " + Describe(cur()));
    if (IsName("true") || IsName("false") || IsName("none") || IsName("True") || IsName("False") || IsName("None")) {
      return Fail("can't assign to " + Describe(cur()));
    }
    target.names.push_back(cur().value);
    next();
    if (!allow_tuple || !IsOp(",")) break;
    target.tuple = true;
    next();
    if (IsOp(")") || cur().type == TokenType::kBlockEnd || (!end_name.empty() && IsName(end_name)) || IsOp("=")) break;
  }
  if (parens) {
    target.tuple = true;
    RS_RETURN_IF_ERROR(ExpectOp(")"));
  }
  return target;
}

Result<StmtPtr> Parser::ParseSet() {
  auto s = std::make_unique<Stmt>();
  s->line = cur().line;
  next();  // set
  RS_ASSIGN_OR_RETURN(s->target, ParseTarget(true, true, ""));
  if (SkipOp("=")) {
    s->kind = StmtKind::kSet;
    RS_ASSIGN_OR_RETURN(s->expr, ParseTuple(true, false));
    return s;
  }
  s->kind = StmtKind::kSetBlock;
  if (IsOp("|")) {
    RS_ASSIGN_OR_RETURN(s->expr, ParseFilter(nullptr, false));
  }
  RS_RETURN_IF_ERROR(ParseBlockBody(&s->body, {"endset"}, true));
  return s;
}

Result<StmtPtr> Parser::ParseMacro() {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::kMacro;
  s->line = cur().line;
  next();  // macro
  if (cur().type != TokenType::kName) return Fail("expected a macro name, got " + Describe(cur()));
  s->text = cur().value;
  next();
  RS_RETURN_IF_ERROR(ExpectOp("("));
  while (!IsOp(")")) {
    if (!s->params.empty()) RS_RETURN_IF_ERROR(ExpectOp(","));
    if (cur().type != TokenType::kName) return Fail("expected a parameter name, got " + Describe(cur()));
    MacroParam param;
    param.name = cur().value;
    next();
    if (SkipOp("=")) {
      RS_ASSIGN_OR_RETURN(param.default_value, ParseExpression());
    } else if (!s->params.empty() && s->params.back().default_value) {
      return Fail("non-default argument follows default argument");
    }
    s->params.push_back(std::move(param));
  }
  next();  // )
  macros_.push_back(s.get());
  const int saved_loops = loop_depth_;
  loop_depth_ = 0;  // a macro body is a function: no break out of an enclosing loop
  Status st = ParseBlockBody(&s->body, {"endmacro"}, true);
  loop_depth_ = saved_loops;
  macros_.pop_back();
  RS_RETURN_IF_ERROR(st);
  return s;
}

Result<StmtPtr> Parser::ParseFilterBlock() {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::kFilterBlock;
  s->line = cur().line;
  next();  // filter
  RS_ASSIGN_OR_RETURN(s->expr, ParseFilter(nullptr, true));
  RS_RETURN_IF_ERROR(ParseBlockBody(&s->body, {"endfilter"}, true));
  return s;
}

Result<StmtPtr> Parser::ParseWith() {
  auto s = std::make_unique<Stmt>();
  s->kind = StmtKind::kWith;
  s->line = cur().line;
  next();  // with
  while (cur().type != TokenType::kBlockEnd) {
    if (!s->assigns.empty()) RS_RETURN_IF_ERROR(ExpectOp(","));
    if (cur().type != TokenType::kName) return Fail("can't assign to " + Describe(cur()));
    std::string name = cur().value;
    next();
    RS_RETURN_IF_ERROR(ExpectOp("="));
    RS_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
    s->assigns.emplace_back(std::move(name), std::move(value));
  }
  RS_RETURN_IF_ERROR(ParseBlockBody(&s->body, {"endwith"}, true));
  return s;
}

}  // namespace radixserve::jinja
