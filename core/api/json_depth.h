// The nesting depth of a JSON text, measured before parsing it: copying and dumping a parsed value
// recurse, so a hostile deeply nested text is refused first. Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace radixserve::api {

// Deepest array/object nesting of a JSON text (brackets inside strings do not count); stops
// counting once past `limit`. Malformed text is left for the parser to refuse.
inline int32_t JsonDepth(std::string_view text, int32_t limit) {
  int32_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace radixserve::api
