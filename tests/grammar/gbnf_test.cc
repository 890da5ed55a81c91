// GBNF front-end: every example grammar of llama.cpp (../shared/grammars) loads, and strings each
// describes are accepted while near-misses are rejected (checked with the test-only Earley
// recognizer); the format's corners (comments, multi-line rules, escapes, quantifiers); errors
// name the line and the rule.
#include "core/grammar/gbnf.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/grammar/byte_recognizer.h"

namespace radixserve::grammar {
namespace {

using testing::ByteRecognizer;

const std::string kGrammarDir = std::string(RADIXSERVE_SHARED_DIR) + "/grammars";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void ExpectLanguage(const std::string& what, std::string_view text, const std::vector<std::string>& yes,
                    const std::vector<std::string>& no) {
  auto g = CompileGbnf(text);
  ASSERT_TRUE(g.ok()) << what << ": " << g.status().ToString();
  ByteRecognizer r(*g);
  for (const auto& s : yes) EXPECT_TRUE(r.Recognizes(s)) << what << " should accept \"" << s << "\"";
  for (const auto& s : no) EXPECT_FALSE(r.Recognizes(s)) << what << " should reject \"" << s << "\"";
}

void ExpectFile(const std::string& name, const std::vector<std::string>& yes, const std::vector<std::string>& no) {
  const std::string path = kGrammarDir + "/" + name;
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  ExpectLanguage(name, ReadFile(path), yes, no);
}

void ExpectError(std::string_view text, StatusCode code, const std::string& part) {
  auto g = CompileGbnf(text);
  ASSERT_FALSE(g.ok()) << text;
  EXPECT_EQ(g.status().code(), code) << g.status().ToString();
  EXPECT_NE(g.status().message().find(part), std::string::npos) << g.status().message();
}

TEST(GbnfTest, EverySharedGrammarLoads) {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kGrammarDir)) {
    if (entry.path().extension() != ".gbnf") continue;
    auto g = CompileGbnf(ReadFile(entry.path().string()));
    EXPECT_TRUE(g.ok()) << entry.path() << ": " << g.status().ToString();
    ++loaded;
  }
  EXPECT_EQ(loaded, 8);  // the README lists eight
}

TEST(GbnfTest, Arithmetic) {
  ExpectFile("arithmetic.gbnf", {"1+2=3\n", "x = y\n", "(a+b)*c=d\n1=2\n", "foo_1 = ( 2 )\n"},
             {"1+2=3", "1+=3\n", "A=1\n", "=1\n", "(a=b\n", "1=2\nx\n"});
}

TEST(GbnfTest, C) {
  ExpectFile("c.gbnf",
             {"", "int main(){return 0;}", "int f(int x){x = x+1;}", "int f(){// hi\n}", "float g(){/* x */}",
              "char c(){while(a<b){a = a+1;}}int g(){}", "int h(){if(a==b){f ();}else{g (x, y);}}"},
             {"int main() {return 0;}", "int main(){return 0}", "intmain(){}", "int main(){/* open}", "void f(){}",
              "int h(){f();}"});
}

TEST(GbnfTest, Chess) {
  ExpectFile("chess.gbnf", {"1. e4 e5\n2. Nf3 Nc6\n", "1. e4 e5\n2. O-O-O Qxd8+\n10. exd5 e8=Q#\n"},
             {"1. e4 e5\n", "1. e9 e5\n2. d4 d5\n", "1. e4 e5\n0. d4 d5\n", "1. e4 e5\n2. Nf3 Nc6"});
}

TEST(GbnfTest, English) {
  ExpectFile("english.gbnf", {"Hello, world!", "a\tb\nc", "x[y]\\z", "50% off: {yes}"},
             {"Hello  world", " lead", "h\xC3\xA9llo", "", "end "});
}

TEST(GbnfTest, Japanese) {
  // こんにちは / カタカナ 漢字 / 。
  ExpectFile("japanese.gbnf",
             {"\xE3\x81\x93\xE3\x82\x93\xE3\x81\xAB\xE3\x81\xA1\xE3\x81\xAF",
              "\xE3\x82\xAB\xE3\x82\xBF\xE3\x82\xAB\xE3\x83\x8A \xE6\xBC\xA2\xE5\xAD\x97\xE3\x80\x82"},
             {"abc", "\xE3\x81\x93 ", "", "\xE3\x81\x93  \xE3\x81\x93"});
}

TEST(GbnfTest, Json) {
  ExpectFile("json.gbnf",
             {"{}", "{\"k\":\"v\"}", "{\"a\": 1, \"b\": [true, null, \"x\\n\"]}", "{\"a\":{\"b\":[]}}",
              "{\"n\": -1.5e3}", "{\"u\": \"\\u00e9\"}", "{\n  \"a\": 1\n}"},
             {"[1]", "{\"a\" 1}", "{'a':1}", "{\"a\":01}", "{\"a\":1,}", "{\"a\":\"\\x\"}", "{\"a\":\"\x01\"}",
              "{\"a\":1}  "});
}

TEST(GbnfTest, JsonArr) {
  ExpectFile("json_arr.gbnf", {"[\n]", "[\n1,\n2]", "[\n{\"a\": true},\n\"s\"]", "[\n1e10]"},
             {"[1]", "[\n1,2]", "[\n1]\n", "{}"});
}

