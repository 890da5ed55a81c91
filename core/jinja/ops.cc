#include "core/jinja/ops.h"

#include <cmath>
#include <cstdio>

#include "core/jinja/errors.h"
#include "core/jinja/format.h"
#include "core/jinja/py_string.h"

namespace radixserve::jinja {

namespace {

bool IsIntLike(const Value& v) { return v.is_int() || v.is_bool(); }

Status Unsupported(std::string_view op, const Value& a, const Value& b) {
  return TypeError("unsupported operand type(s) for " + std::string(op) + ": '" + a.TypeName() + "' and '" +
                   b.TypeName() + "'");
}

Status TooLarge(size_t max_bytes) {
  return LimitError("a string or list would exceed the output limit of " + std::to_string(max_bytes) + " bytes");
}

Status Overflow() { return PyError("OverflowError", "integer result does not fit in 64 bits"); }

Result<Value> Repeat(const Value& seq, int64_t n, size_t max_bytes) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    const size_t size = seq.str().size();
    if (size != 0 && static_cast<uint64_t>(n) > max_bytes / size) return TooLarge(max_bytes);
    std::string out;
    out.reserve(size * n);
    for (int64_t i = 0; i < n; ++i) out += seq.str();
    return seq.is_markup() ? Value::Markup(std::move(out)) : Value::Str(std::move(out));
  }
  const size_t size = seq.items().size();
  if (size != 0 && static_cast<uint64_t>(n) > max_bytes / size) return TooLarge(max_bytes);
  std::vector<Value> out;
  out.reserve(size * n);
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.items().begin(), seq.items().end());
  return seq.list().kind == ListKind::kTuple ? Value::Tuple(std::move(out)) : Value::List(std::move(out));
}

Result<Value> Add(const Value& a, const Value& b, size_t max_bytes) {
  if (a.is_string() && b.is_string()) {
    if (a.str().size() + b.str().size() > max_bytes) return TooLarge(max_bytes);
    if (!a.is_markup() && !b.is_markup()) return Value::Str(a.str() + b.str());
    // Markup escapes the plain side (jinja2's |safe result meeting a str).
    const std::string left = a.is_markup() ? a.str() : HtmlEscape(a.str());
    const std::string right = b.is_markup() ? b.str() : HtmlEscape(b.str());
    return Value::Markup(left + right);
  }
  if (a.is_list() && b.is_list()) {
    const bool a_tuple = a.list().kind == ListKind::kTuple, b_tuple = b.list().kind == ListKind::kTuple;
    if (a_tuple == b_tuple && a.list().kind <= ListKind::kTuple && b.list().kind <= ListKind::kTuple) {
      if (a.items().size() + b.items().size() > max_bytes) return TooLarge(max_bytes);
      std::vector<Value> out = a.items();
      out.insert(out.end(), b.items().begin(), b.items().end());
      return a_tuple ? Value::Tuple(std::move(out)) : Value::List(std::move(out));
    }
  }
  if ((a.is_string() && !a.is_markup()) || (a.is_list() && a.list().kind <= ListKind::kTuple)) {
    return TypeError("can only concatenate " + a.TypeName() + " (not \"" + b.TypeName() + "\") to " + a.TypeName());
  }
  return Unsupported("+", a, b);
}

