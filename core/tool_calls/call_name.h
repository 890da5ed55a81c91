// Which bytes a function name (or a call id) written in call markup may hold, so that a reader can
// tell a name from ordinary text at the first byte that cannot be one. Pure, thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace radixserve::tool_calls {

// Longer than any function name an API accepts (OpenAI: 64).
inline constexpr size_t kMaxCallNameLength = 256;

// Letters, digits and _ - . : (OpenAI allows [A-Za-z0-9_-]; dotted and namespaced names are seen).
inline bool IsCallNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || c == ':';
}

// The length of the run of name bytes at the start of `text`.
inline size_t CallNameLength(std::string_view text) {
  size_t n = 0;
  while (n < text.size() && IsCallNameChar(text[n])) ++n;
  return n;
}

}  // namespace radixserve::tool_calls
