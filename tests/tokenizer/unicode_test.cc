// Unicode helpers: category lookup, UTF-8 decoding/encoding, the byte-level alphabet.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/tokenizer/byte_level.h"
#include "core/tokenizer/tokenizer.h"
#include "core/tokenizer/unicode.h"

namespace radixserve::tokenizer {
namespace {

uint16_t Major(uint32_t cp) { return CodepointFlagsOf(cp) & kMajorCategoryMask; }
uint16_t Case(uint32_t cp) { return CodepointFlagsOf(cp) & (kUpperOrTitle | kLower); }
bool Space(uint32_t cp) { return (CodepointFlagsOf(cp) & kWhitespace) != 0; }

TEST(UnicodeTest, AsciiFastPathAgreesWithGeneratedTable) {
  for (uint32_t cp = 0; cp < 128; ++cp) {
    EXPECT_EQ(unicode_internal::kAsciiFlags[cp], unicode_internal::LookupFlags(cp)) << "U+" << std::hex << cp;
  }
}

TEST(UnicodeTest, Categories) {
  EXPECT_EQ(Major('A'), kLetter);
  EXPECT_EQ(Major(0xE9), kLetter);      // é
  EXPECT_EQ(Major(0x65E5), kLetter);    // 日 (Lo)
  EXPECT_EQ(Major('7'), kNumber);
  EXPECT_EQ(Major(0x0661), kNumber);    // Arabic-Indic one (Nd)
  EXPECT_EQ(Major(0xBD), kNumber);      // ½ (No)
  EXPECT_EQ(Major(0x216B), kNumber);    // Ⅻ (Nl)
  EXPECT_EQ(Major(','), kPunctuation);
  EXPECT_EQ(Major(0x2014), kPunctuation);  // em dash (Pd)
  EXPECT_EQ(Major(0x3002), kPunctuation);  // 。
  EXPECT_EQ(Major('$'), kSymbol);       // Sc, not punctuation
  EXPECT_EQ(Major('+'), kSymbol);       // Sm
  EXPECT_EQ(Major(0x20AC), kSymbol);    // €
  EXPECT_EQ(Major(0x1F999), kSymbol);   // 🦙 (So)
  EXPECT_EQ(Major(0x0301), kMark);      // combining acute
  EXPECT_EQ(Major(0xA0), kSeparator);
  EXPECT_EQ(Major(0x10FFFF), kOther);   // noncharacter
  EXPECT_EQ(Major(0xD800), kOther);     // surrogate
  EXPECT_EQ(Major(0x110000), kOther);   // beyond Unicode
}

TEST(UnicodeTest, LetterCase) {
  EXPECT_EQ(Case('A'), kUpperOrTitle);
  EXPECT_EQ(Case('z'), kLower);
  EXPECT_EQ(Case(0xC9), kUpperOrTitle);  // É (Lu)
  EXPECT_EQ(Case(0xE9), kLower);         // é (Ll)
  EXPECT_EQ(Case(0x1C5), kUpperOrTitle); // ǅ (Lt)
  EXPECT_EQ(Case(0x3A9), kUpperOrTitle); // Ω (Lu)
  EXPECT_EQ(Case(0x3C9), kLower);        // ω (Ll)
  EXPECT_EQ(Case(0x2B0), 0);             // ʰ (Lm)
  EXPECT_EQ(Case(0x65E5), 0);            // 日 (Lo)
  EXPECT_EQ(Case(0x0301), 0);            // combining acute (Mn)
  EXPECT_EQ(Case('1'), 0);
  EXPECT_EQ(Case(0x1D400), kUpperOrTitle);  // mathematical bold A (Lu)
  EXPECT_EQ(Case(0x1D41A), kLower);         // mathematical bold a (Ll)
}

TEST(UnicodeTest, WhiteSpaceProperty) {
  for (uint32_t cp : {0x09u, 0x0Au, 0x0Bu, 0x0Cu, 0x0Du, 0x20u, 0x85u, 0xA0u, 0x1680u, 0x2000u, 0x200Au, 0x2028u,
                      0x2029u, 0x202Fu, 0x205Fu, 0x3000u}) {
    EXPECT_TRUE(Space(cp)) << "U+" << std::hex << cp;
  }
  for (uint32_t cp : {0x1Cu, 0x1Fu, 0x200Bu, 0x2581u, static_cast<uint32_t>('a'), 0xFEFFu}) {
    EXPECT_FALSE(Space(cp)) << "U+" << std::hex << cp;
  }
}

TEST(UnicodeTest, Utf8RoundTripAndInvalidBytes) {
  std::string s;
  for (uint32_t cp : {0x41u, 0xE9u, 0x20ACu, 0x1F999u}) AppendUtf8(cp, &s);
  EXPECT_EQ(s, "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\xA6\x99");
  std::vector<uint32_t> cps, offsets;
  DecodeUtf8All(s, &cps, &offsets);
  EXPECT_EQ(cps, (std::vector<uint32_t>{0x41, 0xE9, 0x20AC, 0x1F999}));
  EXPECT_EQ(offsets, (std::vector<uint32_t>{0, 1, 3, 6, 10}));

  // A stray continuation byte and a truncated sequence each decode as U+FFFD, one byte each.
  DecodeUtf8All("\x80" "a\xE2\x82", &cps, &offsets);
  EXPECT_EQ(cps, (std::vector<uint32_t>{0xFFFD, 'a', 0xFFFD, 0xFFFD}));
  EXPECT_EQ(offsets, (std::vector<uint32_t>{0, 1, 2, 3, 4}));
}

TEST(UnicodeTest, Utf8CompleteLength) {
  EXPECT_EQ(Utf8CompleteLength(""), 0u);
  EXPECT_EQ(Utf8CompleteLength("abc"), 3u);
  EXPECT_EQ(Utf8CompleteLength("a\xC3\xA9"), 3u);           // complete é
  EXPECT_EQ(Utf8CompleteLength("a\xC3"), 1u);               // é cut after its lead byte
  EXPECT_EQ(Utf8CompleteLength("a\xF0\x9F\xA6"), 1u);       // 4-byte sequence missing one byte
  EXPECT_EQ(Utf8CompleteLength("a\xF0\x9F\xA6\x99"), 5u);
  EXPECT_EQ(Utf8CompleteLength("\x80\x80\x80\x80"), 4u);   // no lead byte nearby: nothing to wait for
}

TEST(ByteLevelTest, AlphabetIsABijection) {
  std::vector<bool> seen(0x200, false);
  for (int b = 0; b < 256; ++b) {
    const uint32_t cp = ByteToSymbol(static_cast<uint8_t>(b));
    ASSERT_LT(cp, seen.size());
    EXPECT_FALSE(seen[cp]) << "two bytes map to U+" << std::hex << cp;
    seen[cp] = true;
    EXPECT_EQ(SymbolToByte(cp), b);
  }
  EXPECT_EQ(ByteToSymbol(' '), 0x120u);   // Ġ
  EXPECT_EQ(ByteToSymbol('\n'), 0x10Au);  // Ċ
  EXPECT_EQ(ByteToSymbol('A'), static_cast<uint32_t>('A'));
  EXPECT_EQ(SymbolToByte(0x2581), -1);
}

TEST(ByteLevelTest, EncodeDecodeAllBytes) {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  std::string spelled;
  EncodeByteLevel(bytes, &spelled);
  EXPECT_EQ(DecodeByteLevel(spelled), bytes);
  EXPECT_EQ(DecodeByteLevel("\xC4\xA0world"), " world");  // "Ġworld"
}

}  // namespace
}  // namespace radixserve::tokenizer