Result<Value> IntArith(char op, int64_t x, int64_t y) {
  int64_t r = 0;
  switch (op) {
    case '+':
      if (__builtin_add_overflow(x, y, &r)) return Overflow();
      return Value::Int(r);
    case '-':
      if (__builtin_sub_overflow(x, y, &r)) return Overflow();
      return Value::Int(r);
    case '*':
      if (__builtin_mul_overflow(x, y, &r)) return Overflow();
      return Value::Int(r);
    case 'f':  // floor division
    case '%':
      if (y == 0)
        return PyError("ZeroDivisionError",
                       op == '%' ? "integer modulo by zero" : "integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) return op == '%' ? Value::Int(0) : Result<Value>(Overflow());
      if (op == '%') {
        r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return Value::Int(r);
      }
      r = x / y;
      if (x % y != 0 && ((x < 0) != (y < 0))) --r;
      return Value::Int(r);
    case 'p': {  // power with a non-negative exponent
      int64_t result = 1, base = x;
      for (int64_t e = y; e > 0; e >>= 1) {
        if ((e & 1) && __builtin_mul_overflow(result, base, &result)) return Overflow();
        if (e > 1 && __builtin_mul_overflow(base, base, &base)) return Overflow();
      }
      return Value::Int(result);
    }
  }
  return Status::Internal("bad integer operator");
}

Result<Value> FloatArith(char op, double x, double y) {
  switch (op) {
    case '+':
      return Value::Float(x + y);
    case '-':
      return Value::Float(x - y);
    case '*':
      return Value::Float(x * y);
    case '/':
      if (y == 0) return PyError("ZeroDivisionError", "division by zero");
      return Value::Float(x / y);
    case 'p':
      if (x == 0 && y < 0) return PyError("ZeroDivisionError", "0.0 cannot be raised to a negative power");
      return Value::Float(std::pow(x, y));
    case 'f':
    case '%': {  // Python's float floor division and modulo
      if (y == 0) return PyError("ZeroDivisionError", op == '%' ? "float modulo" : "float floor division by zero");
      double mod = std::fmod(x, y);
      double div = (x - mod) / y;
      if (mod != 0) {
        if ((y < 0) != (mod < 0)) {
          mod += y;
          div -= 1.0;
        }
      } else {
        mod = std::copysign(0.0, y);
      }
      if (op == '%') return Value::Float(mod);
      double floordiv = std::copysign(0.0, x / y);
      if (div != 0) {
        floordiv = std::floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
      }
      return Value::Float(floordiv);
    }
  }
  return Status::Internal("bad float operator");
}

}  // namespace

Result<Value> BinaryOp(std::string_view op, const Value& a, const Value& b, size_t max_bytes) {
  if (a.is_undefined()) return UndefinedError(a.str());
  if (b.is_undefined()) return UndefinedError(b.str());
  if (op == "+" && !(a.is_number() && b.is_number())) return Add(a, b, max_bytes);
  if (op == "*" && !(a.is_number() && b.is_number())) {
    auto repeatable = [](const Value& v) {
      return v.is_string() || (v.is_list() && v.list().kind <= ListKind::kTuple);
    };
    if (repeatable(a) && IsIntLike(b)) return Repeat(a, b.as_int(), max_bytes);
    if (repeatable(b) && IsIntLike(a)) return Repeat(b, a.as_int(), max_bytes);
    if (repeatable(a) || repeatable(b)) {
      const Value& other = repeatable(a) ? b : a;
      return TypeError("can't multiply sequence by non-int of type '" + other.TypeName() + "'");
    }
    return Unsupported("*", a, b);
  }
  if (op == "%" && a.is_string()) return PercentFormat(a.str(), b, max_bytes);
  if (!a.is_number() || !b.is_number()) return Unsupported(op, a, b);
  const char code = op == "//" ? 'f' : op == "**" ? 'p' : op[0];
  const bool ints = IsIntLike(a) && IsIntLike(b);
  if (ints && code != '/' && !(code == 'p' && b.as_int() < 0)) return IntArith(code, a.as_int(), b.as_int());
  return FloatArith(code, a.as_double(), b.as_double());
}

