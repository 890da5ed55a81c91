// The Jinja engine's rules, as Python jinja2 3.1 applies them in transformers' chat-template
// environment: whitespace control, printing values, undefined, lookups, operators, indexing,
// literals and tests. Every expectation was checked against jinja2 3.1.6.
#include <gtest/gtest.h>

#include "tests/jinja/render_helpers.h"

namespace radixserve::jinja {
namespace {

using testing::ordered_json;
using testing::Render;
using testing::RenderError;

// ---------------------------------------------------------------- whitespace control

TEST(JinjaWhitespaceTest, TrimBlocksRemovesTheNewlineAfterABlockTag) {
  EXPECT_EQ(Render("{% if true %}\nx\n{% endif %}\ny"), "x\ny");
  EXPECT_EQ(Render("{# comment #}\nx"), "x");
  EXPECT_EQ(Render("{{ 'v' }}\nx"), "v\nx");  // not after {{ }}
}

TEST(JinjaWhitespaceTest, LstripBlocksRemovesIndentBeforeBlockTagsOnly) {
  EXPECT_EQ(Render("  {% if true %}\n  x\n  {% endif %}\n  {{ 'v' }}\n  {# c #}\ny"), "  x\n  v\ny");
  EXPECT_EQ(Render("a  {% if true %}b{% endif %}"), "a  b");       // not at the start of a line
  EXPECT_EQ(Render("a\n\t {% if true %}b{% endif %}"), "a\nb");    // tabs too
  EXPECT_EQ(Render("a\n  {%+ if true %}b{% endif %}"), "a\n  b");  // {%+ keeps the indent
}

TEST(JinjaWhitespaceTest, MinusStripsAllWhitespaceOnItsSide) {
  EXPECT_EQ(Render("a\n  {%- if true %}\n    b\n  {% endif -%}\n  c"), "a    b\nc");
  EXPECT_EQ(Render("{{- 'a' -}}\n   {{- 'b' }}\n  {{ 'c' -}}\n   d"), "ab\n  cd");
  EXPECT_EQ(Render("x{#- c -#}  y"), "xy");
  EXPECT_EQ(Render("{% for i in [1, 2] -%}\n  {{ i }}\n{%- endfor %}\nend"), "12end");
}

TEST(JinjaWhitespaceTest, PlusAfterABlockKeepsTheNewline) {
  EXPECT_EQ(Render("x{%+ if true %}\ny{% endif +%}\nz"), "xy\nz");
}

TEST(JinjaWhitespaceTest, OneTrailingNewlineOfTheSourceIsDropped) {
  EXPECT_EQ(Render("a\n"), "a");
  EXPECT_EQ(Render("a\n\n"), "a\n");
  EXPECT_EQ(Render("{{ 1 }}\n"), "1");
}

TEST(JinjaWhitespaceTest, CarriageReturnsBecomeNewlines) { EXPECT_EQ(Render("a\r\nb\rc"), "a\nb\nc"); }

TEST(JinjaWhitespaceTest, RawBlocksAreText) {
  EXPECT_EQ(Render("{% raw %}{{ x }}{% endraw %}"), "{{ x }}");
  EXPECT_EQ(Render("{% raw -%}\n  {{ a }}\n{%- endraw %}\ny"), "{{ a }}y");
}

// ---------------------------------------------------------------- printing values: Python str()

TEST(JinjaPrintTest, ScalarsPrintLikePythonStr) {
  EXPECT_EQ(Render("{{ none }} {{ None }} {{ true }} {{ False }} {{ 42 }} {{ -7 }}"), "None None True False 42 -7");
  EXPECT_EQ(Render("{{ 0.5 }} {{ 1e16 }} {{ 1e15 }} {{ 1.0 }} {{ 100.0 }} {{ 1e-5 }} {{ 0.0001 }} {{ -0.0 }}"),
            "0.5 1e+16 1000000000000000.0 1.0 100.0 1e-05 0.0001 -0.0");
  EXPECT_EQ(Render("{{ 0.1 + 0.2 }} {{ 1 / 3 }} {{ 2 ** 0.5 }}"),
            "0.30000000000000004 0.3333333333333333 1.4142135623730951");
}

TEST(JinjaPrintTest, ContainersPrintTheirPythonRepr) {
  EXPECT_EQ(Render("{{ x }}", {{"x", {{"lat", -23.55}, {"tags", {"a", "it's", nullptr, true}}}}}),
            "{'lat': -23.55, 'tags': ['a', \"it's\", None, True]}");
  EXPECT_EQ(Render("{{ (1,) }} {{ (1, 'b') }} {{ () }} {{ [] }} {{ {} }}"), "(1,) (1, 'b') () [] {}");
  EXPECT_EQ(Render("{{ ['a\\nb', 'tab\\t', 'q\"', 'é'] }}"), "['a\\nb', 'tab\\t', 'q\"', 'é']");
  EXPECT_EQ(Render("{{ {'a': 1}.items() }}"), "dict_items([('a', 1)])");
}

TEST(JinjaPrintTest, NamespacesAndLoopsPrintTheirRepr) {
  EXPECT_EQ(Render("{{ namespace(a=1, b='x') }}"), "<Namespace {'a': 1, 'b': 'x'}>");
  EXPECT_EQ(Render("{% for i in [1, 2] %}{{ loop }} {% endfor %}"), "<LoopContext 1/2> <LoopContext 2/2> ");
  EXPECT_EQ(Render("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}"), "<Namespace {'me': <Namespace {...}>}>");
}

TEST(JinjaPrintTest, StringAndConcatUseStr) {
  EXPECT_EQ(Render("{{ none|string }}|{{ [1]|string }}|{{ 'a' ~ 1 ~ none ~ true ~ [2] }}"), "None|[1]|a1NoneTrue[2]");
}

TEST(JinjaPrintTest, ContextKeepsKeyOrder) {
  ordered_json d = ordered_json::object();
  d["z"] = 1;
  d["a"] = 2;
  EXPECT_EQ(Render("{{ d }} {{ d|tojson }} {% for k in d %}{{ k }}{% endfor %}", {{"d", d}}),
            "{'z': 1, 'a': 2} {\"z\": 1, \"a\": 2} za");
}

// ---------------------------------------------------------------- undefined

TEST(JinjaUndefinedTest, MissingValuesAreLenientUntilUsed) {
  EXPECT_EQ(Render("[{{ x }}][{{ d.missing }}][{{ d['missing'] }}][{{ [1][5] }}]", {{"d", {{"a", 1}}}}), "[][][][]");
  EXPECT_EQ(Render("{{ x is defined }} {{ x is undefined }} {{ not x }} {{ x|length }} {{ 'a' in x }}"),
            "False True True 0 False");
  EXPECT_EQ(Render("{% for i in x %}never{% endfor %}{{ x is iterable }} {{ x is sequence }} {{ x is mapping }}"),
            "True True False");
  EXPECT_EQ(Render("{{ 'a' ~ x ~ 'b' }} {{ x == x }} {{ x == none }}"), "ab True False");
}

TEST(JinjaUndefinedTest, UsingAnUndefinedFails) {
  EXPECT_EQ(RenderError("{{ x.y }}").message(), "line 1: UndefinedError: 'x' is undefined");
  EXPECT_EQ(RenderError("{{ x['y'] is defined }}").message(), "line 1: UndefinedError: 'x' is undefined");
  EXPECT_EQ(RenderError("{{ x + 1 }}").message(), "line 1: UndefinedError: 'x' is undefined");
  EXPECT_EQ(RenderError("{{ x < 1 }}").message(), "line 1: UndefinedError: 'x' is undefined");
  EXPECT_EQ(RenderError("{{ x() }}").message(), "line 1: UndefinedError: 'x' is undefined");
  EXPECT_EQ(RenderError("{{ x|tojson }}").message(),
            "line 1: TypeError: Object of type Undefined is not JSON serializable");
}

TEST(JinjaUndefinedTest, MissingAttributesOfNoneAndStringsAreUndefined) {
  EXPECT_EQ(Render("{{ none.split is defined }} {{ 'abc'.foo is defined }}"), "False False");
  EXPECT_EQ(RenderError("{{ none.split('x') }}").message(), "line 1: UndefinedError: 'None' has no attribute 'split'");
  EXPECT_EQ(RenderError("{{ 'abc'.items() }}").message(),
            "line 1: UndefinedError: 'str object' has no attribute 'items'");
  EXPECT_EQ(RenderError("{{ ('a' if false)|upper ~ y.z }}").message(), "line 1: UndefinedError: 'y' is undefined");
}

TEST(JinjaUndefinedTest, AbsentKeyIsUndefinedButNullIsNone) {
  const ordered_json ctx = {{"n", nullptr}};
  EXPECT_EQ(Render("{{ n is none }} {{ n is defined }} {{ t is none }} {{ t is defined }}", ctx),
            "True True False False");
}

// ---------------------------------------------------------------- lookup order

TEST(JinjaLookupTest, DotTriesTheAttributeThenTheItem) {
  const ordered_json ctx = {{"m", {{"role", "user"}, {"items", 5}}}};
  EXPECT_EQ(Render("{{ m.role }} {{ m['role'] }} {{ m.items is callable }} {{ m['items'] }}", ctx), "user user True 5");
  EXPECT_EQ(Render("{{ m.get('role') }} {{ m.get('x', 'd') }} {{ m.get('x') }}", ctx), "user d None");
  EXPECT_EQ(Render("{{ d.a.1 }} {{ d.a[-1] }} {{ messages.0.role }}",
                   {{"d", {{"a", {1, 2}}}}, {"messages", {{{"role", "user"}}}}}),
            "2 2 user");
}

// ---------------------------------------------------------------- operators

TEST(JinjaOperatorTest, ArithmeticFollowsPython) {
  EXPECT_EQ(Render("{{ 1 + 2 * 3 - 4 // 3 }} {{ 7 / 2 }} {{ 10 / 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7.5 % 2 }}"),
            "6 3.5 5.0 -4 2 1.5");
  EXPECT_EQ(Render("{{ 2 ** 3 }} {{ 2 ** -1 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ true + 1 }}"), "8 0.5 64 4 2");
  EXPECT_EQ(RenderError("{{ 1 / 0 }}").message(), "line 1: ZeroDivisionError: division by zero");
}

TEST(JinjaOperatorTest, PlusConcatenatesSameTypesOnly) {
  EXPECT_EQ(Render("{{ 'a' + 'b' }} {{ [1] + [2] }} {{ (1,) + (2,) }}"), "ab [1, 2] (1, 2)");
  EXPECT_EQ(RenderError("{{ 'a' + none }}").message(),
            "line 1: TypeError: can only concatenate str (not \"NoneType\") to str");
  EXPECT_EQ(RenderError("{{ 'a' + {} }}").message(),
            "line 1: TypeError: can only concatenate str (not \"dict\") to str");
  EXPECT_EQ(RenderError("{{ 1 + 'a' }}").message(),
            "line 1: TypeError: unsupported operand type(s) for +: 'int' and 'str'");
}

TEST(JinjaOperatorTest, RepetitionFormattingAndConcat) {
  EXPECT_EQ(Render("{{ 'ab' * 2 }} {{ 2 * 'ab' }} {{ [1] * 2 }} {{ 'x' * -1 }}|"), "abab abab [1, 1] |");
  EXPECT_EQ(Render("{{ '%s-%d' % ('a', 3) }} {{ '%05.1f|%x|%r' % (3.14159, 255, 'a') }}"), "a-3 003.1|ff|'a'");
  EXPECT_EQ(Render("{{ 1 ~ 2 ~ 'x' }}"), "12x");
}

TEST(JinjaOperatorTest, ComparisonsAndMembership) {
  EXPECT_EQ(Render("{{ 1 == 1.0 }} {{ 1 == true }} {{ [1] == (1,) }} {{ {'a': [1]} == {'a': [1]} }}"),
            "True True False True");
  EXPECT_EQ(Render("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }}"), "True False True True");
  EXPECT_EQ(Render("{{ 'b' in 'abc' }} {{ 1 in [1.0] }} {{ 'a' in {'a': 1} }} {{ 3 not in [1] }}"),
            "True True True True");
  EXPECT_EQ(RenderError("{{ 1 < 'a' }}").message(),
            "line 1: TypeError: '<' not supported between instances of 'int' and 'str'");
  EXPECT_EQ(RenderError("{{ 'x' in none }}").message(),
            "line 1: TypeError: argument of type 'NoneType' is not iterable");
  EXPECT_EQ(RenderError("{{ 1 in 'abc' }}").message(),
            "line 1: TypeError: 'in <string>' requires string as left operand, not int");
}

TEST(JinjaOperatorTest, AndOrReturnAnOperand) {
  EXPECT_EQ(Render("{{ x or [] }} {{ 0 and 'y' }} {{ [] or none }} {{ 'a' and 'b' }}"), "[] 0 None b");
}

TEST(JinjaOperatorTest, InlineIf) {
  EXPECT_EQ(Render("{{ 1 if 0 else 2 }} {{ 'a' if true }}|{{ 'a' if false }}|"), "2 a||");
}

TEST(JinjaOperatorTest, FiltersAndTestsBindTighterThanOperators) {
  EXPECT_EQ(Render("{{ 'a' + 'b' | upper }}"), "aB");
  EXPECT_EQ(Render("{{ [1, 2]|length + 1 }} {{ -1|abs }}"), "3 1");  // but unary minus binds tighter still
  EXPECT_EQ(Render("{{ not x is defined }} {{ 2 == 2 is number }}"), "True False");  // 2 == (2 is number)
  EXPECT_EQ(Render("{{ 'x' ~ 1 + 2 }}"),
            "ERROR FAILED_PRECONDITION: line 1: TypeError: can only concatenate str "
            "(not \"int\") to str");  // ~ binds tighter than +
}

// ---------------------------------------------------------------- indexing and slicing

TEST(JinjaIndexTest, IndexesAndSlicesFollowPython) {
  const ordered_json ctx = {{"xs", {1, 2, 3}}};
  EXPECT_EQ(Render("{{ xs[0] }} {{ xs[-1] }} {{ xs[1:] }} {{ xs[:-1] }} {{ xs[::-1] }} {{ xs[::2] }}", ctx),
            "1 3 [2, 3] [1, 2] [3, 2, 1] [1, 3]");
  EXPECT_EQ(Render("{{ xs[-10:10] }} {{ xs[5:] }} {{ xs[2:0:-1] }} {% set i = 0 %}{{ xs[i + 1:] }}", ctx),
            "[1, 2, 3] [] [3, 2] [2, 3]");
  EXPECT_EQ(Render("{{ 'héllo'[1] }} {{ 'héllo'[::-1] }} {{ 'héllo'|length }} {{ 'abc'[:-1] }}"), "é olléh 5 ab");
  EXPECT_EQ(RenderError("{{ xs[::0] }}", ctx).message(), "line 1: ValueError: slice step cannot be zero");
}

// ---------------------------------------------------------------- literals

TEST(JinjaLiteralTest, StringsUsePythonEscapesAndMaySpanLines) {
  EXPECT_EQ(Render("{{ 'a\\tb\\n\\'\\\\ \\u00e9\\x41\\101' }}"), "a\tb\n'\\ éAA");
  EXPECT_EQ(Render("{{ \"two\nlines\" }} {{ 'a' 'b' }} {{ '\\q' }}"), "two\nlines ab \\q");
}

TEST(JinjaLiteralTest, NumbersAndConstants) {
  EXPECT_EQ(Render("{{ 1_000 }} {{ 0x1F }} {{ 0b101 }} {{ 1.5e3 }} {{ true }} {{ True }} {{ none }}"),
            "1000 31 5 1500.0 True True None");
  EXPECT_EQ(Render("{{ [1, 'a'] }} {{ {'k': (1, 2)} }} {{ (1) }}"), "[1, 'a'] {'k': (1, 2)} 1");
}

// ---------------------------------------------------------------- tests

TEST(JinjaTestsTest, TypeTests) {
  const ordered_json ctx = {{"s", "x"},  {"l", {1}}, {"d", {{"a", 1}}}, {"n", nullptr},
                            {"b", true}, {"i", 1},   {"f", 1.5}};
  EXPECT_EQ(Render("{{ s is string }}{{ l is string }}{{ d is mapping }}{{ l is mapping }}", ctx),
            "TrueFalseTrueFalse");
  EXPECT_EQ(
      Render("{{ s is iterable }}{{ d is iterable }}{{ i is iterable }}{{ s is sequence }}{{ d is sequence }}", ctx),
      "TrueTrueFalseTrueTrue");
  EXPECT_EQ(Render("{{ n is none }}{{ b is true }}{{ i is true }}{{ false is false }}{{ 0 is false }}", ctx),
            "TrueTrueFalseTrueFalse");
  EXPECT_EQ(Render("{{ b is boolean }}{{ i is boolean }}{{ i is integer }}{{ b is integer }}{{ f is float }}", ctx),
            "TrueFalseTrueFalseTrue");
  EXPECT_EQ(Render("{{ b is number }}{{ s is number }}{{ range is callable }}{{ s is callable }}", ctx),
            "TrueFalseTrueFalse");
}

TEST(JinjaTestsTest, ValueTests) {
  EXPECT_EQ(Render("{{ 3 is odd }}{{ 3 is even }}{{ 9 is divisibleby 3 }}{{ 9 is divisibleby(2) }}"),
            "TrueFalseTrueFalse");
  EXPECT_EQ(Render("{{ 1 is eq 1 }}{{ 1 is equalto 2 }}{{ 1 is ne 2 }}{{ 3 is gt 2 }}{{ 3 is ge 3 }}{{ 1 is lt 0 }}"),
            "TrueFalseTrueTrueTrueFalse");
  EXPECT_EQ(Render("{{ 'a' is in 'abc' }}{{ 'a' is lower }}{{ 'A' is upper }}{{ none is sameas none }}"),
            "TrueTrueTrueTrue");
  EXPECT_EQ(Render("{{ 'upper' is filter }}{{ 'odd' is test }}{{ ('a'|safe) is escaped }}"), "TrueTrueTrue");
  EXPECT_EQ(Render("{{ x is not none }} {{ x is not string }}"), "True True");
}

}  // namespace
}  // namespace radixserve::jinja
