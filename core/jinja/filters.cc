// Filters on single values (strings, numbers, tojson), and the filter table.
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/jinja/builtins.h"
#include "core/jinja/errors.h"
#include "core/jinja/format.h"
#include "core/jinja/json.h"
#include "core/jinja/ops.h"
#include "core/jinja/py_string.h"
#include "core/jinja/renderer.h"

namespace radixserve::jinja {

namespace {

// String filters keep the markup bit of a |safe input, as markupsafe's str methods do.
Value SameKind(const Value& input, std::string text) {
  return input.is_markup() ? Value::Markup(std::move(text)) : Value::Str(std::move(text));
}

// Python's float(str): optional sign, digits with underscores, ".", exponent, inf/nan.
bool ParsePyFloat(std::string_view text, double* out) {
  std::string s;
  for (char c : PyStrip(text, std::nullopt, true, true)) {
    if (c != '_') s.push_back(c);
  }
  if (s.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && s.find_first_of("xXpP") == std::string::npos;
}

// Python's " " * width for an indent given as a number (a string indent is used as it is).
Result<std::string> Indention(Renderer& r, const Value& width) {
  if (width.is_string()) return width.str();
  RS_ASSIGN_OR_RETURN(const int64_t n, IntArg(width));
  RS_RETURN_IF_ERROR(r.CheckSize(static_cast<size_t>(std::max<int64_t>(n, 0))));
  return std::string(static_cast<size_t>(std::max<int64_t>(n, 0)), ' ');
}

Result<Value> Tojson(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"}));
  JsonDumpOptions o;
  o.max_bytes = r.options().limits.max_output_bytes;
  o.ensure_ascii = a.has(0) && a[0].Truthy();
  o.sort_keys = a.has(3) && a[3].Truthy();
  if (a.has(1) && !a[1].is_none()) {
    RS_ASSIGN_OR_RETURN(o.indent, Indention(r, a[1]));
    o.item_separator = ",";
  }
  if (a.has(2) && !a[2].is_none()) {
    if (!a[2].is_list() || a[2].items().size() != 2 || !a[2].items()[0].is_string() || !a[2].items()[1].is_string()) {
      return TypeError("separators must be a pair of strings");
    }
    o.item_separator = a[2].items()[0].str();
    o.key_separator = a[2].items()[1].str();
  }
  RS_ASSIGN_OR_RETURN(std::string text, JsonDumps(v, o));
  return Value::Str(std::move(text));
}

Result<Value> Trim(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("trim", args, {"chars"}));
  std::optional<std::string> chars;
  if (a.has(0) && !a[0].is_none()) {
    RS_ASSIGN_OR_RETURN(chars, r.Str(a[0]));
  }
  RS_ASSIGN_OR_RETURN(std::string s, r.Str(v));
  return SameKind(v, PyStrip(s, chars, true, true));
}

Result<Value> StringFilter(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("string", args));
  if (v.is_markup()) return v;
  RS_ASSIGN_OR_RETURN(std::string s, r.Str(v));
  return Value::Str(std::move(s));
}

Result<Value> Length(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("length", args));
  RS_ASSIGN_OR_RETURN(int64_t n, PyLen(v));
  return Value::Int(n);
}

Result<Value> Lower(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("lower", args));
  RS_ASSIGN_OR_RETURN(std::string s, r.Str(v));
  return SameKind(v, PyLower(s));
}

Result<Value> Upper(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("upper", args));
  RS_ASSIGN_OR_RETURN(std::string s, r.Str(v));
  return SameKind(v, PyUpper(s));
}

Result<Value> Capitalize(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("capitalize", args));
  RS_ASSIGN_OR_RETURN(std::string s, r.Str(v));
  return SameKind(v, PyCapitalize(s));
}

// jinja2's title: a word starts after "-", whitespace, "(", "{", "[" or "<" (not after "'").
Result<Value> Title(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("title", args));
  RS_ASSIGN_OR_RETURN(const std::string s, r.Str(v));
  std::string out;
  bool word_start = true;
  for (std::string_view cp : Codepoints(s)) {
    size_t p = 0;
    const char32_t c = NextCodepoint(cp, &p);
    const bool delimiter = IsPyWhitespace(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
    out += delimiter ? std::string(cp) : word_start ? PyUpper(cp) : PyLower(cp);
    word_start = delimiter;
  }
  return SameKind(v, std::move(out));
}

