// FindMarker: where the first of several literal markers occurs in text that is still arriving.
//
// Text that may be the beginning of a marker cut off by the end of what has arrived is not safe to
// pass on yet: the result says how much is. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace radixserve::tool_calls {

struct MarkerMatch {
  bool found = false;
  size_t at = 0;      // found: where the earliest marker begins
  size_t marker = 0;  // found: its index in the list
  size_t safe = 0;    // not found: how many leading bytes can be no part of a marker
};

// Searches `text` for `markers` (no marker may be a substring of another). `at_end`: no more text
// will follow, so nothing needs holding back.
MarkerMatch FindMarker(std::string_view text, const std::vector<std::string_view>& markers, bool at_end);

// The length of the longest end of `text` that is a proper beginning of `marker`.
size_t PartialMarkerLength(std::string_view text, std::string_view marker);

// Whether `text` starts with `literal` after optional whitespace: kYes (and `*length` covers both),
// kNo, or kMaybe when the text ends before it can tell (never when `at_end`).
enum class Prefix : uint8_t { kYes, kNo, kMaybe };
Prefix MatchAfterSpace(std::string_view text, std::string_view literal, bool at_end, size_t* length);
// The same for several literals: kYes for the longest that matches (`*which` is its index) once no
// longer one can still match.
Prefix MatchOneAfterSpace(std::string_view text, const std::vector<std::string_view>& literals, bool at_end,
                          size_t* which, size_t* length);

bool IsSpace(char c);

}  // namespace radixserve::tool_calls
