// The unescaped characters of a JSON string (U+0020 and above, except '"', '\' and the
// surrogates) as well-formed UTF-8, read byte by byte.
//
// Most of a vocabulary is such text, and most of a JSON document's tokens are read inside a
// string's character loop: the vocabulary marks which trie subtrees hold only such characters
// (TokenVocab::string_chars_below) and a walk fills those subtrees at once where the grammar
// takes any such characters (WalkRows::StringCharsReach) instead of visiting every node.
#pragma once

#include <cstdint>

namespace radixserve::grammar {

enum class StringCharState : uint8_t {
  kStart,     // between characters
  kNeed1,     // one continuation byte to go
  kNeed2,     // two
  kNeed3,     // three
  kAfterE0,   // E0: the next byte is A0..BF (no overlong forms)
  kAfterED,   // ED: 80..9F (no surrogates)
  kAfterF0,   // F0: 90..BF (no overlong forms)
  kAfterF4,   // F4: 80..8F (nothing past U+10FFFF)
  kDone,      // a character just ended (read on from kStart)
  kReject,    // not such a character
};

// Bytes of one kind step alike from every state (what a walk over kinds instead of bytes needs).
inline uint8_t StringCharByteKind(uint8_t b) {
  if (b < 0x20) return 0;
  if (b == '"') return 1;
  if (b == '\\') return 2;
  if (b < 0x80) return 3;
  if (b < 0x90) return 4;
  if (b < 0xA0) return 5;
  if (b < 0xC0) return 6;
  if (b < 0xC2) return 7;
  if (b < 0xE0) return 8;
  if (b == 0xE0) return 9;
  if (b == 0xED) return 10;
  if (b < 0xF0) return 11;
  if (b == 0xF0) return 12;
  if (b < 0xF4) return 13;
  if (b == 0xF4) return 14;
  return 15;
}

inline StringCharState StringCharStep(StringCharState s, uint8_t b) {
  using S = StringCharState;
  const bool cont = b >= 0x80 && b <= 0xBF;
  switch (s) {
    case S::kStart:
    case S::kDone:
      if (b >= 0x20 && b <= 0x7F) return b == '"' || b == '\\' ? S::kReject : S::kDone;
      if (b >= 0xC2 && b <= 0xDF) return S::kNeed1;
      if (b == 0xE0) return S::kAfterE0;
      if (b == 0xED) return S::kAfterED;
      if (b >= 0xE1 && b <= 0xEF) return S::kNeed2;
      if (b == 0xF0) return S::kAfterF0;
      if (b >= 0xF1 && b <= 0xF3) return S::kNeed3;
      if (b == 0xF4) return S::kAfterF4;
      return S::kReject;
    case S::kNeed1: return cont ? S::kDone : S::kReject;
    case S::kNeed2: return cont ? S::kNeed1 : S::kReject;
    case S::kNeed3: return cont ? S::kNeed2 : S::kReject;
    case S::kAfterE0: return b >= 0xA0 && b <= 0xBF ? S::kNeed1 : S::kReject;
    case S::kAfterED: return b >= 0x80 && b <= 0x9F ? S::kNeed1 : S::kReject;
    case S::kAfterF0: return b >= 0x90 && b <= 0xBF ? S::kNeed2 : S::kReject;
    case S::kAfterF4: return b >= 0x80 && b <= 0x8F ? S::kNeed2 : S::kReject;
    case S::kReject: return S::kReject;
  }
  return S::kReject;
}

}  // namespace radixserve::grammar