Result<Value> Replace(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("replace", args, {"old", "new", "count"}, 2));
  int64_t count = -1;
  if (a.has(2) && !a[2].is_none()) {
    RS_ASSIGN_OR_RETURN(count, IntArg(a[2]));
  }
  RS_ASSIGN_OR_RETURN(const std::string s, r.Str(v));
  RS_ASSIGN_OR_RETURN(const std::string old, r.Str(a[0]));
  RS_ASSIGN_OR_RETURN(const std::string repl, r.Str(a[1]));
  // Each replacement can add repl's length; check the worst case before building.
  if (!old.empty() && repl.size() > old.size()) {
    RS_RETURN_IF_ERROR(r.CheckSize(s.size() + (s.size() / old.size()) * (repl.size() - old.size())));
  } else if (old.empty()) {
    RS_RETURN_IF_ERROR(r.CheckSize(s.size() + (s.size() + 1) * repl.size()));
  }
  std::string out = PyReplace(s, old, repl, count);
  RS_RETURN_IF_ERROR(r.CheckSize(out.size()));
  return Value::Str(std::move(out));
}

Result<Value> Default(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("default", args, {"default_value", "boolean"}));
  const bool boolean = a.has(1) && a[1].Truthy();
  if (v.is_undefined() || (boolean && !v.Truthy())) return a.has(0) ? a[0] : Value::Str("");
  return v;
}

Result<Value> Safe(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("safe", args));
  RS_ASSIGN_OR_RETURN(std::string s, r.Str(v));
  return Value::Markup(std::move(s));
}

Result<Value> Escape(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("escape", args));
  if (v.is_markup()) return v;
  RS_ASSIGN_OR_RETURN(std::string s, r.Str(v));
  return Value::Markup(HtmlEscape(s));
}

Result<Value> ForceEscape(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("forceescape", args));
  RS_ASSIGN_OR_RETURN(std::string s, r.Str(v));
  return Value::Markup(HtmlEscape(s));
}

Result<Value> Int(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("int", args, {"default", "base"}));
  const Value fallback = a.has(0) ? a[0] : Value::Int(0);
  if (v.is_undefined()) return UndefinedError(v.str());  // int(Undefined) raises
  if (v.is_int() || v.is_bool()) return Value::Int(v.as_int());
  double d = 0;
  if (v.is_float()) {
    d = v.as_double();
  } else if (v.is_string()) {
    const int base = a.has(1) && a[1].is_int() ? static_cast<int>(a[1].as_int()) : 10;
    std::string s;
    for (char c : PyStrip(v.str(), std::nullopt, true, true)) {
      if (c != '_') s.push_back(c);
    }
    char* end = nullptr;
    errno = 0;
    const long long n = s.empty() ? 0 : std::strtoll(s.c_str(), &end, base);
    if (!s.empty() && end == s.c_str() + s.size() && errno == 0) return Value::Int(n);
    if (!ParsePyFloat(v.str(), &d)) return fallback;  // "42.23"|int is 42
  } else {
    return fallback;
  }
  if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
  return Value::Int(static_cast<int64_t>(std::trunc(d)));
}

Result<Value> Float(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("float", args, {"default"}));
  if (v.is_undefined()) return UndefinedError(v.str());  // float(Undefined) raises
  if (v.is_number()) return Value::Float(v.as_double());
  double d = 0;
  if (v.is_string() && ParsePyFloat(v.str(), &d)) return Value::Float(d);
  return a.has(0) ? a[0] : Value::Float(0.0);
}

Result<Value> Abs(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("abs", args));
  if (v.is_float()) return Value::Float(std::fabs(v.as_double()));
  if (v.is_int() || v.is_bool()) {
    if (v.as_int() == INT64_MIN) return PyError("OverflowError", "integer result does not fit in 64 bits");
    return Value::Int(v.as_int() < 0 ? -v.as_int() : v.as_int());
  }
  return TypeError("bad operand type for abs(): '" + v.TypeName() + "'");
}

Result<Value> Round(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("round", args, {"precision", "method"}));
  int64_t precision = 0;
  if (a.has(0)) {
    RS_ASSIGN_OR_RETURN(precision, IntArg(a[0]));
  }
  const std::string method = a.has(1) ? PyStr(a[1]) : "common";
  if (method != "common" && method != "ceil" && method != "floor") {
    return PyError("FilterArgumentError", "method must be common, ceil or floor");
  }
  if (!v.is_number()) return TypeError("type " + v.TypeName() + " doesn't define __round__ method");
  if (method == "common" && !v.is_float() && precision >= 0) return Value::Int(v.as_int());
  const double scale = std::pow(10.0, static_cast<double>(precision));
  if (method != "common") {
    const double x = v.as_double() * scale;
    return Value::Float((method == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
  }
  if (precision < 0) return Value::Float(std::nearbyint(v.as_double() / (1 / scale)) * (1 / scale));
  // printf rounds the exact binary value half-to-even, as Python's round() does.
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(std::min<int64_t>(precision, 300)), v.as_double());
  return Value::Float(std::strtod(buf, nullptr));
}

