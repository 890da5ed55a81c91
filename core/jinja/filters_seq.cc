// Filters over sequences: sorting, selecting, mapping, joining, aggregating. Strings are compared
// case-insensitively unless case_sensitive=true, and map, select/reject(attr), items, unique,
// batch and reverse return generators (always true, no length), as jinja2 does.
#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "core/jinja/builtins.h"
#include "core/jinja/errors.h"
#include "core/jinja/json.h"
#include "core/jinja/ops.h"
#include "core/jinja/py_string.h"
#include "core/jinja/renderer.h"

namespace radixserve::jinja {

namespace {

// The items a filter walks, counted against the render's iteration limit.
Result<std::vector<Value>> Walk(Renderer& r, const Value& v) {
  RS_ASSIGN_OR_RETURN(std::vector<Value> items, PyIter(v));
  RS_RETURN_IF_ERROR(r.CountIterations(static_cast<int64_t>(items.size())));
  return items;
}

// jinja2's map, select, unique... are generators: an error met while making items surfaces only
// when something iterates that far (never, if nothing does). produce() makes the items at once; on
// a Python-style error the generator keeps the items made before it and raises it after them.
template <typename Produce>
Result<Value> Generate(Produce produce) {
  std::vector<Value> out;
  Status st = produce(&out);
  if (!st.ok() && st.code() != StatusCode::kFailedPrecondition) return st;  // limits fail at once
  Value gen = Value::Generator(std::move(out), std::move(st));
  RS_RETURN_IF_ERROR(CheckNesting(gen));
  return gen;
}

// jinja2's make_attrgetter: "a.b.0" looks up each part as an item (digit parts as ints).
Result<Value> AttrPath(Renderer& r, Value item, const Value& attribute) {
  if (!attribute.is_string()) return r.GetItem(item, attribute);
  for (const std::string& part : PySplit(attribute.str(), ".", -1)) {
    const bool digits =
        !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    const Value key = digits ? Value::Int(std::strtoll(part.c_str(), nullptr, 10)) : Value::Str(part);
    RS_ASSIGN_OR_RETURN(item, r.GetItem(item, key));
  }
  return item;
}

Value IgnoreCase(const Value& v) { return v.is_string() ? Value::Str(PyLower(v.str())) : v; }

// The sort key of an item: its attribute (with multi, "a,b" gives a list of both) and case
// folding.
Result<Value> SortKey(Renderer& r, const Value& item, const BoundArgs& a, size_t case_arg, size_t attr_arg,
                      bool multi = false) {
  const bool case_sensitive = a.has(case_arg) && a[case_arg].Truthy();
  if (!a.has(attr_arg) || a[attr_arg].is_none()) return case_sensitive ? item : IgnoreCase(item);
  const Value& attr = a[attr_arg];
  if (multi && attr.is_string() && attr.str().find(',') != std::string::npos) {
    std::vector<Value> keys;
    for (const std::string& part : PySplit(attr.str(), ",", -1)) {
      RS_ASSIGN_OR_RETURN(Value key, AttrPath(r, item, Value::Str(part)));
      keys.push_back(case_sensitive ? key : IgnoreCase(key));
    }
    return Value::List(std::move(keys));
  }
  RS_ASSIGN_OR_RETURN(Value key, AttrPath(r, item, attr));
  return case_sensitive ? key : IgnoreCase(key);
}

// A stable sort on keys with Python's `<`, failing like Python on unorderable keys.
Status SortRows(std::vector<std::pair<Value, Value>>* rows, bool reverse) {
  Status error;
  std::stable_sort(rows->begin(), rows->end(), [&](const auto& x, const auto& y) {
    if (!error.ok()) return false;
    Result<bool> less = reverse ? PyLess(y.first, x.first) : PyLess(x.first, y.first);
    if (!less.ok()) {
      error = less.status();
      return false;
    }
    return *less;
  });
  return error;
}

Result<Value> Sort(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("sort", args, {"reverse", "case_sensitive", "attribute"}));
  RS_ASSIGN_OR_RETURN(std::vector<Value> items, Walk(r, v));
  std::vector<std::pair<Value, Value>> rows;
  for (Value& item : items) {
    RS_ASSIGN_OR_RETURN(Value key, SortKey(r, item, a, 1, 2, true));
    rows.emplace_back(std::move(key), std::move(item));
  }
  RS_RETURN_IF_ERROR(SortRows(&rows, a.has(0) && a[0].Truthy()));
  std::vector<Value> out;
  for (auto& row : rows) out.push_back(std::move(row.second));
  return Value::List(std::move(out));
}

Result<Value> Dictsort(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("dictsort", args, {"case_sensitive", "by", "reverse"}));
  if (v.is_undefined()) return UndefinedError(v.str());
  if (!v.is_dict())
    return PyError("AttributeError", std::string("'") + v.TypeName() + "' object has no attribute 'items'");
  const std::string by = a.has(1) ? PyStr(a[1]) : "key";
  if (by != "key" && by != "value") {
    return PyError("FilterArgumentError", "You can only sort by either \"key\" or \"value\"");
  }
  RS_RETURN_IF_ERROR(r.CountIterations(static_cast<int64_t>(v.dict().size())));
  const bool case_sensitive = a.has(0) && a[0].Truthy();
  std::vector<std::pair<Value, Value>> rows;
  for (const auto& [key, value] : v.dict().entries()) {
    const Value& sort_by = by == "key" ? key : value;
    rows.emplace_back(case_sensitive ? sort_by : IgnoreCase(sort_by), Value::Tuple({key, value}));
  }
  RS_RETURN_IF_ERROR(SortRows(&rows, a.has(2) && a[2].Truthy()));
  std::vector<Value> out;
  for (auto& row : rows) out.push_back(std::move(row.second));
  return Value::List(std::move(out));
}

