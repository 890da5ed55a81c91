// Expression half of the Parser (see parser.h for the precedence table).
#include "core/jinja/parser.h"

namespace radixserve::jinja {

Result<ExprPtr> Parser::ParseExpression(bool with_condexpr) { return with_condexpr ? ParseCondExpr() : ParseOr(); }

// Comma-separated expressions: one is itself, several (or a trailing comma) a tuple.
Result<ExprPtr> Parser::ParseTuple(bool with_condexpr, bool explicit_parens, std::string_view end_name) {
  const int line = cur().line;
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) RS_RETURN_IF_ERROR(ExpectOp(","));
    const bool at_end = cur().type == TokenType::kVarEnd || cur().type == TokenType::kBlockEnd || IsOp(")") ||
                        (!end_name.empty() && IsName(end_name));
    if (at_end) break;
    RS_ASSIGN_OR_RETURN(ExprPtr e, ParseExpression(with_condexpr));
    items.push_back(std::move(e));
    if (!IsOp(",")) break;
    is_tuple = true;
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parens) return Fail("expected an expression, got " + Describe(cur()));
  }
  ExprPtr t = NewExpr(ExprKind::kTuple, line);
  t->items = std::move(items);
  return t;
}

Result<ExprPtr> Parser::ParseCondExpr() {
  RS_RETURN_IF_ERROR(Enter());
  Leave leave{this};
  const int line = cur().line;
  RS_ASSIGN_OR_RETURN(ExprPtr expr, ParseOr());
  while (SkipName("if")) {
    ExprPtr cond = NewExpr(ExprKind::kCond, line);
    RS_ASSIGN_OR_RETURN(cond->b, ParseOr());
    if (SkipName("else")) {
      RS_ASSIGN_OR_RETURN(cond->c, ParseCondExpr());
    }
    cond->a = std::move(expr);
    expr = std::move(cond);
  }
  return expr;
}

Result<ExprPtr> Parser::ParseOr() {
  RS_ASSIGN_OR_RETURN(ExprPtr left, ParseAnd());
  while (IsName("or")) {
    ExprPtr e = NewExpr(ExprKind::kOr, cur().line);
    next();
    RS_ASSIGN_OR_RETURN(e->b, ParseAnd());
    e->a = std::move(left);
    left = std::move(e);
  }
  return left;
}

Result<ExprPtr> Parser::ParseAnd() {
  RS_ASSIGN_OR_RETURN(ExprPtr left, ParseNot());
  while (IsName("and")) {
    ExprPtr e = NewExpr(ExprKind::kAnd, cur().line);
    next();
    RS_ASSIGN_OR_RETURN(e->b, ParseNot());
    e->a = std::move(left);
    left = std::move(e);
  }
  return left;
}

Result<ExprPtr> Parser::ParseNot() {
  if (IsName("not")) {
    RS_RETURN_IF_ERROR(Enter());
    Leave leave{this};
    ExprPtr e = NewExpr(ExprKind::kNot, cur().line);
    next();
    RS_ASSIGN_OR_RETURN(e->a, ParseNot());
    return e;
  }
  return ParseCompare();
}

Result<ExprPtr> Parser::ParseCompare() {
  const int line = cur().line;
  RS_ASSIGN_OR_RETURN(ExprPtr expr, ParseMath1());
  ExprPtr cmp;
  while (true) {
    std::string op;
    if (cur().type == TokenType::kOperator && (cur().value == "==" || cur().value == "!=" || cur().value == "<" ||
                                               cur().value == "<=" || cur().value == ">" || cur().value == ">=")) {
      op = cur().value;
      next();
    } else if (IsName("in")) {
      op = "in";
      next();
    } else if (IsName("not") && look().type == TokenType::kName && look().value == "in") {
      op = "notin";
      next();
      next();
    } else {
      break;
    }
    if (!cmp) {
      cmp = NewExpr(ExprKind::kCompare, line);
      cmp->a = std::move(expr);
    }
    cmp->ops.push_back(op);
    RS_ASSIGN_OR_RETURN(ExprPtr operand, ParseMath1());
    cmp->items.push_back(std::move(operand));
  }
  return cmp ? std::move(cmp) : std::move(expr);
}

