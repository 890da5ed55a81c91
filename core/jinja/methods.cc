// Methods templates call on values: str (strip, split, startswith, replace...), dict (items,
// get, keys, values), list (index, count) and loop.cycle. Methods that would change a list or
// dict exist but fail with SecurityError, as in jinja2's ImmutableSandboxedEnvironment.
#include <algorithm>
#include <array>

#include "core/jinja/builtins.h"
#include "core/jinja/errors.h"
#include "core/jinja/ops.h"
#include "core/jinja/py_string.h"
#include "core/jinja/renderer.h"

namespace radixserve::jinja {

namespace {

constexpr std::array<std::string_view, 21> kStrMethods = {
    "strip",    "lstrip",  "rstrip", "split",   "rsplit",  "splitlines", "startswith",
    "endswith", "replace", "upper",  "lower",   "title",   "capitalize", "find",
    "rfind",    "count",   "join",   "isdigit", "isalpha", "isalnum",    "isspace"};
constexpr std::array<std::string_view, 5> kDictMethods = {"items", "keys", "values", "get", "copy"};
constexpr std::array<std::string_view, 5> kDictUnsafe = {"clear", "pop", "popitem", "setdefault", "update"};
constexpr std::array<std::string_view, 2> kListMethods = {"index", "count"};
constexpr std::array<std::string_view, 8> kListUnsafe = {"append", "clear",  "extend",  "insert",
                                                         "pop",    "remove", "reverse", "sort"};

template <size_t N>
bool In(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The optional str argument of strip()/split(): nullopt when absent or None.
Result<std::optional<std::string>> OptionalStr(const BoundArgs& a, size_t i, std::string_view method) {
  if (!a.has(i) || a[i].is_none()) return std::optional<std::string>();
  if (!a[i].is_string()) {
    return TypeError(std::string(method) + " arg must be None or str, not " + a[i].TypeName());
  }
  return std::optional<std::string>(a[i].str());
}

// Code point index of a byte offset.
int64_t CodepointIndex(std::string_view s, size_t byte) {
  return static_cast<int64_t>(CodepointCount(s.substr(0, byte)));
}

Value StrList(std::vector<std::string> parts) {
  std::vector<Value> out;
  out.reserve(parts.size());
  for (std::string& p : parts) out.push_back(Value::Str(std::move(p)));
  return Value::List(std::move(out));
}

Result<Value> CallStrMethod(Renderer& r, const std::string& s, std::string_view name, const CallArgs& args) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(name, args, {"chars"}));
    RS_ASSIGN_OR_RETURN(auto chars, OptionalStr(a, 0, name));
    return Value::Str(PyStrip(s, chars, name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(name, args, {"sep", "maxsplit"}));
    RS_ASSIGN_OR_RETURN(auto sep, OptionalStr(a, 0, name));
    int64_t maxsplit = -1;
    if (a.has(1)) {
      RS_ASSIGN_OR_RETURN(maxsplit, IntArg(a[1]));
    }
    if (sep && sep->empty()) return ValueError("empty separator");
    if (!sep) {
      if (name == "split" || maxsplit < 0) return StrList(PySplitWhitespace(s, maxsplit));
      return Status::Unsupported("str.rsplit() with a limit and no separator is not supported");
    }
    return StrList(name == "split" ? PySplit(s, *sep, maxsplit) : PyRSplit(s, *sep, maxsplit));
  }
  if (name == "splitlines") {
    RS_RETURN_IF_ERROR(ExpectNoArgs(name, args));
    return StrList(PySplitLines(s));
  }
  if (name == "startswith" || name == "endswith") {
    RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(name, args, {"prefix"}, 1));
    std::vector<Value> options;
    if (a[0].is_string()) {
      options.push_back(a[0]);
    } else if (a[0].is_list() && a[0].list().kind == ListKind::kTuple) {
      options = a[0].items();
    }
    bool any = false;
    for (const Value& o : options) {
      if (!o.is_string()) {
        return TypeError(std::string(name) + " first arg must be str or a tuple of str, not " + o.TypeName());
      }
      const std::string& x = o.str();
      any = any || (x.size() <= s.size() && (name == "startswith" ? s.compare(0, x.size(), x) == 0
                                                                  : s.compare(s.size() - x.size(), x.size(), x) == 0));
    }
    if (options.empty()) {
      return TypeError(std::string(name) + " first arg must be str or a tuple of str, not " + a[0].TypeName());
    }
    return Value::Bool(any);
  }
  if (name == "replace") {
    RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(name, args, {"old", "new", "count"}, 2));
    if (!a[0].is_string() || !a[1].is_string()) return TypeError("replace() argument must be str");
    int64_t count = -1;
    if (a.has(2)) {
      RS_ASSIGN_OR_RETURN(count, IntArg(a[2]));
    }
    std::string out = PyReplace(s, a[0].str(), a[1].str(), count);
    RS_RETURN_IF_ERROR(r.CheckSize(out.size()));
    return Value::Str(std::move(out));
  }
  if (name == "find" || name == "rfind" || name == "count") {
    RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(name, args, {"sub"}, 1));
    if (!a[0].is_string()) return TypeError("must be str, not " + a[0].TypeName());
    const std::string& sub = a[0].str();
    if (name == "count") {
      if (sub.empty()) return Value::Int(static_cast<int64_t>(CodepointCount(s)) + 1);
      int64_t n = 0;
      for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
      return Value::Int(n);
    }
    const size_t at = name == "find" ? s.find(sub) : s.rfind(sub);
    return Value::Int(at == std::string::npos ? -1 : CodepointIndex(s, at));
  }
  if (name == "join") {
    RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(name, args, {"iterable"}, 1));
    RS_ASSIGN_OR_RETURN(std::vector<Value> items, PyIter(a[0]));
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string()) {
        return TypeError("sequence item " + std::to_string(i) + ": expected str instance, " + items[i].TypeName() +
                         " found");
      }
      if (i > 0) out += s;
      out += items[i].str();
      RS_RETURN_IF_ERROR(r.CheckSize(out.size()));
    }
    return Value::Str(std::move(out));
  }
  RS_RETURN_IF_ERROR(ExpectNoArgs(name, args));
  if (name == "upper") return Value::Str(PyUpper(s));
  if (name == "lower") return Value::Str(PyLower(s));
  if (name == "title") return Value::Str(PyTitle(s));
  if (name == "capitalize") return Value::Str(PyCapitalize(s));
  // The is* predicates, for ASCII (non-ASCII code points count as letters).
  bool all = !s.empty();
  for (size_t p = 0; p < s.size() && all;) {
    const char32_t c = NextCodepoint(s, &p);
    const bool digit = c >= '0' && c <= '9';
    const bool alpha = ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= 0x80 && !IsPyWhitespace(c));
    all = name == "isdigit"   ? digit
          : name == "isalpha" ? alpha
          : name == "isalnum" ? digit || alpha
                              : IsPyWhitespace(c);
  }
  return Value::Bool(all);
}

