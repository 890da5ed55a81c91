// The Jinja engine's statements, as jinja2 3.1 runs them: scoping, loops and loop.*, namespace,
// macros, block set, filter blocks and the global functions. Checked against jinja2 3.1.6.
#include <gtest/gtest.h>

#include "tests/jinja/render_helpers.h"

namespace radixserve::jinja {
namespace {

using testing::ordered_json;
using testing::Render;
using testing::RenderError;

// ---------------------------------------------------------------- scoping

TEST(JinjaScopeTest, SetInsideALoopStaysInTheLoop) {
  // Each iteration starts from the outer value; after the loop the outer value is back.
  EXPECT_EQ(Render("{% set x = 1 %}{% for i in [1, 2] %}[{{ x }}]{% set x = i * 10 %}[{{ x }}]{% endfor %}{{ x }}"),
            "[1][10][1][20]1");
  EXPECT_EQ(Render("{% for i in [1, 2] %}[{{ y }}]{% set y = i %}{% endfor %}[{{ y }}]"), "[][][]");
}

TEST(JinjaScopeTest, IfOpensNoScope) {
  EXPECT_EQ(Render("{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}"), "2");
}

TEST(JinjaScopeTest, TopLevelSetRebindsAContextVariable) {
  EXPECT_EQ(Render("{% set messages = messages[1:] %}{{ messages|length }}", {{"messages", {1, 2, 3}}}), "2");
}

TEST(JinjaScopeTest, NamespaceCarriesStateOutOfALoop) {
  EXPECT_EQ(
      Render("{% set ns = namespace(found=false, n=0) %}{% for i in [1, 2, 3] %}{% if i > 1 %}"
             "{% set ns.found = true %}{% set ns.n = ns.n + i %}{% endif %}{% endfor %}{{ ns.found }} {{ ns.n }}"),
      "True 5");
  EXPECT_EQ(Render("{% set ns = namespace() %}{% set ns.items = [] %}{% for i in range(3) %}"
                   "{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.items }}"),
            "[0, 1, 2]");
  EXPECT_EQ(RenderError("{% set l = [1] %}{% set l.x = 1 %}").message(),
            "line 1: TemplateRuntimeError: cannot assign attribute on non-namespace object");
}

TEST(JinjaScopeTest, BlockSetFilterBlockAndWithHaveTheirOwnScope) {
  EXPECT_EQ(Render("{% set x %}a{% set y = 5 %}{{ y }}{% endset %}{{ x }}|{{ y }}"), "a5|");
  EXPECT_EQ(Render("{% filter upper %}a{% set q = 1 %}{{ q }}{% endfilter %}{{ q }}"), "A1");
  EXPECT_EQ(Render("{% with a = 1 %}{% set b = 2 %}{{ a }}{{ b }}{% endwith %}{{ a }}{{ b }}"), "12");
}

TEST(JinjaScopeTest, TupleAssignment) {
  EXPECT_EQ(Render("{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = 1, %}{{ t }}"), "12(1,)");
}

// ---------------------------------------------------------------- loops

TEST(JinjaLoopTest, LoopVariables) {
  EXPECT_EQ(Render("{% for x in 'abc' %}{{ loop.index0 }}{{ loop.index }}{{ loop.revindex }}{{ loop.first }}"
                   "{{ loop.last }}{{ loop.length }};{% endfor %}"),
            "013TrueFalse3;122FalseFalse3;231FalseTrue3;");
  EXPECT_EQ(Render("{% for x in [1, 2, 3] %}{{ loop.previtem }}/{{ loop.nextitem }}"
                   "{{ loop.previtem is defined }} {% endfor %}"),
            "/2False 1/3True 2/True ");
  EXPECT_EQ(Render("{% for i in range(3) %}{{ loop.cycle('a', 'b') }}{% endfor %}"), "aba");
}

TEST(JinjaLoopTest, FilteredLoopCountsOnlyPassingItems) {
  EXPECT_EQ(Render("{% for x in [1, 2, 3, 4] if x is even %}{{ loop.index }}/{{ loop.length }}{{ loop.last }} "
                   "{% endfor %}"),
            "1/2False 2/2True ");
  EXPECT_EQ(
      Render("{% for k in d if k not in ['b'] %}{{ k }}{{ loop.last }}{% endfor %}", {{"d", {{"a", 1}, {"b", 2}}}}),
      "aTrue");
}

TEST(JinjaLoopTest, IteratesDictsStringsAndPairs) {
  const ordered_json ctx = {{"d", {{"b", 1}, {"a", 2}}}};
  EXPECT_EQ(Render("{% for k in d %}{{ k }}{% endfor %} {% for k, v in d|items %}{{ k }}={{ v }} {% endfor %}"
                   "{% for k, v in d.items() %}{{ k }}{{ v }}{% endfor %}",
                   ctx),
            "ba b=1 a=2 b1a2");
  EXPECT_EQ(Render("{% for c in 'héy' %}{{ c }}.{% endfor %}"), "h.é.y.");
  EXPECT_EQ(RenderError("{% for a, b in [[1]] %}{% endfor %}").message(),
            "line 1: ValueError: not enough values to unpack (expected 2, got 1)");
  EXPECT_EQ(RenderError("{% for x in none %}{% endfor %}").message(),
            "line 1: TypeError: 'NoneType' object is not iterable");
}

TEST(JinjaLoopTest, BreakContinueElseAndNesting) {
  EXPECT_EQ(Render("{% for x in [1, 2, 3] %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}|"
                   "{% for x in [1, 2, 3] %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}{% endfor %}"),
            "1|13");
  EXPECT_EQ(Render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(
      Render("{% for a in [1, 2] %}{% for b in [3, 4] %}{{ loop.index }}{% endfor %}{{ loop.index }};{% endfor %}"),
      "121;122;");
}

// ---------------------------------------------------------------- macros

TEST(JinjaMacroTest, ArgumentsDefaultsAndKeywords) {
  const std::string m = "{% macro m(a, b=a ~ 'x') %}{{ a }}-{{ b }}{% endmacro %}";
  EXPECT_EQ(Render(m + "{{ m(1) }} {{ m(1, 2) }} {{ m(b=3, a=4) }} {{ m() }}"), "1-1x 1-2 4-3 -x");
  EXPECT_EQ(Render("{% macro m() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, z=3) }}"), "(1, 2){'z': 3}");
  EXPECT_EQ(RenderError("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}").message(),
            "line 1: TypeError: macro 'm' takes not more than 1 argument(s)");
  EXPECT_EQ(RenderError("{% macro m(a) %}{% endmacro %}{{ m(1, a=2) }}").message(),
            "line 1: TypeError: macro 'm' takes no keyword argument 'a'");
}

TEST(JinjaMacroTest, RecursionAndResultsUsedAsStrings) {
  EXPECT_EQ(Render("{% macro r(n) %}{% if n > 0 %}{{ n }}{{ r(n - 1) }}{% endif %}{% endmacro %}{{ r(3) }}"), "321");
  EXPECT_EQ(Render("{% macro m(x) %} {{ x }} {% endmacro %}[{{ m(1)|trim }}] {{ m('a,').endswith(', ') }} "
                   "{{ m(2) == ' 2 ' }} {{ m(3) ~ '!' }}"),
            "[1] True True  3 !");
}

TEST(JinjaMacroTest, MacrosReadTopLevelNamesWhenCalled) {
  EXPECT_EQ(Render("{% macro m() %}{{ x }}{% endmacro %}{% set x = 1 %}{{ m() }}{% set x = 2 %}{{ m() }}"), "12");
  EXPECT_EQ(Render("{% set a = 'x' %}{% macro m() %}{% set a = 'y' %}{{ a }}{% endmacro %}{{ m() }}{{ a }}"), "yx");
  EXPECT_EQ(Render("{% set n = namespace(v=1) %}{% macro m() %}{% set n.v = n.v + 1 %}{% endmacro %}"
                   "{{ m() }}{{ m() }}{{ n.v }}"),
            "3");
}

// ---------------------------------------------------------------- block set and filter blocks

TEST(JinjaBlockTest, BlockSetCapturesTextAndFilterBlocksFilterIt) {
  EXPECT_EQ(Render("{% set s %}\n  inner\n{% endset %}[{{ s }}]"), "[  inner\n]");
  EXPECT_EQ(Render("{% set s | upper %}ab{% endset %}{{ s }}"), "AB");
  EXPECT_EQ(Render("{% filter trim %}\n\n  hello  \n\n{% endfilter %}|"), "hello|");
  EXPECT_EQ(Render("{% generation %}{{ 1 }}{% endgeneration %}"), "1");  // transformers' assistant marker
}

// ---------------------------------------------------------------- globals

TEST(JinjaGlobalsTest, RaiseExceptionGivesTheTemplatesMessageExactly) {
  const Status st = RenderError("{% if true %}\n{{ raise_exception('Bad role: ' ~ 1) }}{% endif %}");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "Bad role: 1");
}

TEST(JinjaGlobalsTest, StrftimeNowFormatsRenderOptionsNow) {
  EXPECT_EQ(Render("{{ strftime_now('%Y-%m-%d %H:%M:%S|%d %b %Y|%B %-d, %Y|%A %j %p') }}"),
            "2026-01-15 12:00:00|15 Jan 2026|January 15, 2026|Thursday 015 PM");
}

TEST(JinjaGlobalsTest, RangeNamespaceDict) {
  EXPECT_EQ(Render("{{ range(3)|list }} {{ range(5, 0, -2)|list }} {{ range(1, 10, 3)|list }}"),
            "[0, 1, 2] [5, 3, 1] [1, 4, 7]");
  EXPECT_EQ(Render("{{ namespace(x=1).x }} {{ namespace({'a': 1}, b=2) }} {{ dict(a=1, b=[2]) }}"),
            "1 <Namespace {'a': 1, 'b': 2}> {'a': 1, 'b': [2]}");
  EXPECT_EQ(RenderError("{{ range(100001) }}").message(),
            "line 1: OverflowError: Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
}

}  // namespace
}  // namespace radixserve::jinja