Result<ExprPtr> Parser::ParseMath1() {
  RS_ASSIGN_OR_RETURN(ExprPtr left, ParseConcat());
  while (IsOp("+") || IsOp("-")) {
    ExprPtr e = NewExpr(ExprKind::kBinary, cur().line);
    e->name = cur().value;
    next();
    RS_ASSIGN_OR_RETURN(e->b, ParseConcat());
    e->a = std::move(left);
    left = std::move(e);
  }
  return left;
}

Result<ExprPtr> Parser::ParseConcat() {
  const int line = cur().line;
  RS_ASSIGN_OR_RETURN(ExprPtr first, ParseMath2());
  if (!IsOp("~")) return first;
  ExprPtr e = NewExpr(ExprKind::kConcat, line);
  e->items.push_back(std::move(first));
  while (SkipOp("~")) {
    RS_ASSIGN_OR_RETURN(ExprPtr item, ParseMath2());
    e->items.push_back(std::move(item));
  }
  return e;
}

Result<ExprPtr> Parser::ParseMath2() {
  RS_ASSIGN_OR_RETURN(ExprPtr left, ParsePow());
  while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
    ExprPtr e = NewExpr(ExprKind::kBinary, cur().line);
    e->name = cur().value;
    next();
    RS_ASSIGN_OR_RETURN(e->b, ParsePow());
    e->a = std::move(left);
    left = std::move(e);
  }
  return left;
}

Result<ExprPtr> Parser::ParsePow() {
  RS_ASSIGN_OR_RETURN(ExprPtr left, ParseUnary(true));
  while (IsOp("**")) {
    ExprPtr e = NewExpr(ExprKind::kBinary, cur().line);
    e->name = "**";
    next();
    RS_ASSIGN_OR_RETURN(e->b, ParseUnary(true));
    e->a = std::move(left);
    left = std::move(e);
  }
  return left;
}

Result<ExprPtr> Parser::ParseUnary(bool with_filter) {
  RS_RETURN_IF_ERROR(Enter());
  Leave leave{this};
  ExprPtr node;
  if (IsOp("-") || IsOp("+")) {
    node = NewExpr(IsOp("-") ? ExprKind::kNeg : ExprKind::kPos, cur().line);
    next();
    RS_ASSIGN_OR_RETURN(node->a, ParseUnary(false));
  } else {
    RS_ASSIGN_OR_RETURN(node, ParsePrimary());
  }
  RS_ASSIGN_OR_RETURN(node, ParsePostfix(std::move(node)));
  if (with_filter) {
    RS_ASSIGN_OR_RETURN(node, ParseFilterExpr(std::move(node)));
  }
  return node;
}

Result<ExprPtr> Parser::ParsePrimary() {
  const Token& t = cur();
  ExprPtr node;
  switch (t.type) {
    case TokenType::kName:
      node = NewExpr(ExprKind::kLiteral, t.line);
      if (t.value == "true" || t.value == "True" || t.value == "false" || t.value == "False") {
        node->literal = Value::Bool(t.value == "true" || t.value == "True");
      } else if (t.value == "none" || t.value == "None") {
        node->literal = Value::None();
      } else {
        node->kind = ExprKind::kName;
        node->name = t.value;
        for (Stmt* macro : macros_) {  // a macro accepts extra arguments when it reads these
          macro->uses_varargs = macro->uses_varargs || t.value == "varargs";
          macro->uses_kwargs = macro->uses_kwargs || t.value == "kwargs";
        }
      }
      next();
      return node;
    case TokenType::kString: {  // adjacent literals join: "a" "b" == "ab"
      std::string text;
      const int line = t.line;
      while (cur().type == TokenType::kString) {
        text += cur().value;
        next();
      }
      node = NewExpr(ExprKind::kLiteral, line);
      node->literal = Value::Str(std::move(text));
      return node;
    }
    case TokenType::kInteger:
    case TokenType::kFloat:
      node = NewExpr(ExprKind::kLiteral, t.line);
      node->literal = t.type == TokenType::kInteger ? Value::Int(t.int_value) : Value::Float(t.float_value);
      next();
      return node;
    case TokenType::kOperator:
      if (t.value == "(") {
        next();
        RS_ASSIGN_OR_RETURN(node, ParseTuple(true, true));
        RS_RETURN_IF_ERROR(ExpectOp(")"));
        return node;
      }
      if (t.value == "[") return ParseList();
      if (t.value == "{") return ParseDict();
      break;
    default:
      break;
  }
  return Fail("unexpected " + Describe(t));
}