Result<Value> Format(Renderer& r, const Value& v, const CallArgs& args) {
  if (!args.positional.empty() && !args.keyword.empty()) {
    return PyError("FilterArgumentError", "can't handle positional and keyword arguments at the same time");
  }
  if (!args.keyword.empty()) {
    Dict kwargs;
    for (const auto& [name, value] : args.keyword) kwargs.Set(Value::Str(name), value);
    RS_ASSIGN_OR_RETURN(std::string fmt, r.Str(v));
    return PercentFormat(fmt, Value::FromDict(std::move(kwargs)), r.options().limits.max_output_bytes);
  }
  RS_ASSIGN_OR_RETURN(std::string fmt, r.Str(v));
  return PercentFormat(fmt, Value::Tuple(args.positional), r.options().limits.max_output_bytes);
}

Result<Value> Indent(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("indent", args, {"width", "first", "blank"}));
  std::string indention = "    ";
  if (a.has(0)) {
    RS_ASSIGN_OR_RETURN(indention, Indention(r, a[0]));
  }
  const bool first = a.has(1) && a[1].Truthy();
  const bool blank = a.has(2) && a[2].Truthy();
  if (v.is_undefined()) return UndefinedError(v.str());
  if (!v.is_string()) return TypeError("unsupported operand type(s) for +=: '" + v.TypeName() + "' and 'str'");
  std::vector<std::string> lines = PySplitLines(v.str() + "\n");
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) {
      out += "\n";
      if (blank || !lines[i].empty()) out += indention;
    }
    out += lines[i];
    RS_RETURN_IF_ERROR(r.CheckSize(out.size()));
  }
  if (first) out = indention + out;
  return SameKind(v, std::move(out));
}

Result<Value> Center(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("center", args, {"width"}));
  RS_ASSIGN_OR_RETURN(const std::string s, r.Str(v));
  int64_t width = 80;
  if (a.has(0)) {
    RS_ASSIGN_OR_RETURN(width, IntArg(a[0]));
  }
  const int64_t len = static_cast<int64_t>(CodepointCount(s));
  if (width <= len) return Value::Str(s);
  RS_RETURN_IF_ERROR(r.CheckSize(static_cast<size_t>(width)));
  const int64_t marg = width - len;
  const int64_t left = marg / 2 + (marg & width & 1);  // CPython's str.center
  return Value::Str(std::string(left, ' ') + s + std::string(marg - left, ' '));
}

Result<Value> Wordcount(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("wordcount", args));
  int64_t words = 0;
  bool in_word = false;
  RS_ASSIGN_OR_RETURN(const std::string s, r.Str(v));
  for (size_t p = 0; p < s.size();) {
    const char32_t c = NextCodepoint(s, &p);
    const bool word = c == '_' || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ||
                      (c >= 0x80 && !IsPyWhitespace(c));
    if (word && !in_word) ++words;
    in_word = word;
  }
  return Value::Int(words);
}

// |attr(name): the attribute only (methods, namespace members), never an item.
Result<Value> Attr(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("attr", args, {"name"}, 1));
  if (v.is_dict() && !HasMethod(v, PyStr(a[0])))
    return Value::Undefined("'dict object' has no attribute " + PyReprString(PyStr(a[0])));
  return r.GetAttr(v, PyStr(a[0]));
}

struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

constexpr FilterEntry kFilters[] = {
    {"abs", Abs},
    {"attr", Attr},
    {"capitalize", Capitalize},
    {"center", Center},
    {"count", Length},
    {"d", Default},
    {"default", Default},
    {"e", Escape},
    {"escape", Escape},
    {"float", Float},
    {"forceescape", ForceEscape},
    {"format", Format},
    {"indent", Indent},
    {"int", Int},
    {"length", Length},
    {"lower", Lower},
    {"replace", Replace},
    {"round", Round},
    {"safe", Safe},
    {"string", StringFilter},
    {"title", Title},
    {"tojson", Tojson},
    {"trim", Trim},
    {"upper", Upper},
    {"wordcount", Wordcount},
};

}  // namespace

FilterFn FindFilter(std::string_view name) {
  for (const FilterEntry& e : kFilters) {
    if (e.name == name) return e.fn;
  }
  return FindSequenceFilter(name);
}

}  // namespace radixserve::jinja
