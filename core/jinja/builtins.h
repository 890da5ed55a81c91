// The built-in filters, tests, global functions and methods (str, dict, list) of the engine,
// looked up by name. Internal to core/jinja.
//
// Filters and tests are resolved when a template is parsed (an unknown name is a parse error, as
// in jinja2); methods and globals are resolved when they are called. Lookups are pure; the
// functions run inside one render and use its Renderer.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/jinja/value.h"
#include "core/util/status.h"

namespace radixserve::jinja {

class Renderer;

// The arguments of a call: positional, then keyword in the order written.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

using FilterFn = Result<Value> (*)(Renderer& r, const Value& input, const CallArgs& args);
using TestFn = Result<bool> (*)(Renderer& r, const Value& input, const CallArgs& args);

// nullptr when there is no such filter / test.
FilterFn FindFilter(std::string_view name);
TestFn FindTest(std::string_view name);
// The filters over sequences (filters_seq.cc), which FindFilter also searches.
FilterFn FindSequenceFilter(std::string_view name);

// Global functions: raise_exception, strftime_now, namespace, range, dict.
bool IsGlobalFunction(std::string_view name);
Result<Value> CallGlobal(Renderer& r, std::string_view name, const CallArgs& args);

// Whether obj.name is a method (str, dict and list methods; the sandbox's unsafe ones included,
// which fail with SecurityError when called).
bool HasMethod(const Value& obj, std::string_view name);
Result<Value> CallMethod(Renderer& r, const Value& self, std::string_view name, const CallArgs& args);

// Binds args to a Python-style signature: params in order (positional or keyword), the first
// `required` of them required. Missing optional ones are left as nullopt-like Undefined with
// `present[i] == false`. Fails with Python's TypeError wording.
struct BoundArgs {
  std::vector<Value> values;
  std::vector<bool> present;
  bool has(size_t i) const { return present[i]; }
  const Value& operator[](size_t i) const { return values[i]; }
};
Result<BoundArgs> BindArgs(std::string_view func, const CallArgs& args, const std::vector<std::string_view>& params,
                           size_t required = 0);
// For built-ins without parameters: fails when any argument was passed.
Status ExpectNoArgs(std::string_view func, const CallArgs& args);
// An argument Python uses as an integer (int or bool), failing with Python's TypeError otherwise.
Result<int64_t> IntArg(const Value& v);

}  // namespace radixserve::jinja