constexpr size_t kMaxHashKeyBytes = 1 << 20;

// A string equal for values a Python set holds once (1, 1.0 and True are one member).
Result<std::string> HashKey(const Value& v) {
  RS_RETURN_IF_ERROR(CheckHashable(v));
  if (v.is_number()) {
    const double d = v.as_double();
    if (!v.is_float() || (d == std::floor(d) && std::fabs(d) < 9e18)) {
      return std::string("n") + std::to_string(v.is_float() ? static_cast<int64_t>(d) : v.as_int());
    }
    return std::string("n") + PyFloatRepr(d);
  }
  if (v.is_list()) {
    std::string key = "(";
    for (const Value& item : v.items()) {
      RS_ASSIGN_OR_RETURN(std::string k, HashKey(item));
      key += k + ",";
    }
    return key + ")";
  }
  std::string repr = PyRepr(v, kMaxHashKeyBytes);
  if (repr.size() > kMaxHashKeyBytes) return LimitError("a value given to unique is too large to compare");
  return repr;
}

Result<Value> Unique(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("unique", args, {"case_sensitive", "attribute"}));
  return Generate([&](std::vector<Value>* out) -> Status {
    RS_ASSIGN_OR_RETURN(std::vector<Value> items, Walk(r, v));
    std::unordered_set<std::string> seen;
    for (Value& item : items) {
      RS_ASSIGN_OR_RETURN(Value key, SortKey(r, item, a, 0, 1));
      RS_ASSIGN_OR_RETURN(std::string hashed, HashKey(key));
      if (seen.insert(std::move(hashed)).second) out->push_back(std::move(item));
    }
    return Status::Ok();
  });
}

Result<Value> MinOrMax(Renderer& r, const Value& v, const CallArgs& args, bool max) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(max ? "max" : "min", args, {"case_sensitive", "attribute"}));
  RS_ASSIGN_OR_RETURN(std::vector<Value> items, Walk(r, v));
  if (items.empty()) return Value::Undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  RS_ASSIGN_OR_RETURN(Value best_key, SortKey(r, items[0], a, 0, 1));
  for (size_t i = 1; i < items.size(); ++i) {
    RS_ASSIGN_OR_RETURN(Value key, SortKey(r, items[i], a, 0, 1));
    RS_ASSIGN_OR_RETURN(bool better, max ? PyLess(best_key, key) : PyLess(key, best_key));
    if (better) {
      best = i;
      best_key = std::move(key);
    }
  }
  return items[best];
}

Result<Value> Min(Renderer& r, const Value& v, const CallArgs& args) { return MinOrMax(r, v, args, false); }
Result<Value> Max(Renderer& r, const Value& v, const CallArgs& args) { return MinOrMax(r, v, args, true); }

