// Global functions (raise_exception, strftime_now, namespace, range, dict) and the argument
// binding every built-in uses.
#include <algorithm>

#include "core/jinja/builtins.h"
#include "core/jinja/errors.h"
#include "core/jinja/format.h"
#include "core/jinja/json.h"
#include "core/jinja/renderer.h"

namespace radixserve::jinja {

Result<BoundArgs> BindArgs(std::string_view func, const CallArgs& args, const std::vector<std::string_view>& params,
                           size_t required) {
  const std::string f(func);
  if (args.positional.size() > params.size()) {
    return TypeError(f + "() takes " + std::to_string(params.size()) + " positional argument(s) but " +
                     std::to_string(args.positional.size()) + " were given");
  }
  BoundArgs out;
  out.values.resize(params.size());
  out.present.assign(params.size(), false);
  for (size_t i = 0; i < args.positional.size(); ++i) {
    out.values[i] = args.positional[i];
    out.present[i] = true;
  }
  for (const auto& [name, value] : args.keyword) {
    auto it = std::find(params.begin(), params.end(), name);
    if (it == params.end()) return TypeError(f + "() got an unexpected keyword argument '" + name + "'");
    const size_t i = static_cast<size_t>(it - params.begin());
    if (out.present[i]) return TypeError(f + "() got multiple values for argument '" + name + "'");
    out.values[i] = value;
    out.present[i] = true;
  }
  for (size_t i = 0; i < required; ++i) {
    if (!out.present[i]) {
      return TypeError(f + "() missing 1 required positional argument: '" + std::string(params[i]) + "'");
    }
  }
  return out;
}

Status ExpectNoArgs(std::string_view func, const CallArgs& args) { return BindArgs(func, args, {}).status(); }

Result<int64_t> IntArg(const Value& v) {
  if (v.is_int() || v.is_bool()) return v.as_int();
  return TypeError(std::string("'") + v.TypeName() + "' object cannot be interpreted as an integer");
}

namespace {

// The sandbox's cap on range() (jinja2's MAX_RANGE).
constexpr int64_t kMaxRange = 100000;

Result<Value> Range(const CallArgs& args) {
  if (!args.keyword.empty()) return TypeError("range() takes no keyword arguments");
  const size_t n = args.positional.size();
  if (n < 1 || n > 3) return TypeError("range expected at most 3 arguments, got " + std::to_string(n));
  int64_t bounds[3] = {0, 0, 1};
  for (size_t i = 0; i < n; ++i) {
    RS_ASSIGN_OR_RETURN(bounds[n == 1 ? 1 : i], IntArg(args.positional[i]));
  }
  const auto [start, stop, step] = bounds;
  if (step == 0) return ValueError("range() arg 3 must not be zero");
  __int128 count = 0;  // 128 bits: stop - start can overflow int64
  if (step > 0 && start < stop) count = (static_cast<__int128>(stop) - start - 1) / step + 1;
  if (step < 0 && start > stop) count = (static_cast<__int128>(start) - stop - 1) / -static_cast<__int128>(step) + 1;
  if (count > kMaxRange) {
    return PyError("OverflowError", "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  }
  std::vector<Value> items;
  items.reserve(static_cast<size_t>(count));
  for (int64_t i = 0, v = start; i < count; ++i, v += step) items.push_back(Value::Int(v));
  return Value::Range(start, stop, step, std::move(items));
}

// dict(mapping, **kwargs) and namespace(mapping, **kwargs) take the same arguments.
Result<Dict> DictArgs(std::string_view func, const CallArgs& args) {
  Dict dict;
  if (args.positional.size() > 1) {
    return TypeError(std::string(func) + " expected at most 1 argument, got " + std::to_string(args.positional.size()));
  }
  if (!args.positional.empty()) {
    const Value& init = args.positional[0];
    if (!init.is_dict()) return TypeError(std::string("'") + init.TypeName() + "' object is not a mapping");
    for (const auto& [key, value] : init.dict().entries()) dict.Set(key, value);
  }
  for (const auto& [name, value] : args.keyword) dict.Set(Value::Str(name), value);
  return dict;
}

}  // namespace

bool IsGlobalFunction(std::string_view name) {
  return name == "raise_exception" || name == "strftime_now" || name == "namespace" || name == "range" ||
         name == "dict";
}

Result<Value> CallGlobal(Renderer& r, std::string_view name, const CallArgs& args) {
  if (name == "raise_exception") {
    RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(name, args, {"message"}, 1));
    // jinja2's TemplateError(message): the caller sees exactly the template's text.
    RS_ASSIGN_OR_RETURN(std::string message, r.Str(a[0]));
    return Status::InvalidArgument(std::move(message));
  }
  if (name == "strftime_now") {
    RS_ASSIGN_OR_RETURN(BoundArgs a, BindArgs(name, args, {"format"}, 1));
    if (!a[0].is_string()) return TypeError("strftime() argument 1 must be str, not " + a[0].TypeName());
    return Value::Str(Strftime(a[0].str(), r.options().now));
  }
  if (name == "range") return Range(args);
  if (name == "namespace") {
    RS_ASSIGN_OR_RETURN(Dict attrs, DictArgs(name, args));
    return r.NewNamespace(std::move(attrs));
  }
  if (name == "dict") {
    RS_ASSIGN_OR_RETURN(Dict dict, DictArgs(name, args));
    Value v = Value::FromDict(std::move(dict));
    RS_RETURN_IF_ERROR(CheckNesting(v));
    return v;
  }
  return UndefinedError(std::string("'") + std::string(name) + "' is undefined");
}

}  // namespace radixserve::jinja
