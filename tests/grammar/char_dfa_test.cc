// CharDfa (core/grammar/char_dfa.h), the string automata behind the JSON Schema front-end:
// regexes are checked against std::regex (ECMAScript) on every string up to length 5 over a
// small alphabet, products and complements against the set operations they stand for, and the
// JSON-string emitter with the byte recognizer.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "core/grammar/char_dfa.h"
#include "tests/grammar/byte_recognizer.h"

namespace radixserve::grammar::internal {
namespace {

std::vector<std::string> AllStrings(const std::string& alphabet, size_t max_len) {
  std::vector<std::string> out{""};
  for (size_t begin = 0, len = 1; len <= max_len; ++len) {
    const size_t end = out.size();
    for (size_t i = begin; i < end; ++i)
      for (char c : alphabet) out.push_back(out[i] + c);
    begin = end;
  }
  return out;
}

std::u32string U32(const std::string& s) {
  std::u32string out;
  EXPECT_TRUE(DecodeUtf8String(s, &out));
  return out;
}

CharDfa Must(std::string_view pattern, bool search) {
  auto d = CharDfa::FromRegex(pattern, search, 20000);
  EXPECT_TRUE(d.ok()) << pattern << ": " << d.status().ToString();
  return d.ok() ? std::move(d).value() : CharDfa();
}

TEST(CharDfa, RegexMatchesStdRegex) {
  const std::vector<std::string> patterns = {
      "a",        "^a",        "a$",         "^a$",          "a|b",          "(ab)*",       "^(ab)*$",
      "a{2,3}",   "^a{2,3}$",  "[^a]",       "^[^a]*$",      "a?b+",         "^(a|bc)*$",   "[a-c]{2}",
      ".",        "^$",        "^(?:a|)b$",  "a.c",          "\\w\\W",       "^\\d*$",      "^(?!a)[ab]+$",
      "^(?=.*b).*c$", "b{0}",  "^a{1,}b?$",  "[\\w-]c",      "^[-a]$",       "a|^b|c$",     "^(a|b)*?c$",
      "^a{2}$|^c"};
  const auto strings = AllStrings("abc-1", 5);
  for (const std::string& p : patterns) {
    const CharDfa search = Must(p, true), full = Must(p, false);
    const std::regex re(p, std::regex::ECMAScript);
    for (const std::string& s : strings) {
      const std::u32string u = U32(s);
      ASSERT_EQ(search.Matches(u), std::regex_search(s, re)) << "pattern " << p << " search in '" << s << "'";
      ASSERT_EQ(full.Matches(u), std::regex_match(s, re)) << "pattern " << p << " match of '" << s << "'";
    }
  }
}

TEST(CharDfa, AnnexBLeniencies) {
  // What std::regex refuses but ECMAScript's Annex B (and real patterns) allow.
  EXPECT_TRUE(Must("^x{$", false).Matches(U"x{"));
  EXPECT_TRUE(Must("^a{,2}$", false).Matches(U"a{,2}"));
  EXPECT_TRUE(Must("[]", true).IsEmpty());
  EXPECT_TRUE(Must("^[^]$", false).Matches(U"\n"));
  EXPECT_TRUE(Must("^[^]$", false).Matches(U"\U0001F600"));
}

TEST(CharDfa, FollowsPythonWhereEcmaScriptDiffers) {
  // \s as the reference validator (Python's re) has it.
  const CharDfa space = Must("^\\s$", false), other = Must("^[^\\s]$", false);
  for (char32_t c : {U' ', U'\t', U'\x1c', U'\x1f', U'\x85', U'\u00a0', U'\u2028', U'\u3000'}) {
    EXPECT_TRUE(space.Matches(std::u32string(1, c))) << static_cast<uint32_t>(c);
    EXPECT_FALSE(other.Matches(std::u32string(1, c))) << static_cast<uint32_t>(c);
  }
  EXPECT_FALSE(space.Matches(U"\ufeff"));
  EXPECT_TRUE(other.Matches(U"\ufeff"));
  // `.` and `$` too.
  const CharDfa dot = Must("^.$", true);
  EXPECT_TRUE(dot.Matches(U"\r"));
  EXPECT_TRUE(dot.Matches(U"\u2028"));
  EXPECT_FALSE(dot.Matches(U"\n"));
  EXPECT_TRUE(dot.Matches(U"x\n"));  // $ before a final newline
  EXPECT_FALSE(dot.Matches(U"x\n\n"));
  EXPECT_FALSE(Must("^a$", false).Matches(U"a\nb"));
}

TEST(CharDfa, RefusesWhatItCannotRead) {
  for (const char* p : {"(?<=a)b", "a(?=b)", "(a)\\1", "\\bx", "\\p{L}", "(?i)a"}) {
    auto d = CharDfa::FromRegex(p, true, 1000);
    EXPECT_EQ(d.status().code(), StatusCode::kUnsupported) << p << ": " << d.status().ToString();
  }
  for (const char* p : {"(a", "a)", "[a", "*a", "a{3,2}", "\\"}) {
    auto d = CharDfa::FromRegex(p, true, 1000);
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << p << ": " << d.status().ToString();
  }
  EXPECT_EQ(CharDfa::FromRegex("(a|b)*a(a|b){14}", true, 1000).status().code(), StatusCode::kResourceExhausted);
  bool asked = false;
  auto stopped = CharDfa::FromRegex("(a|b)*a(a|b){10}", true, 20000, 10000, [&] {
    asked = true;
    return false;
  });
  EXPECT_TRUE(asked);
  EXPECT_EQ(stopped.status().code(), StatusCode::kResourceExhausted);
}

TEST(CharDfa, ProductsAndComplement) {
  const CharDfa a = Must("^[ab]*a[ab]*$", false), b = Must("^.{2,3}$", false);
  const auto both = CharDfa::Combine(a, b, CharDfa::Op::kAnd, 1000);
  const auto either = CharDfa::Combine(a, b, CharDfa::Op::kOr, 1000);
  const auto minus = CharDfa::Combine(a, b, CharDfa::Op::kMinus, 1000);
  const auto length = CharDfa::Combine(a, CharDfa::Length(2, 3), CharDfa::Op::kAnd, 1000, /*minimize=*/false);
  ASSERT_TRUE(both.ok() && either.ok() && minus.ok() && length.ok());
  const CharDfa not_a = a.Complement();
  for (const std::string& s : AllStrings("abc", 5)) {
    const std::u32string u = U32(s);
    const bool in_a = a.Matches(u), in_b = b.Matches(u);
    EXPECT_EQ(both->Matches(u), in_a && in_b) << s;
    EXPECT_EQ(either->Matches(u), in_a || in_b) << s;
    EXPECT_EQ(minus->Matches(u), in_a && !in_b) << s;
    EXPECT_EQ(length->Matches(u), in_a && in_b) << s;
    EXPECT_EQ(not_a.Matches(u), !in_a) << s;
  }
  EXPECT_TRUE(CharDfa::AnyString().IsUniversal());
  EXPECT_TRUE(CharDfa().IsEmpty());
  EXPECT_TRUE(a.Complement().Complement().Matches(U32("ba")));
  // Minimal: the product of a DFA with its own language is the same size.
  auto self = CharDfa::Combine(a, a, CharDfa::Op::kAnd, 1000);
  ASSERT_TRUE(self.ok());
  EXPECT_EQ(self->size(), a.size());
  EXPECT_TRUE(CharDfa::Combine(a, a, CharDfa::Op::kMinus, 1000)->IsEmpty());
}

TEST(CharDfa, LiteralsAndFiniteLanguages) {
  const CharDfa words = CharDfa::Literals({U"ab", U"abc", U"b", U""});
  for (const char* s : {"ab", "abc", "b", ""}) EXPECT_TRUE(words.Matches(U32(s))) << s;
  for (const char* s : {"a", "abcd", "bb"}) EXPECT_FALSE(words.Matches(U32(s))) << s;
  auto list = words.FiniteStrings(10);
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(list->size(), 4u);
  EXPECT_FALSE(Must("a*", false).FiniteStrings(10).has_value());
  EXPECT_FALSE(Must("[a-z]", false).FiniteStrings(10).has_value());  // 26 strings: over the cap
  EXPECT_EQ(Must("[a-c]", false).FiniteStrings(10)->size(), 3u);
  EXPECT_EQ(words.LongestLength(), 3);
  EXPECT_EQ(Must("^a*$", false).LongestLength(), -1);
  EXPECT_EQ(Must("^(ab|c){2}$", false).LongestLength(), 5);  // "abab\n": $ before a final newline
  EXPECT_EQ(words.Example(), U"");
  EXPECT_EQ(Must("^xy+$", false).Example(), U"xy");
}

TEST(CharDfa, EmitsJsonStrings) {
  GrammarBuilder b;
  JsonStringEmitter emitter(&b);
  const Symbol s = emitter.Emit(Must("^[\"\\\\/\\n\\u00e9x]{1,2}$", false), "s");
  const uint32_t root = b.NewRule("root");
  b.AddAlternative(root, {s});
  auto g = b.Finish(root);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  testing::ByteRecognizer r(*g);
  for (const char* ok : {R"("x")", R"("\"")", R"("\\")", R"("/")", R"("\/")", R"("\n")", R"("\u000a")",
                         R"("\u000A")", "\"\xc3\xa9x\""})
    EXPECT_TRUE(r.Recognizes(ok)) << ok;
  for (const char* bad : {R"("")", R"("xxx")", "\"\n\"", R"("\u0078")", R"("y")", R"("\x")", "x"})
    EXPECT_FALSE(r.Recognizes(bad)) << bad;
}

}  // namespace
}  // namespace radixserve::grammar::internal