Result<bool> PyLess(const Value& a, const Value& b) {
  if (a.is_undefined()) return UndefinedError(a.str());
  if (b.is_undefined()) return UndefinedError(b.str());
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.str() < b.str();  // UTF-8 byte order is code point order
  if (a.is_list() && b.is_list() && a.list().kind == b.list().kind && a.list().kind <= ListKind::kTuple) {
    const auto& x = a.items();
    const auto& y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (PyEquals(x[i], y[i])) continue;
      return PyLess(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  return TypeError("'<' not supported between instances of '" + a.TypeName() + "' and '" + b.TypeName() + "'");
}

Result<bool> CompareOp(std::string_view op, const Value& a, const Value& b) {
  if (op == "==") return PyEquals(a, b);
  if (op == "!=") return !PyEquals(a, b);
  if (op == "in") return Contains(b, a);
  if (op == "notin") {
    RS_ASSIGN_OR_RETURN(bool in, Contains(b, a));
    return !in;
  }
  const bool gt = op == ">" || op == ">=";
  const bool or_equal = op == "<=" || op == ">=";
  Result<bool> less = gt ? PyLess(b, a) : PyLess(a, b);
  if (!less.ok()) {
    // Report the operator that was written, as Python does.
    const std::string m = less.status().message();
    if (m.rfind("TypeError: '<'", 0) == 0) {
      return TypeError(std::string("'") + std::string(op) + "' not supported between instances of '" + a.TypeName() +
                       "' and '" + b.TypeName() + "'");
    }
    return less.status();
  }
  return *less || (or_equal && PyEquals(a, b));
}

Status CheckHashable(const Value& v) {
  const bool hashable_list = v.is_list() && (v.list().kind == ListKind::kTuple || v.list().kind == ListKind::kRange ||
                                             v.list().kind == ListKind::kGenerator);
  if (v.is_dict() || (v.is_list() && !hashable_list)) return TypeError("unhashable type: '" + v.TypeName() + "'");
  if (v.is_list() && v.list().kind == ListKind::kTuple) {
    for (const Value& item : v.items()) RS_RETURN_IF_ERROR(CheckHashable(item));
  }
  return Status::Ok();
}

Result<bool> Contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined:
      return false;
    case Value::Kind::kString:
      if (!item.is_string()) {
        return TypeError("'in <string>' requires string as left operand, not " + item.TypeName());
      }
      return container.str().find(item.str()) != std::string::npos;
    case Value::Kind::kList: {
      // A generator is used up to the item found, like Python's `in` on an iterator.
      const ListObj& list = container.list();
      const bool generator = list.kind == ListKind::kGenerator;
      for (size_t i = generator ? list.consumed : 0; i < list.items.size(); ++i) {
        if (!PyEquals(list.items[i], item)) continue;
        if (generator) list.consumed = i + 1;
        return true;
      }
      if (generator) list.consumed = list.items.size();
      RS_RETURN_IF_ERROR(list.error);
      return false;
    }
    case Value::Kind::kDict:
      RS_RETURN_IF_ERROR(CheckHashable(item));
      return container.dict().Find(item) != nullptr;
    default:
      return TypeError("argument of type '" + container.TypeName() + "' is not iterable");
  }
}

Result<int64_t> PyLen(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return int64_t{0};
    case Value::Kind::kString:
      return static_cast<int64_t>(CodepointCount(v.str()));
    case Value::Kind::kList:
      if (v.list().kind == ListKind::kGenerator) break;
      return static_cast<int64_t>(v.items().size());
    case Value::Kind::kDict:
      return static_cast<int64_t>(v.dict().size());
    default:
      break;
  }
  return TypeError("object of type '" + v.TypeName() + "' has no len()");
}

Result<std::vector<Value>> PyIter(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
      return std::vector<Value>();
    case Value::Kind::kString: {
      std::vector<Value> out;
      for (std::string_view cp : Codepoints(v.str())) out.push_back(Value::Str(std::string(cp)));
      return out;
    }
    case Value::Kind::kList: {
      const ListObj& list = v.list();
      RS_RETURN_IF_ERROR(list.error);
      if (list.kind != ListKind::kGenerator) return list.items;
      std::vector<Value> rest(list.items.begin() + static_cast<std::ptrdiff_t>(list.consumed), list.items.end());
      list.consumed = list.items.size();  // iterating a generator uses it up
      return rest;
    }
    case Value::Kind::kDict: {
      std::vector<Value> out;
      out.reserve(v.dict().size());
      for (const auto& entry : v.dict().entries()) out.push_back(entry.first);
      return out;
    }
    default:
      return TypeError(std::string("'") + v.TypeName() + "' object is not iterable");
  }
}

}  // namespace radixserve::jinja