Result<ExprPtr> Parser::ParseList() {
  ExprPtr e = NewExpr(ExprKind::kList, cur().line);
  next();  // [
  while (!IsOp("]")) {
    if (!e->items.empty()) RS_RETURN_IF_ERROR(ExpectOp(","));
    if (IsOp("]")) break;
    RS_ASSIGN_OR_RETURN(ExprPtr item, ParseExpression());
    e->items.push_back(std::move(item));
  }
  next();  // ]
  return e;
}

Result<ExprPtr> Parser::ParseDict() {
  ExprPtr e = NewExpr(ExprKind::kDict, cur().line);
  next();  // {
  while (!IsOp("}")) {
    if (!e->items.empty()) RS_RETURN_IF_ERROR(ExpectOp(","));
    if (IsOp("}")) break;
    RS_ASSIGN_OR_RETURN(ExprPtr key, ParseExpression());
    RS_RETURN_IF_ERROR(ExpectOp(":"));
    RS_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
    e->items.push_back(std::move(key));
    e->items.push_back(std::move(value));
  }
  next();  // }
  return e;
}

Result<ExprPtr> Parser::ParsePostfix(ExprPtr node) {
  while (true) {
    if (IsOp(".") || IsOp("[")) {
      RS_ASSIGN_OR_RETURN(node, ParseSubscript(std::move(node)));
    } else if (IsOp("(")) {
      ExprPtr call = NewExpr(ExprKind::kCall, cur().line);
      RS_RETURN_IF_ERROR(ParseCallArgs(&call->args));
      call->a = std::move(node);
      node = std::move(call);
    } else {
      return node;
    }
  }
}

Result<ExprPtr> Parser::ParseFilterExpr(ExprPtr node) {
  while (true) {
    if (IsOp("|")) {
      RS_ASSIGN_OR_RETURN(node, ParseFilter(std::move(node), false));
    } else if (IsName("is")) {
      RS_ASSIGN_OR_RETURN(node, ParseTest(std::move(node)));
    } else if (IsOp("(")) {
      ExprPtr call = NewExpr(ExprKind::kCall, cur().line);
      RS_RETURN_IF_ERROR(ParseCallArgs(&call->args));
      call->a = std::move(node);
      node = std::move(call);
    } else {
      return node;
    }
  }
}

Result<ExprPtr> Parser::ParseSubscript(ExprPtr node) {
  const int line = cur().line;
  if (SkipOp(".")) {
    if (cur().type == TokenType::kName) {
      ExprPtr e = NewExpr(ExprKind::kGetAttr, line);
      e->name = cur().value;
      e->a = std::move(node);
      next();
      return e;
    }
    if (cur().type != TokenType::kInteger) return Fail("expected name or number, got " + Describe(cur()));
    ExprPtr e = NewExpr(ExprKind::kGetItem, line);
    e->b = NewExpr(ExprKind::kLiteral, line);
    e->b->literal = Value::Int(cur().int_value);
    e->a = std::move(node);
    next();
    return e;
  }
  next();  // [
  ExprPtr e = NewExpr(ExprKind::kGetItem, line);
  e->a = std::move(node);
  // An index, or a slice [start:stop:step] with any part left out.
  ExprPtr parts[3];
  bool slice = false;
  if (!IsOp(":")) {
    RS_ASSIGN_OR_RETURN(parts[0], ParseExpression());
  }
  if (SkipOp(":")) {
    slice = true;
    if (!IsOp(":") && !IsOp("]")) {
      RS_ASSIGN_OR_RETURN(parts[1], ParseExpression());
    }
    if (SkipOp(":") && !IsOp("]")) {
      RS_ASSIGN_OR_RETURN(parts[2], ParseExpression());
    }
  }
  if (IsOp(",")) return Unsupported(cur().line, "tuple subscripts (x[a, b]) are not supported");
  RS_RETURN_IF_ERROR(ExpectOp("]"));
  if (slice) {
    e->kind = ExprKind::kSlice;
    e->b = std::move(parts[0]);
    e->c = std::move(parts[1]);
    e->items.push_back(std::move(parts[2]));
  } else {
    e->b = std::move(parts[0]);
  }
  return e;
}

