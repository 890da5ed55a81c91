#include "core/tool_calls/marker_search.h"

#include <algorithm>

namespace radixserve::tool_calls {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t PartialMarkerLength(std::string_view text, std::string_view marker) {
  size_t longest = std::min(text.size(), marker.size() - 1);
  for (size_t n = longest; n > 0; --n) {
    if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
  }
  return 0;
}

MarkerMatch FindMarker(std::string_view text, const std::vector<std::string_view>& markers, bool at_end) {
  MarkerMatch m;
  for (size_t i = 0; i < markers.size(); ++i) {
    size_t at = text.find(markers[i]);
    if (at != std::string_view::npos && (!m.found || at < m.at)) {
      m.found = true;
      m.at = at;
      m.marker = i;
    }
  }
  if (m.found) return m;
  size_t hold = 0;
  if (!at_end) {
    for (std::string_view marker : markers) hold = std::max(hold, PartialMarkerLength(text, marker));
  }
  m.safe = text.size() - hold;
  return m;
}

Prefix MatchOneAfterSpace(std::string_view text, const std::vector<std::string_view>& literals, bool at_end,
                          size_t* which, size_t* length) {
  bool matched = false;
  for (size_t i = 0; i < literals.size(); ++i) {
    size_t n = 0;
    switch (MatchAfterSpace(text, literals[i], at_end, &n)) {
      case Prefix::kYes:
        if (!matched || n > *length) {
          *which = i;
          *length = n;
        }
        matched = true;
        break;
      case Prefix::kMaybe:
        // A longer literal may still match (a match of another is then a prefix of it): wait.
        return Prefix::kMaybe;
      case Prefix::kNo:
        break;
    }
  }
  return matched ? Prefix::kYes : Prefix::kNo;
}

Prefix MatchAfterSpace(std::string_view text, std::string_view literal, bool at_end, size_t* length) {
  size_t i = 0;
  while (i < text.size() && IsSpace(text[i])) ++i;
  std::string_view rest = text.substr(i);
  if (rest.size() >= literal.size()) {
    if (rest.substr(0, literal.size()) != literal) return Prefix::kNo;
    *length = i + literal.size();
    return Prefix::kYes;
  }
  if (at_end || literal.substr(0, rest.size()) != rest) return Prefix::kNo;
  return Prefix::kMaybe;
}

}  // namespace radixserve::tool_calls