Result<Value> Join(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("join", args, {"d", "attribute"}));
  const std::string sep = a.has(0) ? PyStr(a[0]) : "";
  RS_ASSIGN_OR_RETURN(std::vector<Value> items, Walk(r, v));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    Value item = items[i];
    if (a.has(1) && !a[1].is_none()) {
      RS_ASSIGN_OR_RETURN(item, AttrPath(r, item, a[1]));
    }
    if (i > 0) out += sep;
    RS_ASSIGN_OR_RETURN(std::string text, r.Str(item));
    out += text;
    RS_RETURN_IF_ERROR(r.CheckSize(out.size()));
  }
  return Value::Str(std::move(out));
}

Result<Value> Items(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("items", args));
  return Generate([&](std::vector<Value>* out) -> Status {
    if (v.is_undefined()) return Status::Ok();
    if (!v.is_dict()) return TypeError("Can only get item pairs from a mapping.");
    RS_RETURN_IF_ERROR(r.CountIterations(static_cast<int64_t>(v.dict().size())));
    for (const auto& [key, value] : v.dict().entries()) out->push_back(Value::Tuple({key, value}));
    return Status::Ok();
  });
}

Result<Value> ListFilter(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("list", args));
  RS_ASSIGN_OR_RETURN(std::vector<Value> items, Walk(r, v));
  return Value::List(std::move(items));
}

Result<Value> First(Renderer&, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("first", args));
  if (v.is_list() && v.list().kind == ListKind::kGenerator) {  // takes one item of a generator
    const ListObj& gen = v.list();
    if (gen.consumed < gen.items.size()) return gen.items[gen.consumed++];
    RS_RETURN_IF_ERROR(gen.error);
    return Value::Undefined("No first item, sequence was empty.");
  }
  RS_ASSIGN_OR_RETURN(std::vector<Value> items, PyIter(v));
  return items.empty() ? Value::Undefined("No first item, sequence was empty.") : items.front();
}

Result<Value> Last(Renderer&, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("last", args));
  if (v.is_list() && v.list().kind == ListKind::kGenerator) return TypeError("'generator' object is not reversible");
  RS_ASSIGN_OR_RETURN(std::vector<Value> items, PyIter(v));
  return items.empty() ? Value::Undefined("No last item, sequence was empty.") : items.back();
}

Result<Value> Reverse(Renderer& r, const Value& v, const CallArgs& args) {
  RS_RETURN_IF_ERROR(ExpectNoArgs("reverse", args));
  const bool generator = v.is_list() && v.list().kind == ListKind::kGenerator;
  RS_ASSIGN_OR_RETURN(std::vector<Value> items, Walk(r, v));
  std::reverse(items.begin(), items.end());
  // A list gives a reverse iterator; a generator, which cannot be reversed, a list.
  if (generator) return Value::List(std::move(items));
  if (!v.is_string()) return Value::Generator(std::move(items));
  std::string out;
  for (const Value& cp : items) out += cp.str();
  return v.is_markup() ? Value::Markup(std::move(out)) : Value::Str(std::move(out));
}

Result<Value> Sum(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("sum", args, {"attribute", "start"}));
  RS_ASSIGN_OR_RETURN(std::vector<Value> items, Walk(r, v));
  Value total = a.has(1) ? a[1] : Value::Int(0);
  for (Value& item : items) {
    if (a.has(0) && !a[0].is_none()) {
      RS_ASSIGN_OR_RETURN(item, AttrPath(r, item, a[0]));
    }
    RS_ASSIGN_OR_RETURN(total, BinaryOp("+", total, item, r.options().limits.max_output_bytes));
  }
  return total;
}

Result<Value> Batch(Renderer& r, const Value& v, const CallArgs& args) {
  RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs("batch", args, {"linecount", "fill_with"}, 1));
  RS_ASSIGN_OR_RETURN(const int64_t n, IntArg(a[0]));
  return Generate([&](std::vector<Value>* out) -> Status {
    RS_ASSIGN_OR_RETURN(std::vector<Value> items, Walk(r, v));
    std::vector<Value> row;
    for (Value& item : items) {
      if (static_cast<int64_t>(row.size()) == n) out->push_back(Value::List(std::exchange(row, {})));
      row.push_back(std::move(item));
    }
    if (!row.empty()) {
      if (a.has(1) && !a[1].is_none()) {
        while (static_cast<int64_t>(row.size()) < n) row.push_back(a[1]);
      }
      out->push_back(Value::List(std::move(row)));
    }
    return Status::Ok();
  });
}