Status Parser::ParseCallArgs(std::vector<Arg>* args) {
  RS_RETURN_IF_ERROR(ExpectOp("("));
  bool keyword_seen = false;
  while (!IsOp(")")) {
    if (!args->empty()) {
      RS_RETURN_IF_ERROR(ExpectOp(","));
      if (IsOp(")")) break;  // trailing comma
    }
    if (IsOp("*") || IsOp("**")) return Unsupported(cur().line, "*args and **kwargs in calls are not supported");
    Arg arg;
    if (cur().type == TokenType::kName && look().type == TokenType::kOperator && look().value == "=") {
      arg.name = cur().value;
      next();
      next();
      keyword_seen = true;
    } else if (keyword_seen) {
      return Fail("positional argument follows keyword argument");
    }
    RS_ASSIGN_OR_RETURN(arg.value, ParseExpression());
    args->push_back(std::move(arg));
  }
  next();  // )
  return Status::Ok();
}

// `|name[(args)]`, repeated; start_inline: the first filter has no leading pipe.
Result<ExprPtr> Parser::ParseFilter(ExprPtr node, bool start_inline) {
  while (IsOp("|") || start_inline) {
    if (!start_inline) next();
    start_inline = false;
    if (cur().type != TokenType::kName) return Fail("expected a filter name, got " + Describe(cur()));
    ExprPtr e = NewExpr(ExprKind::kFilter, cur().line);
    e->name = cur().value;
    next();
    while (SkipOp(".")) {
      if (cur().type != TokenType::kName) return Fail("expected a filter name, got " + Describe(cur()));
      e->name += "." + cur().value;
      next();
    }
    e->filter = FindFilter(e->name);  // null: unknown, see CheckNames
    if (IsOp("(")) RS_RETURN_IF_ERROR(ParseCallArgs(&e->args));
    e->a = std::move(node);
    node = std::move(e);
  }
  return node;
}

Result<ExprPtr> Parser::ParseTest(ExprPtr node) {
  const int line = cur().line;
  next();  // is
  const bool negated = SkipName("not");
  if (cur().type != TokenType::kName) return Fail("expected a test name, got " + Describe(cur()));
  ExprPtr e = NewExpr(ExprKind::kTest, line);
  e->name = cur().value;
  next();
  e->test = FindTest(e->name);  // null: unknown, see CheckNames
  const TokenType t = cur().type;
  if (IsOp("(")) {
    RS_RETURN_IF_ERROR(ParseCallArgs(&e->args));
  } else if ((t == TokenType::kName || t == TokenType::kString || t == TokenType::kInteger || t == TokenType::kFloat ||
              IsOp("[") || IsOp("{")) &&
             !IsName("else") && !IsName("or") && !IsName("and")) {
    // One argument without parentheses: `x is divisibleby 3`, `x is sameas none`.
    if (IsName("is")) return Fail("you cannot chain multiple tests with is");
    Arg arg;
    RS_ASSIGN_OR_RETURN(arg.value, ParsePrimary());
    RS_ASSIGN_OR_RETURN(arg.value, ParsePostfix(std::move(arg.value)));
    e->args.push_back(std::move(arg));
  }
  e->a = std::move(node);
  if (!negated) return e;
  ExprPtr n = NewExpr(ExprKind::kNot, line);
  n->a = std::move(e);
  return n;
}

}  // namespace radixserve::jinja
