#include "core/tokenizer/unicode.h"

#include <algorithm>

namespace radixserve::tokenizer {
namespace unicode_internal {

namespace {
constexpr uint16_t N = kNumber, P = kPunctuation, S = kSymbol, C = kOther;
constexpr uint16_t W = kWhitespace;
constexpr uint16_t U = kLetter | kUpperOrTitle, L = kLetter | kLower;
}  // namespace

// ASCII categories as in Unicode (A-Z are Lu, a-z Ll); \t..\r and space are White_Space.
const uint16_t kAsciiFlags[128] = {
    C, C, C, C, C, C, C, C, C, C | W, C | W, C | W, C | W, C | W, C, C,          // 0x00
    C, C, C, C, C, C, C, C, C, C, C, C, C, C, C, C,                              // 0x10
    kSeparator | W, P, P, P, S, P, P, P, P, P, P, S, P, P, P, P,                 // 0x20 ' '..'/'
    N, N, N, N, N, N, N, N, N, N, P, P, S, S, S, P,                              // 0x30 '0'..'?'
    P, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U,                              // 0x40 '@'..'O'
    U, U, U, U, U, U, U, U, U, U, U, P, P, P, S, P,                              // 0x50 'P'..'_'
    S, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L,                              // 0x60 '`'..'o'
    L, L, L, L, L, L, L, L, L, L, L, P, S, P, S, C,                              // 0x70 'p'..DEL
};

uint16_t LookupFlags(uint32_t cp) {
  if (cp > 0x10FFFF) return kOther;
  const CodepointRun* begin = kCodepointRuns;
  const CodepointRun* end = kCodepointRuns + kNumCodepointRuns;
  // The last run whose first code point is <= cp.
  const CodepointRun* it =
      std::upper_bound(begin, end, cp, [](uint32_t v, const CodepointRun& r) { return v < r.first; });
  return (it - 1)->flags;
}

}  // namespace unicode_internal

uint32_t DecodeUtf8(std::string_view text, size_t* pos) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = *pos;
  const uint8_t b0 = s[i];
  const size_t len = Utf8SeqLen(b0);
  if (len == 1) {
    *pos = i + 1;
    return b0 < 0x80 ? b0 : 0xFFFD;
  }
  if (i + len > n) {
    *pos = i + 1;
    return 0xFFFD;
  }
  uint32_t cp = b0 & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((s[i + k] & 0xC0) != 0x80) {
      *pos = i + 1;
      return 0xFFFD;
    }
    cp = (cp << 6) | (s[i + k] & 0x3F);
  }
  *pos = i + len;
  return cp;
}

void DecodeUtf8All(std::string_view text, std::vector<uint32_t>* cps, std::vector<uint32_t>* offsets) {
  cps->clear();
  cps->reserve(text.size());
  if (offsets) {
    offsets->clear();
    offsets->reserve(text.size() + 1);
  }
  size_t pos = 0;
  while (pos < text.size()) {
    if (offsets) offsets->push_back(static_cast<uint32_t>(pos));
    cps->push_back(DecodeUtf8(text, &pos));
  }
  if (offsets) offsets->push_back(static_cast<uint32_t>(text.size()));
}

void AppendUtf8(uint32_t cp, std::string* out) {
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

}  // namespace radixserve::tokenizer
