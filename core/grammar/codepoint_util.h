// Code-point helpers shared by the text front-ends (regex.cc, gbnf.cc): UTF-8 decoding and
// encoding, sets of code points as sorted inclusive ranges, and the cheapest grammar spelling of
// such a set. Internal to core/grammar; not part of its public API.
//
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/grammar/grammar.h"

namespace radixserve::grammar::internal {

inline constexpr uint32_t kMaxCodepoint = 0x10FFFF;

// Inclusive code-point ranges. "Normalized": sorted, non-overlapping, non-adjacent.
using CpRanges = std::vector<std::pair<uint32_t, uint32_t>>;

inline void NormalizeRanges(CpRanges* r) {
  std::sort(r->begin(), r->end());
  CpRanges out;
  for (const auto& [lo, hi] : *r) {
    if (!out.empty() && lo <= out.back().second + 1) {
      out.back().second = std::max(out.back().second, hi);
    } else {
      out.emplace_back(lo, hi);
    }
  }
  *r = std::move(out);
}

// The code points of 0..kMaxCodepoint not in `r` (which must be normalized).
inline CpRanges ComplementRanges(const CpRanges& r) {
  CpRanges out;
  uint32_t next = 0;
  for (const auto& [lo, hi] : r) {
    if (lo > next) out.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kMaxCodepoint) out.emplace_back(next, kMaxCodepoint);
  return out;
}

// `r` without the code points in [lo, hi] (r normalized; the result is too).
inline CpRanges SubtractRange(const CpRanges& r, uint32_t lo, uint32_t hi) {
  CpRanges out;
  for (const auto& [a, b] : r) {
    if (b < lo || a > hi) {
      out.emplace_back(a, b);
      continue;
    }
    if (a < lo) out.emplace_back(a, lo - 1);
    if (b > hi) out.emplace_back(hi + 1, b);
  }
  return out;
}

inline bool RangesContain(const CpRanges& r, uint32_t cp) {
  for (const auto& [lo, hi] : r) {
    if (cp >= lo && cp <= hi) return true;
  }
  return false;
}

// Drops the surrogates D800..DFFF, which UTF-8 text cannot hold (r normalized).
inline CpRanges WithoutSurrogates(const CpRanges& r) { return SubtractRange(r, 0xD800, 0xDFFF); }

// Decodes one UTF-8 code point of `s` at `pos` (strictly: no overlong forms, no surrogates, no
// value past U+10FFFF). Returns its length in bytes, or 0 when the bytes there are not UTF-8.
inline size_t DecodeUtf8(std::string_view s, size_t pos, uint32_t* cp) {
  if (pos >= s.size()) return 0;
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t b0 = byte(pos);
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  size_t len;
  uint32_t v, min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, v = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, v = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, v = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (pos + len > s.size()) return 0;
  for (size_t i = 1; i < len; ++i) {
    const uint8_t c = byte(pos + i);
    if ((c & 0xC0) != 0x80) return 0;
    v = (v << 6) | (c & 0x3F);
  }
  if (v < min || v > kMaxCodepoint || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

inline void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// `s` cut to about `max_bytes`, made safe to embed in an error message (which may end up in a
// JSON response, where invalid UTF-8 cannot go): valid UTF-8 is kept, control characters and
// invalid bytes are written as \n, \t, \r or \xNN, and a cut is marked with "...".
inline std::string PrintableText(std::string_view s, size_t max_bytes) {
  std::string out;
  size_t pos = 0;
  while (pos < s.size()) {
    if (out.size() >= max_bytes) {
      out += "...";
      break;
    }
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(s, pos, &cp);
    if (len == 0 || cp < 0x20 || cp == 0x7F) {
      const uint8_t byte = static_cast<uint8_t>(s[pos]);
      if (byte == '\n') {
        out += "\\n";
      } else if (byte == '\t') {
        out += "\\t";
      } else if (byte == '\r') {
        out += "\\r";
      } else {
        static const char kHex[] = "0123456789ABCDEF";
        out += "\\x";
        out.push_back(kHex[byte >> 4]);
        out.push_back(kHex[byte & 15]);
      }
      ++pos;
      continue;
    }
    out.append(s.substr(pos, len));
    pos += len;
  }
  return out;
}

// The cheapest symbols matching one code point of `r` (normalized, surrogates allowed and
// ignored): the bytes of a single code point, one byte-set symbol when every member is ASCII,
// else a CodepointRanges rule. `r` must not be empty once surrogates are dropped.
inline Sequence CodepointSetSymbols(GrammarBuilder& b, const CpRanges& r, std::string_view name) {
  const CpRanges set = WithoutSurrogates(r);
  if (set.size() == 1 && set[0].first == set[0].second) {
    std::string bytes;
    AppendUtf8(set[0].first, &bytes);
    return b.Literal(bytes);
  }
  if (!set.empty() && set.back().second < 0x80) {
    ByteSet bytes;
    for (const auto& [lo, hi] : set) bytes.AddRange(static_cast<uint8_t>(lo), static_cast<uint8_t>(hi));
    return {b.Bytes(bytes)};
  }
  return {b.CodepointRanges(set, name)};
}

}  // namespace radixserve::grammar::internal
