// Code-point helpers shared by the text front-ends (regex.cc, gbnf.cc, and any other regex
// reader of core/grammar): UTF-8 decoding and encoding, sets of code points as sorted inclusive
// ranges, ECMAScript's class escapes and `.` as sets (EcmaClassEscape, EcmaDotSet), safe display
// of user text in errors, and the cheapest grammar spelling of a set. Internal to core/grammar;
// not part of its public API.
//
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <iterator>
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

// Class escapes. JSON Schema says ECMAScript, but validators commonly run Python's `re` (the
// reference validator does), and the two disagree on some code points. Each escape therefore has
// two sets: `narrow`, what both engines put in it, used where the escape adds code points (\d,
// [\d.]); and `wide`, what either engine puts in it, used where it takes code points away (a
// negated class [^\d]). A generated string then passes both engines; the price is that a few
// ECMAScript-valid strings (U+FEFF for \s, a Unicode digit for \D, a letter like é for \W) are
// refused.
struct ClassEscapeSets {
  CpRanges narrow, wide;
};

// Python's \d: Unicode's decimal digits (category Nd, Unicode 14); ECMAScript's is [0-9].
inline constexpr std::pair<uint32_t, uint32_t> kUnicodeDecimalDigits[] = {
    {0x30, 0x39},       {0x660, 0x669},     {0x6F0, 0x6F9},     {0x7C0, 0x7C9},     {0x966, 0x96F},
    {0x9E6, 0x9EF},     {0xA66, 0xA6F},     {0xAE6, 0xAEF},     {0xB66, 0xB6F},     {0xBE6, 0xBEF},
    {0xC66, 0xC6F},     {0xCE6, 0xCEF},     {0xD66, 0xD6F},     {0xDE6, 0xDEF},     {0xE50, 0xE59},
    {0xED0, 0xED9},     {0xF20, 0xF29},     {0x1040, 0x1049},   {0x1090, 0x1099},   {0x17E0, 0x17E9},
    {0x1810, 0x1819},   {0x1946, 0x194F},   {0x19D0, 0x19D9},   {0x1A80, 0x1A89},   {0x1A90, 0x1A99},
    {0x1B50, 0x1B59},   {0x1BB0, 0x1BB9},   {0x1C40, 0x1C49},   {0x1C50, 0x1C59},   {0xA620, 0xA629},
    {0xA8D0, 0xA8D9},   {0xA900, 0xA909},   {0xA9D0, 0xA9D9},   {0xA9F0, 0xA9F9},   {0xAA50, 0xAA59},
    {0xABF0, 0xABF9},   {0xFF10, 0xFF19},   {0x104A0, 0x104A9}, {0x10D30, 0x10D39}, {0x11066, 0x1106F},
    {0x110F0, 0x110F9}, {0x11136, 0x1113F}, {0x111D0, 0x111D9}, {0x112F0, 0x112F9}, {0x11450, 0x11459},
    {0x114D0, 0x114D9}, {0x11650, 0x11659}, {0x116C0, 0x116C9}, {0x11730, 0x11739}, {0x118E0, 0x118E9},
    {0x11950, 0x11959}, {0x11C50, 0x11C59}, {0x11D50, 0x11D59}, {0x11DA0, 0x11DA9}, {0x16A60, 0x16A69},
    {0x16AC0, 0x16AC9}, {0x16B50, 0x16B59}, {0x1D7CE, 0x1D7FF}, {0x1E140, 0x1E149}, {0x1E2F0, 0x1E2F9},
    {0x1E950, 0x1E959}, {0x1FBF0, 0x1FBF9}};

// Code points outside \w in both engines. Python's \w takes every Unicode letter and digit, a
// table of some 700 ranges; instead of it this lists ASCII's non-word characters and the blocks
// of punctuation, symbols and emoji that hold no letter or digit, so \W refuses other non-ASCII
// code points (a known gap, in the conservative direction).
inline constexpr std::pair<uint32_t, uint32_t> kNonWordBoth[] = {
    {0x00, 0x2F},     {0x3A, 0x40},     {0x5B, 0x5E},     {0x60, 0x60},     {0x7B, 0xA9},
    {0xAB, 0xB1},     {0xB4, 0xB4},     {0xB6, 0xB8},     {0xBB, 0xBB},     {0xBF, 0xBF},
    {0xD7, 0xD7},     {0xF7, 0xF7},     {0x1680, 0x1680}, {0x2000, 0x206F}, {0x20A0, 0x20C0},
    {0x2190, 0x245F}, {0x2500, 0x2775}, {0x2794, 0x2BFF}, {0x3000, 0x3004}, {0x3008, 0x3020},
    {0xFEFF, 0xFEFF}, {0xFF01, 0xFF0F}, {0x1F300, 0x1FAFF}};

inline CpRanges NormalizedRanges(CpRanges r) {
  NormalizeRanges(&r);
  return r;
}
template <size_t N>
inline CpRanges RangesFromTable(const std::pair<uint32_t, uint32_t> (&table)[N]) {
  return NormalizedRanges(CpRanges(std::begin(table), std::end(table)));
}
inline ClassEscapeSets ComplementedEscape(const ClassEscapeSets& e) {
  return {ComplementRanges(e.wide), ComplementRanges(e.narrow)};
}

inline ClassEscapeSets DigitEscapeSets() { return {{{'0', '9'}}, RangesFromTable(kUnicodeDecimalDigits)}; }
inline ClassEscapeSets WordEscapeSets() {
  return {{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}, ComplementRanges(RangesFromTable(kNonWordBoth))};
}
// \s: ECMAScript's WhiteSpace and LineTerminator (TAB LF VT FF CR SP NBSP ZWNBSP, category Zs, LS
// PS); Python's lacks ZWNBSP (U+FEFF) and adds U+001C..U+001F and U+0085.
inline ClassEscapeSets SpaceEscapeSets() {
  CpRanges both = {{0x09, 0x0D},     {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
                   {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}};
  CpRanges either = both;
  either.insert(either.end(), {{0xFEFF, 0xFEFF}, {0x1C, 0x1F}, {0x85, 0x85}});
  return {NormalizedRanges(both), NormalizedRanges(either)};
}
// ECMAScript's `.` without the s flag: any code point but LF, CR, LS and PS (Python's takes
// more, excluding only LF).
inline CpRanges EcmaDotSet() {
  CpRanges all = {{0, kMaxCodepoint}};
  all = SubtractRange(all, '\n', '\n');
  all = SubtractRange(all, '\r', '\r');
  return SubtractRange(all, 0x2028, 0x2029);
}

// The sets of the class escape \<letter>, letter one of d D w W s S.
inline ClassEscapeSets EcmaClassEscape(char letter) {
  switch (letter) {
    case 'd': return DigitEscapeSets();
    case 'D': return ComplementedEscape(DigitEscapeSets());
    case 'w': return WordEscapeSets();
    case 'W': return ComplementedEscape(WordEscapeSets());
    case 's': return SpaceEscapeSets();
    default: return ComplementedEscape(SpaceEscapeSets());  // 'S'
  }
}

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