// map(attribute=..., default=...) or map('filter', *args, **kwargs).
Result<Value> Map(Renderer& r, const Value& v, const CallArgs& args) {
  return Generate([&](std::vector<Value>* out) -> Status {
    if (!v.Truthy()) return Status::Ok();
    const auto attribute =
        std::find_if(args.keyword.begin(), args.keyword.end(), [](const auto& kw) { return kw.first == "attribute"; });
    if (args.positional.empty() && attribute != args.keyword.end()) {
      Value fallback = Value::None();
      for (const auto& [name, value] : args.keyword) {
        if (name == "default") {
          fallback = value;
        } else if (name != "attribute") {
          return PyError("FilterArgumentError", "Unexpected keyword argument '" + name + "'");
        }
      }
      RS_ASSIGN_OR_RETURN(std::vector<Value> items, Walk(r, v));
      for (const Value& item : items) {
        RS_ASSIGN_OR_RETURN(Value x, AttrPath(r, item, attribute->second));
        out->push_back(x.is_undefined() && !fallback.is_none() ? fallback : std::move(x));
      }
      return Status::Ok();
    }
    if (args.positional.empty()) return PyError("FilterArgumentError", "map requires a filter argument");
    const CallArgs filter_args{{args.positional.begin() + 1, args.positional.end()}, args.keyword};
    const std::string name = PyStr(args.positional[0]);
    RS_ASSIGN_OR_RETURN(std::vector<Value> items, Walk(r, v));
    for (const Value& item : items) {
      RS_ASSIGN_OR_RETURN(Value x, r.ApplyFilter(name, item, filter_args));
      out->push_back(std::move(x));
    }
    return Status::Ok();
  });
}

// select/reject(test, *args) and selectattr/rejectattr(attribute, test, *args); without a test
// the value's truth decides.
Result<Value> SelectOrReject(Renderer& r, const Value& v, const CallArgs& args, bool select, bool by_attr) {
  return Generate([&](std::vector<Value>* out) -> Status {
    if (!v.Truthy()) return Status::Ok();
    const size_t off = by_attr ? 1 : 0;
    if (by_attr && args.positional.empty()) {
      return PyError("FilterArgumentError", "Missing parameter for attribute name");
    }
    const bool has_test = args.positional.size() > off;
    const std::string test = has_test ? PyStr(args.positional[off]) : "";
    CallArgs test_args;
    if (has_test) test_args = {{args.positional.begin() + off + 1, args.positional.end()}, args.keyword};
    RS_ASSIGN_OR_RETURN(std::vector<Value> items, Walk(r, v));
    for (Value& item : items) {
      Value x = item;
      if (by_attr) {
        RS_ASSIGN_OR_RETURN(x, AttrPath(r, item, args.positional[0]));
      }
      bool pass = x.Truthy();
      if (has_test) {
        RS_ASSIGN_OR_RETURN(pass, r.ApplyTest(test, x, test_args));
      }
      if (pass == select) out->push_back(std::move(item));
    }
    return Status::Ok();
  });
}

Result<Value> Select(Renderer& r, const Value& v, const CallArgs& a) { return SelectOrReject(r, v, a, true, false); }
Result<Value> Reject(Renderer& r, const Value& v, const CallArgs& a) { return SelectOrReject(r, v, a, false, false); }
Result<Value> SelectAttr(Renderer& r, const Value& v, const CallArgs& a) { return SelectOrReject(r, v, a, true, true); }
Result<Value> RejectAttr(Renderer& r, const Value& v, const CallArgs& a) {
  return SelectOrReject(r, v, a, false, true);
}

struct SeqFilterEntry {
  std::string_view name;
  FilterFn fn;
};

constexpr SeqFilterEntry kSeqFilters[] = {
    {"batch", Batch},     {"dictsort", Dictsort}, {"first", First},           {"items", Items},
    {"join", Join},       {"last", Last},         {"list", ListFilter},       {"map", Map},
    {"max", Max},         {"min", Min},           {"reject", Reject},         {"rejectattr", RejectAttr},
    {"reverse", Reverse}, {"select", Select},     {"selectattr", SelectAttr}, {"sort", Sort},
    {"sum", Sum},         {"unique", Unique},
};

}  // namespace

FilterFn FindSequenceFilter(std::string_view name) {
  for (const SeqFilterEntry& e : kSeqFilters) {
    if (e.name == name) return e.fn;
  }
  return nullptr;
}

}  // namespace radixserve::jinja
