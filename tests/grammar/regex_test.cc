// Regex front-end: each supported construct accepts what it should and rejects near-misses
// (checked with the test-only Earley recognizer, not the matcher); search semantics; the
// JSON-string context's spellings; refused constructs name themselves and their offset; caps.
#include "core/grammar/regex.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/grammar/byte_recognizer.h"

namespace radixserve::grammar {
namespace {

using testing::ByteRecognizer;

Result<Grammar> Build(std::string_view pattern, RegexContext ctx, bool search, const GrammarLimits& limits = {}) {
  GrammarBuilder b(limits);
  auto top = AddRegex(b, pattern, ctx, search);
  if (!top.ok()) return top.status();
  return b.Finish(top->index);
}

// Checks that the full-match grammar of `pattern` accepts each of `yes` and none of `no`.
void ExpectLanguage(std::string_view pattern, const std::vector<std::string>& yes, const std::vector<std::string>& no,
                    RegexContext ctx = RegexContext::kRaw, bool search = false) {
  auto g = Build(pattern, ctx, search);
  ASSERT_TRUE(g.ok()) << pattern << ": " << g.status().ToString();
  ByteRecognizer r(*g);
  for (const auto& s : yes) EXPECT_TRUE(r.Recognizes(s)) << "pattern " << pattern << " should accept \"" << s << "\"";
  for (const auto& s : no) EXPECT_FALSE(r.Recognizes(s)) << "pattern " << pattern << " should reject \"" << s << "\"";
}

void ExpectError(std::string_view pattern, StatusCode code, const std::string& message) {
  auto g = CompileRegex(pattern);
  ASSERT_FALSE(g.ok()) << pattern << " compiled";
  EXPECT_EQ(g.status().code(), code) << g.status().ToString();
  EXPECT_EQ(g.status().message(), message);
}

void ExpectErrorContains(std::string_view pattern, StatusCode code, const std::string& part,
                         const GrammarLimits& limits = {}) {
  auto g = CompileRegex(pattern, limits);
  ASSERT_FALSE(g.ok()) << pattern << " compiled";
  EXPECT_EQ(g.status().code(), code) << g.status().ToString();
  EXPECT_NE(g.status().message().find(part), std::string::npos) << g.status().message();
}

TEST(RegexTest, PhoneNumber) {
  ExpectLanguage(R"(^\d{3}-\d{4}$)", {"555-1234", "000-0000"},
                 {"555-123", "5551234", "555-12345", "a55-1234", "555 1234", "", "555-1234\n"});
}

TEST(RegexTest, BoundedRepeatOfClass) {
  ExpectLanguage("[A-Z]{2,3}", {"AB", "XYZ"}, {"A", "ABCD", "ab", "A1", ""});
  ExpectLanguage("a{2,}", {"aa", "aaaaaaa"}, {"", "a", "aab"});
  ExpectLanguage("a{0}b", {"b"}, {"ab"});
  ExpectLanguage("(ab){2}", {"abab"}, {"ab", "ababab", "aabb"});
}

TEST(RegexTest, Alternation) {
  ExpectLanguage("cat|dog|bird", {"cat", "dog", "bird"}, {"ca", "cats", "catdog", ""});
  ExpectLanguage("a(b|c|)d", {"abd", "acd", "ad"}, {"abcd", "a", "bd"});
  ExpectLanguage("|x", {"", "x"}, {"xx"});
}

TEST(RegexTest, GroupsAndQuantifiers) {
  ExpectLanguage("(ab)+c?", {"ab", "abab", "ababc"}, {"", "a", "abc c", "c", "aba"});
  ExpectLanguage("(?:x|y)*z", {"z", "xyxz", "yyz"}, {"", "xy", "zz"});
  ExpectLanguage(R"((?<year>\d{4})-(?<month>\d\d))", {"2024-05"}, {"2024-5", "24-05"});
  ExpectLanguage("colou?r", {"color", "colour"}, {"colouur", "colr"});
  ExpectLanguage("((a|b)c)*", {"", "ac", "acbcac"}, {"a", "abc", "acb"});
}

TEST(RegexTest, LazyQuantifiersDescribeTheSameLanguage) {
  ExpectLanguage("a+?b*?c??d{1,2}?", {"ad", "aaabbcdd", "abcd"}, {"bd", "acc d", "addd"});
}

TEST(RegexTest, NullableBodiesUnderRepetition) {
  // Repeating something that matches the empty string must not make the grammar left recursive.
  ExpectLanguage("(a?)*", {"", "a", "aaaa"}, {"b"});
  ExpectLanguage("(a*b*)+c", {"c", "aabbc", "babac"}, {"ca", "ab"});
  ExpectLanguage("(a|)*b", {"b", "aab"}, {"ba"});
  ExpectLanguage("(?:)*x", {"x"}, {"", "xx"});
  ExpectLanguage("((a?)(b?)){2,3}", {"", "a", "abab", "ababab", "aaa", "bab"}, {"abababab", "aaaa", "ba ba"});
  ExpectLanguage("(x?y?z?)*!", {"!", "xyz!", "zyx!", "yy!"}, {"xyz", "w!"});
}

TEST(RegexTest, DeeplyNestedNullableGroupsStayLinear) {
  // Without sharing, each nesting level of (x?(...)?) would double the emitted grammar.
  std::string p;
  for (int i = 0; i < 60; ++i) p += "a?(";
  p += "b?";
  for (int i = 0; i < 60; ++i) p += ")?";
  p = "(" + p + ")*c";
  auto g = CompileRegex(p);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_LT(g->symbol_count(), 20000u);
  ByteRecognizer r(*g);
  EXPECT_TRUE(r.Recognizes("c"));
  EXPECT_TRUE(r.Recognizes("abbac"));
  EXPECT_FALSE(r.Recognizes("abd"));
}

TEST(RegexTest, Dot) {
  ExpectLanguage("a.c",
                 {"abc", "a c", "a\tc",
                  "a\xE2\x82\xAC"
                  "c",
                  "a\xF0\x9F\x98\x80"
                  "c"},
                 {"ac", "abbc", "a\nc", "a\rc",
                  "a\xE2\x80\xA8"
                  "c",
                  "a\xE2\x80\xA9"
                  "c",
                  "a\xFF"
                  "c"});
}

TEST(RegexTest, Classes) {
  ExpectLanguage("[^abc]", {"d", "\n", "\xC3\xA9", "]"}, {"a", "c", "", "dd"});
  ExpectLanguage("[a-cx-z]+", {"abc", "zyx", "b"}, {"d", "w", ""});
  ExpectLanguage(R"([\d.]+)", {"3.14", "..."}, {"3,14", "a"});
  ExpectLanguage(R"([\w-.]+)", {"a-b.c_9"}, {"a b", "a/b"});  // Annex B: '-' next to \w is literal
  ExpectLanguage(R"([a\-z])", {"a", "-", "z"}, {"b"});
  ExpectLanguage(R"([\]\\])", {"]", "\\"}, {"[", ""});
  ExpectLanguage("[-a]", {"-", "a"}, {"b"});
  ExpectLanguage("[a-]", {"-", "a"}, {"b"});
  ExpectLanguage("[^]", {"\n", "x"}, {"", "xy"});
  ExpectLanguage("a|[]", {"a"}, {"", "[]"});  // [] matches nothing
  ExpectLanguage(R"([\b])", {"\b"}, {"b"});   // \b in a class is backspace
  ExpectLanguage(R"([^\uD800-\uDFFF])", {"x", "\xF0\x9F\x98\x80"}, {""});
}

TEST(RegexTest, UnicodeClassesAndLiterals) {
  ExpectLanguage("\xC3\xA9+", {"\xC3\xA9\xC3\xA9"},
                 {"e",
                  "\xC3\xA9"
                  "e"});
  // [α-ω]+
  ExpectLanguage("[\xCE\xB1-\xCF\x89]+", {"\xCE\xB1\xCE\xB2\xCE\xB3", "\xCF\x89"}, {"abc", "\xCE\x91"});
  // CJK unified ideographs [一-鿿]{2}
  ExpectLanguage("[\xE4\xB8\x80-\xE9\xBF\xBF]{2}", {"\xE6\xBC\xA2\xE5\xAD\x97"}, {"\xE6\xBC\xA2", "ab"});
  ExpectLanguage(R"([\u0400-\u04FF]+)", {"\xD0\x9F\xD1\x80\xD0\xB8"}, {"Pri"});
  ExpectLanguage(R"(\u{1F600}|[\u{1F300}-\u{1F5FF}])", {"\xF0\x9F\x98\x80", "\xF0\x9F\x8C\x80"}, {"\xF0\x9F\x98\x81"});
}

TEST(RegexTest, ClassEscapes) {
  ExpectLanguage(R"(\d+)", {"0123456789"}, {"", "12a", "\xD9\xA3"});  // not Arabic-Indic digits
  // \D and \W keep to what Python's re agrees with too: no Unicode digit (U+0663) for \D, and
  // for \W only non-word characters of both engines (é is a word character in Python).
  ExpectLanguage(R"(\D)", {"a", "\xC3\xA9"}, {"5", "\xD9\xA3"});
  ExpectLanguage(R"(\w+)", {"abc_XYZ_09"}, {"a-b", "\xC3\xA9"});
  ExpectLanguage(R"(\W)", {"-", " ", "\xE2\x82\xAC", "\xE2\x80\x94", "\xF0\x9F\x98\x80"},
                 {"a", "_", "7", "\xC3\xA9"});
  // In a negated class an escape excludes what either engine puts in it.
  ExpectLanguage(R"([^\d])", {"a", "\xC3\xA9"}, {"5", "\xD9\xA3"});
  ExpectLanguage(R"([^\s])", {"a"}, {" ", "\xEF\xBB\xBF", "\x1C", "\xC2\x85"});
  ExpectLanguage(R"([^\w])", {"-", "\xE2\x82\xAC"}, {"a", "\xC3\xA9"});
  ExpectLanguage(R"([^\W])", {"a", "_"}, {"-", "\xC3\xA9"});
  ExpectLanguage(R"([\d\s]+)", {"1 2"}, {"\xD9\xA3", "\xEF\xBB\xBF"});
  // \s and \S take what ECMAScript and Python's re agree on: U+FEFF (space only in ECMAScript)
  // and U+001C..U+001F, U+0085 (space only in Python) are in neither.
  ExpectLanguage(R"(\s)", {" ", "\t", "\n", "\r", "\v", "\f", "\xC2\xA0", "\xE3\x80\x80", "\xE2\x80\xA8"},
                 {"x", "\xE2\x80\x8B", "\xEF\xBB\xBF", "\x1C", "\xC2\x85"});  // U+200B is not \s either
  ExpectLanguage(R"(\S+)", {"abc"},
                 {"a c",
                  "a\xC2\xA0"
                  "c",
                  "\xEF\xBB\xBF", "\x1F", "\xC2\x85"});
}

TEST(RegexTest, Escapes) {
  ExpectLanguage(R"(\x41\u0042\u{43})", {"ABC"}, {"abc"});
  ExpectLanguage(R"(\t\n\r\f\v\0)", {std::string("\t\n\r\f\v\0", 6)}, {"tnrfv0"});
  ExpectLanguage(R"(\/\.\*\+\?\(\)\[\]\{\}\|\^\$\\)", {"/.*+?()[]{}|^$\\"}, {"/"});
  ExpectLanguage(R"(\uD83D\uDE00)", {"\xF0\x9F\x98\x80"}, {""});  // a surrogate pair is one code point
  ExpectLanguage(R"(\cJ\cm)", {"\n\r"}, {"cJcm"});
  ExpectLanguage(R"(a\-b)", {"a-b"}, {"ab"});
}

TEST(RegexTest, AnnexBLiteralBraces) {
  ExpectLanguage("a{", {"a{"}, {"a"});
  ExpectLanguage("a{,5}", {"a{,5}"}, {"aaaaa"});
  ExpectLanguage("x}]", {"x}]"}, {"x"});
  ExpectLanguage("{a}", {"{a}"}, {"a"});
}

TEST(RegexTest, AnchorsInFullMatchAreNoOps) {
  ExpectLanguage("^abc$", {"abc"}, {"xabc", "abcx", ""});
  ExpectLanguage("^a|b$", {"a", "b"}, {"ab", "xb"});
  ExpectLanguage("^$", {""}, {"a"});
}

TEST(RegexTest, SearchSemantics) {
  const auto raw = RegexContext::kRaw;
  ExpectLanguage("abc", {"abc", "xxabcyy", "\nabc\n", "ababc"}, {"abx", "", "ab c"}, raw, true);
  ExpectLanguage("^abc", {"abc", "abcxx", "abc\n"}, {"xabc", "ab"}, raw, true);
  ExpectLanguage("abc$", {"abc", "xxabc"}, {"abcx"}, raw, true);
  ExpectLanguage("^abc$", {"abc"}, {"abcx", "xabc"}, raw, true);
  ExpectLanguage("^a$|b", {"a", "b", "xbx", "bb"}, {"xa", "ax", ""}, raw, true);
  ExpectLanguage("", {"", "anything at all\n"}, {}, raw, true);
  ExpectLanguage(R"(^\d+$)", {"12"}, {"1a2", ""}, raw, true);
  ExpectLanguage("[0-9]", {"x9y", "9"}, {"xy"}, raw, true);
}

TEST(RegexTest, AnchorsInGroupsOnTheEdges) {
  const auto raw = RegexContext::kRaw;
  // Seen in real schemas: an anchored group as a whole top-level alternative.
  ExpectLanguage("(^[^5]*$)|7", {"1234", "", "557", "7"}, {"5", "15", "51"}, raw, true);
  ExpectLanguage(R"(^$|(^(?:\S+\s+){0,2}\S+$))", {"", "a", "a b c"}, {"a b c d", " a", "a "}, raw, true);
  // The free text goes in front of the alternatives of a leading group that have no ^.
  ExpectLanguage("(^a|b)c", {"ac", "acx", "bc", "xbcx"}, {"xac", "c"}, raw, true);
  ExpectLanguage("a(b$|c)", {"ab", "xab", "acx"}, {"abx"}, raw, true);
  ExpectLanguage("(?:(^a)|(b$))", {"a", "ax", "b", "xb"}, {"xa", "bx"}, raw, true);
  ExpectLanguage("^^a$$", {"a"}, {"xa", "ax"}, raw, true);
  ExpectLanguage("^", {"", "anything"}, {}, raw, true);
  ExpectLanguage("$|x", {"", "anything"}, {}, raw, true);
  ExpectLanguage("()^a", {"a", "ab"}, {"ba"}, raw, true);
  // In a full match anchors are no-ops.
  ExpectLanguage("(^a|b)c", {"ac", "bc"}, {"xbc", "acx"});
}

TEST(RegexTest, JsonStringContextEscapesQuoteAndBackslash) {
  const auto json = RegexContext::kJsonString;
  // The regex allows the decoded character '"'; its JSON text is \" or \u0022.
  ExpectLanguage("a\"b", {"a\\\"b", "a\\u0022b"}, {"a\"b", "a\\\\b", "a\\u0023b"}, json);
  // A backslash: \\ or \u005c / \u005C.
  ExpectLanguage(R"(\\)", {"\\\\", "\\u005c", "\\u005C"}, {"\\", "\\u005d"}, json);
  // '/' raw or \/; no other escape for ordinary characters.
  ExpectLanguage("/", {"/", "\\/"}, {"\\u002f"}, json);
  ExpectLanguage("A", {"A"}, {"\\u0041"}, json);  // documented: no \uXXXX for ordinary characters
  // Control characters only escaped: the short form where JSON has one, and \u00XX in either case.
  ExpectLanguage(R"(\n)", {"\\n", "\\u000a", "\\u000A"}, {"\n", "n", "\\u000b"}, json);
  ExpectLanguage(R"([\b])", {"\\b", "\\u0008"}, {"\b"}, json);
  ExpectLanguage(R"(\x1f)", {"\\u001f", "\\u001F"}, {"\x1f", "\\u001e"}, json);
  // '.' includes TAB (escaped) but not LF.
  ExpectLanguage(".", {"x", "\\t", "\\u0009", "\\\"", "\\\\", "\\/", "\xC3\xA9"}, {"\\n", "\\u000a", "\t", "\"", "\\"},
                 json);
  // Non-ASCII code points raw.
  ExpectLanguage("[^a]", {"\xE2\x82\xAC", "\\\"", "\\u0000"}, {"a", "\\u20ac"}, json);
}

TEST(RegexTest, JsonStringContextWithSearch) {
  const auto json = RegexContext::kJsonString;
  // Free text around an unanchored match is any JSON string content, escapes included.
  ExpectLanguage("^ab", {"ab", "ab\\\"x\\n", "ab\xC3\xA9"}, {"ab\"", "ab\n", "xab", "ab\\"}, json, true);
  ExpectLanguage("@", {"me@example.com", "\\\"@\\\""}, {"me.example.com", "\"@"}, json, true);
}

TEST(RegexTest, RefusedConstructsNameThemselvesAndTheirOffset) {
  const auto kU = StatusCode::kUnsupported;
  ExpectError("ab(?=c)", kU, R"m(regex "ab(?=c)" at offset 2: lookahead (?= is not supported)m");
  ExpectError("(?!a)b", kU, R"m(regex "(?!a)b" at offset 0: negative lookahead (?! is not supported)m");
  ExpectError("x(?<=a)b", kU, R"m(regex "x(?<=a)b" at offset 1: lookbehind (?<= is not supported)m");
  ExpectError("(?<!a)b", kU, R"m(regex "(?<!a)b" at offset 0: negative lookbehind (?<! is not supported)m");
  ExpectError(R"(\bword)", kU, R"m(regex "\bword" at offset 0: word boundary \b is not supported)m");
  ExpectError(R"(a\B)", kU, R"m(regex "a\B" at offset 1: word boundary \B is not supported)m");
  ExpectError(R"((a)\1)", kU, R"m(regex "(a)\1" at offset 3: backreference \1 is not supported)m");
  ExpectError(R"((?<n>a)\k<n>)", kU, R"m(regex "(?<n>a)\k<n>" at offset 7: named backreference \k is not supported)m");
  ExpectError(R"(\p{L}+)", kU, R"m(regex "\p{L}+" at offset 0: Unicode property escape \p{...} is not supported)m");
  ExpectErrorContains("a^b", kU, "at offset 1: anchor ^ is only supported where nothing can precede it");
  ExpectErrorContains("a$b", kU, "at offset 1: anchor $ is only supported where nothing can follow it");
  ExpectErrorContains("x(^a)", kU, "at offset 2: anchor ^");
  ExpectErrorContains("(a$)b", kU, "at offset 2: anchor $");
  ExpectErrorContains("a?^b", kU, "at offset 2: anchor ^");
  ExpectErrorContains("(^a)*", kU, "at offset 1: an anchor inside a quantified group is not supported");
  ExpectErrorContains("^*a", StatusCode::kInvalidArgument, "at offset 1: nothing to repeat (a quantifier follows an anchor)");
  ExpectErrorContains("(?i)abc", kU, "at offset 0: inline modifier (?i is not supported");
  ExpectErrorContains(R"(\uD800)", kU, "lone surrogate \\uD800");
  ExpectErrorContains(R"(\01)", kU, "legacy octal escape");
}

TEST(RegexTest, MalformedPatterns) {
  const auto kI = StatusCode::kInvalidArgument;
  ExpectErrorContains("(abc", kI, "at offset 0: missing ) for the group opened here");
  ExpectErrorContains("abc)", kI, "at offset 3: unmatched )");
  ExpectErrorContains("[abc", kI, "at offset 0: unterminated character class");
  ExpectErrorContains("*a", kI, "at offset 0: nothing to repeat before *");
  ExpectErrorContains("a**", kI, "at offset 2: nothing to repeat");
  ExpectErrorContains("a{2}{3}", kI, "at offset 4: nothing to repeat");
  ExpectErrorContains("{2}", kI, "nothing to repeat before {");
  ExpectErrorContains("[z-a]", kI, "at offset 1: range out of order");
  ExpectErrorContains("a{3,2}", kI, "at offset 1: numbers out of order");
  ExpectErrorContains(R"(\x4)", kI, "\\x must be followed by two hex digits");
  ExpectErrorContains(R"(\u12)", kI, "\\u must be followed by four hex digits");
  ExpectErrorContains(R"(\u{110000})", kI, "past U+10FFFF");
  ExpectErrorContains("ab\\", kI, "at offset 2: \\ at end of pattern");
  ExpectErrorContains(R"(\q)", kI, "unknown escape \\q");
  ExpectErrorContains("a(?*b)", kI, "at offset 1: invalid group: (? must be followed by");
  ExpectErrorContains("(?<1a>x)", kI, "invalid character in a group name");
  ExpectErrorContains("a\xFF", kI, "at offset 1: invalid UTF-8");
  ExpectErrorContains("[]", kI, "can never match");
  // Messages stay valid UTF-8 and one line (they end up in JSON error bodies); long patterns are cut.
  ExpectError("a\n\xFF(", kI, R"m(regex "a\n\xFF(" at offset 2: invalid UTF-8)m");
  ExpectError(std::string(200, 'x') + "(", kI,
              "regex \"" + std::string(120, 'x') + "...\" at offset 200: missing ) for the group opened here");
}

TEST(RegexTest, Caps) {
  ExpectErrorContains("a{20000}", StatusCode::kResourceExhausted, "repetition {20000} is over the limit of 10000");
  ExpectErrorContains("a{1,99999999999999999999}", StatusCode::kResourceExhausted, "over the limit");
  GrammarLimits small;
  small.max_source_bytes = 8;
  ExpectErrorContains("abcdefghi", StatusCode::kResourceExhausted, "regex of 9 bytes is over the limit of 8", small);
  // Nested groups are bounded (parsing recurses per level).
  ExpectErrorContains(std::string(300, '(') + "a" + std::string(300, ')'), StatusCode::kUnsupported,
                      "groups nested deeper than 256");
  // Nested repetition stays within the builder's symbol cap, which the builder enforces.
  GrammarLimits few_symbols;
  few_symbols.max_symbols = 1000;
  ExpectErrorContains("(((a{50}){50}){50}){50}b{5000}", StatusCode::kResourceExhausted, "symbols", few_symbols);
  EXPECT_TRUE(CompileRegex("(((a{50}){50}){50}){50}").ok());  // rules are shared, not copied
  // The compile deadline.
  GrammarLimits no_time;
  no_time.max_compile_time = std::chrono::milliseconds(-1);
  ExpectErrorContains("(a|b)+c", StatusCode::kResourceExhausted, "time cap", no_time);
}

TEST(RegexTest, AddRegexComposesIntoALargerGrammar) {
  // A JSON-Schema-like use: "..." around a patterned string, the pattern searched.
  GrammarBuilder b;
  auto inner = AddRegex(b, R"(\d{2}:\d{2})", RegexContext::kJsonString, /*search_semantics=*/true);
  ASSERT_TRUE(inner.ok()) << inner.status().ToString();
  const uint32_t root = b.NewRule("string");
  Sequence seq = {b.Byte('"'), *inner, b.Byte('"')};
  b.AddAlternative(root, seq);
  auto g = b.Finish(root);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ByteRecognizer r(*g);
  EXPECT_TRUE(r.Recognizes("\"at 12:30\""));
  EXPECT_TRUE(r.Recognizes("\"12:30 \\\"sharp\\\"\""));
  EXPECT_FALSE(r.Recognizes("\"12:3\""));
  EXPECT_FALSE(r.Recognizes("\"12:30\" \""));
}

}  // namespace
}  // namespace radixserve::grammar