TEST(GbnfTest, List) {
  ExpectFile("list.gbnf",
             {"- milk\n- eggs\n",
              "- \xC3\xBC"
              "ber\n"},
             {"- milk", "-milk\n", "- \n", "- a\rb\n",
              "- a\xC2\x85"
              "b\n",
              "- a\xE2\x80\xA8"
              "b\n",
              ""});
}

TEST(GbnfTest, FormatCorners) {
  // Comments, a rule continued after '|' and inside parentheses, blank lines, CRLF.
  ExpectLanguage("comments",
                 "# leading comment\n"
                 "root ::= a-1 | # after a bar\n"
                 "  ( \"x\"   # inside a group\n"
                 "    \"y\" )\n"
                 "\n"
                 "a-1 ::= \"a\"\r\n",
                 {"a", "xy"}, {"x", "ay"});
  // Escapes in literals and classes.
  ExpectLanguage("escapes", R"(root ::= "\x41\u00e9\U0001F600\t\"\\" [\[\]\-] [\x30-\x32])",
                 {"A\xC3\xA9\xF0\x9F\x98\x80\t\"\\[0", "A\xC3\xA9\xF0\x9F\x98\x80\t\"\\-2"},
                 {"A\xC3\xA9\xF0\x9F\x98\x80\t\"\\[3", "Ae"});
  // Quantifiers: on a whole literal, with blanks inside braces, stacked (x*? is (x*)?).
  ExpectLanguage("quantifiers", "root ::= \"ab\"{2} [0-9]{ 1 , 2 } \"c\"{0,} \"d\"*? \"e\"{1,}\n",
                 {"abab1e", "abab12cccddde"}, {"ab1e", "abab123e", "abab1"});
  // '.' is any code point, newlines included; [^...] the complement.
  ExpectLanguage("any", "root ::= . [^a-z]",
                 {"\n!",
                  "\xE2\x82\xAC"
                  "A"},
                 {"ab", "a"});
  // An empty alternative and an empty literal.
  ExpectLanguage("empty", "root ::= | \"x\" \"\"", {"", "x"}, {"xx"});
  // Recursion (not left recursion) works.
  ExpectLanguage("recursion", "root ::= \"(\" root \")\" | \"\"", {"", "()", "((()))"}, {"(()", ")("});
  // A rule defined twice takes its last definition, as in llama.cpp.
  ExpectLanguage("redefinition", "root ::= a\na ::= \"1\"\na ::= \"2\"\n", {"2"}, {"1"});
}

TEST(GbnfTest, Errors) {
  const auto kI = StatusCode::kInvalidArgument;
  ExpectError("root ::= foo\n", kI, "gbnf line 1, column 10: undefined rule 'foo'");
  ExpectError("root ::= a\na ::= \"x\" bar-2\n", kI, "gbnf line 2, column 11: undefined rule 'bar-2'");
  ExpectError("root ::= \"abc\n", kI, "gbnf line 1, column 10: unterminated string literal in rule 'root'");
  ExpectError("start ::= \"a\"\n", kI, "no rule named 'root'");
  ExpectError("root ::= [abc\n", kI, "line 1, column 10: unterminated character class in rule 'root'");
  ExpectError("root ::= \"\\q\"\n", kI, "line 1, column 11: unknown escape \\q");
  ExpectError("root = \"a\"\n", kI, "line 1, column 6: expecting ::= after rule name 'root'");
  ExpectError("root ::= (\"a\"\n", kI, "expecting ')' to close the group opened at line 1, column 10");
  ExpectError("root ::= * \"a\"\n", kI, "expecting an item before the quantifier '*'");
  ExpectError("root ::= [z-a]\n", kI, "character range out of order");
  ExpectError("root ::= []\n", kI, "empty character class");
  ExpectError("root ::= \"a\"{3,2}\n", kI, "numbers out of order");
  ExpectError("root ::= \"a\"{x}\n", kI, "expecting an integer");
  ExpectError("root ::= \"\\x4\"\n", kI, "expecting 2 hex digits after \\x");
  ExpectError("root ::= \"a\"\n\n  \"b\"\n", kI, "line 3, column 3: expecting a rule name");
  ExpectError("my_rule ::= \"a\"\nroot ::= my_rule\n", kI, "line 1, column 3: expecting ::= after rule name 'my'");
  ExpectError("root ::= \"a\" ) \n", kI, "expecting the end of rule 'root'");
  ExpectError("root ::= root \"a\" | \"a\"\n", kI, "left recursive");
  ExpectError("root ::= \"a\xFF\"\n", kI, "line 1, column 12: invalid UTF-8");
  ExpectError("root ::= \"a\" \x01\xFF\n", kI, "expecting the end of rule 'root' (a newline) at '\\x01\\xFF'");
  ExpectError("root ::= <think> \"a\"\n", StatusCode::kUnsupported, "token references");
  ExpectError("root ::= \"a\"{20000}\n", StatusCode::kResourceExhausted, "is over the limit of 10000");
  GrammarLimits small;
  small.max_source_bytes = 4;
  auto g = CompileGbnf("root ::= \"a\"", small);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kResourceExhausted);
  ExpectError(std::string("root ::= ") + std::string(300, '(') + "\"a\"" + std::string(300, ')'),
              StatusCode::kUnsupported, "groups nested deeper than 256");
}

}  // namespace
}  // namespace radixserve::grammar
