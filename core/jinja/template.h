// Template: a Jinja chat template, parsed once and rendered like Python jinja2 3.1 renders it in
// the environment Hugging Face transformers uses for chat templates:
//
//   ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
//                                 extensions=[loopcontrols]), keep_trailing_newline=False,
//   autoescape off, `tojson` = json.dumps(x, ensure_ascii=False, indent=None, separators=None,
//   sort_keys=False), globals raise_exception(msg) and strftime_now(fmt).
//
// The output is byte for byte what jinja2 returns: values print with Python's str() (None, True,
// 0.5, 1e+16, {'a': [1]}), undefined names print as nothing, lookups try the attribute then the
// item, set inside a for loop stays in the loop, namespaces carry state out, and so on (see
// features.md in the chat template reference data for the list).
//
// Sandboxed: a template reads only its context; it has no file or network access (include,
// import and extends are refused) and cannot change lists or dicts. Every render is bounded by
// RenderLimits: total loop iterations, macro call depth, output size (which also bounds every
// string a template builds), and Parse bounds the source size.
//
// Errors (Status codes):
//   kInvalidArgument     the template called raise_exception(msg); message() is exactly msg
//   kFailedPrecondition  a runtime error jinja2 would raise as a Python exception, e.g.
//                        "line 12: TypeError: can only concatenate str (not "NoneType") to str"
//   kCorrupt             Parse: a syntax error, e.g. "line 3: syntax error: unexpected '}'"
//   kUnsupported         something this engine does not implement, e.g. "line 12: unknown
//                        filter 'xmlattr'", "line 1: the 'include' tag ..." (from Parse; from
//                        Render for an unknown filter or test inside an if, as jinja2 does)
//   kResourceExhausted   a limit was reached (source size, nesting, iterations, depth, output)
//
// A Template is immutable after Parse; Render may be called from any number of threads at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/util/status.h"

namespace radixserve::jinja {

struct RenderLimits {
  size_t max_output_bytes = 1 << 20;     // the rendered text, and any string built on the way
  int64_t max_loop_iterations = 100000;  // all loops of one render together
  int max_call_depth = 64;               // nested macro calls
  size_t max_source_bytes = 256 << 10;   // checked by Parse
};

struct RenderOptions {
  // What strftime_now() formats, as a UTC calendar time (the reference data uses 2026-01-15
  // 12:00:00; a server passes the current time).
  std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
  RenderLimits limits;
};

class Template {
 public:
  static Result<Template> Parse(std::string_view source, const RenderLimits& limits = {});

  // context: a JSON object whose members become the template's variables, in key order
  // (messages, tools, add_generation_prompt, bos_token, eos_token, and any extra kwargs). A
  // member absent from the object is undefined in the template, unlike one that is null (None).
  // A null context is an empty one.
  Result<std::string> Render(const nlohmann::ordered_json& context, const RenderOptions& options) const;

 private:
  struct Parsed;
  explicit Template(std::shared_ptr<const Parsed> parsed) : parsed_(std::move(parsed)) {}
  std::shared_ptr<const Parsed> parsed_;
};

}  // namespace radixserve::jinja
