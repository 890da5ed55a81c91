// Unicode helpers for the tokenizers: UTF-8 decoding/encoding and code point categories.
//
// Categories come from a generated run table (unicode_tables.cc, made by
// tools/gen_unicode_tables.py) with an ASCII fast path. All functions are pure
// and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace radixserve::tokenizer {

// Flags of one code point: exactly one major general category bit, plus kWhitespace, plus
// for letters the case of Lu/Lt (kUpperOrTitle) or Ll (kLower); Lm and Lo have neither.
enum CodepointFlags : uint16_t {
  kLetter = 1,       // \p{L}
  kNumber = 2,       // \p{N}
  kPunctuation = 4,  // \p{P}
  kSymbol = 8,       // \p{S}
  kMark = 16,        // \p{M}
  kSeparator = 32,   // \p{Z}
  kOther = 64,       // \p{C} (controls, unassigned, surrogates, private use)
  kWhitespace = 128, // White_Space property, i.e. regex \s
  kUpperOrTitle = 256,  // \p{Lu} or \p{Lt} (with kLetter)
  kLower = 512,         // \p{Ll} (with kLetter)
};
constexpr uint16_t kMajorCategoryMask = 127;

namespace unicode_internal {
struct CodepointRun {
  uint32_t first;  // first code point of the run; the run ends where the next begins
  uint16_t flags;
};
extern const CodepointRun kCodepointRuns[];
extern const size_t kNumCodepointRuns;
uint16_t LookupFlags(uint32_t cp);  // table search for non-ASCII code points
extern const uint16_t kAsciiFlags[128];
}  // namespace unicode_internal

inline uint16_t CodepointFlagsOf(uint32_t cp) {
  return cp < 128 ? unicode_internal::kAsciiFlags[cp] : unicode_internal::LookupFlags(cp);
}

// Length of the UTF-8 sequence that starts with byte `b` (1 for stray continuation bytes).
inline size_t Utf8SeqLen(uint8_t b) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[b >> 4];
}

// Decodes one code point at text[*pos] and advances *pos. Invalid or truncated
// sequences decode as U+FFFD and consume one byte, so every byte is visited.
uint32_t DecodeUtf8(std::string_view text, size_t* pos);

// Decodes all of `text`; `offsets` (optional) receives the byte offset of each code point
// and one final entry equal to text.size().
void DecodeUtf8All(std::string_view text, std::vector<uint32_t>* cps, std::vector<uint32_t>* offsets);

// Appends the UTF-8 encoding of `cp` to `out`.
void AppendUtf8(uint32_t cp, std::string* out);

}  // namespace radixserve::tokenizer
