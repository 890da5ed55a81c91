// Errors of the Jinja engine, worded like the Python exceptions jinja2 would raise.
//
// Status codes (documented for callers in template.h):
//   kInvalidArgument     raise_exception(msg) in the template; the message is exactly msg
//   kFailedPrecondition  a Python-style runtime error: "line N: TypeError: ...", UndefinedError...
//   kCorrupt             a syntax error in the template source
//   kUnsupported         a construct this engine does not implement (include, an unknown filter)
//   kResourceExhausted   a limit of RenderLimits was reached
#pragma once

#include <string>
#include <string_view>

#include "core/util/status.h"

namespace radixserve::jinja {

inline Status PyError(std::string_view type, std::string_view message) {
  return Status::FailedPrecondition(std::string(type) + ": " + std::string(message));
}
inline Status TypeError(std::string_view m) { return PyError("TypeError", m); }
inline Status ValueError(std::string_view m) { return PyError("ValueError", m); }
inline Status UndefinedError(std::string_view m) { return PyError("UndefinedError", m); }
inline Status SecurityError(std::string_view m) { return PyError("SecurityError", m); }
inline Status LimitError(std::string_view m) { return Status::ResourceExhausted(std::string(m)); }

}  // namespace radixserve::jinja