Result<Value> CallDictMethod(const Value& self, std::string_view name, const CallArgs& args) {
  const Dict& d = self.dict();
  if (name == "get") {
    RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(name, args, {"key", "default"}, 1));
    RS_RETURN_IF_ERROR(CheckHashable(a[0]));
    const Value* v = d.Find(a[0]);
    return v ? *v : a.has(1) ? a[1] : Value::None();
  }
  RS_RETURN_IF_ERROR(ExpectNoArgs(name, args));
  if (name == "copy") return self;  // dicts are immutable here: sharing is copying
  auto view = std::make_shared<ListObj>();
  view->kind = name == "items" ? ListKind::kDictItems : name == "keys" ? ListKind::kDictKeys : ListKind::kDictValues;
  for (const auto& [key, value] : d.entries()) {
    view->items.push_back(name == "items" ? Value::Tuple({key, value}) : name == "keys" ? key : value);
    view->depth = std::max(view->depth, view->items.back().Depth() + 1);
  }
  return Value::FromList(std::move(view));
}

Result<Value> CallListMethod(const Value& self, std::string_view name, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(name, args, {"value"}, 1));
  const auto& items = self.items();
  if (name == "count") {
    return Value::Int(std::count_if(items.begin(), items.end(), [&](const Value& v) { return PyEquals(v, a[0]); }));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    if (PyEquals(items[i], a[0])) return Value::Int(static_cast<int64_t>(i));
  }
  return ValueError(PyRepr(a[0], 200).substr(0, 200) + " is not in list");
}

}  // namespace

bool HasMethod(const Value& obj, std::string_view name) {
  switch (obj.kind()) {
    case Value::Kind::kString:
      return In(kStrMethods, name);
    case Value::Kind::kDict:
      return In(kDictMethods, name) || In(kDictUnsafe, name);
    case Value::Kind::kList:
      return (obj.is_sequence() && In(kListMethods, name)) ||
             (obj.list().kind == ListKind::kList && In(kListUnsafe, name));
    case Value::Kind::kNamespace:
      return obj.ns().is_loop && name == "cycle";
    default:
      return false;
  }
}

Result<Value> CallMethod(Renderer& r, const Value& self, std::string_view name, const CallArgs& args) {
  if ((self.is_dict() && In(kDictUnsafe, name)) || (self.is_list() && In(kListUnsafe, name))) {
    return SecurityError("access to attribute '" + std::string(name) + "' of '" + self.TypeName() +
                         "' object is unsafe.");
  }
  if (self.is_string()) return CallStrMethod(r, self.str(), name, args);
  if (self.is_dict()) return CallDictMethod(self, name, args);
  if (self.is_list()) return CallListMethod(self, name, args);
  if (self.is_namespace() && name == "cycle") {  // loop.cycle(a, b, ...): the one for this iteration
    if (args.positional.empty()) return TypeError("no items for cycling given");
    const Value* index0 = self.ns().attrs.Find("index0");
    const int64_t i = index0 ? index0->as_int() : 0;
    return args.positional[static_cast<size_t>(i % static_cast<int64_t>(args.positional.size()))];
  }
  return Status::Internal("no method " + std::string(name));
}

}  // namespace radixserve::jinja
