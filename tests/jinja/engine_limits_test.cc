// The Jinja engine's error reporting (status codes, line numbers), its sandbox caps, and rendering
// one Template from several threads.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/jinja/render_helpers.h"

namespace radixserve::jinja {
namespace {

using testing::ordered_json;
using testing::Render;
using testing::RenderError;

Status ParseError(std::string_view source, const RenderLimits& limits = {}) {
  auto t = Template::Parse(source, limits);
  return t.ok() ? Status::Ok() : t.status();
}

// ---------------------------------------------------------------- errors

TEST(JinjaErrorTest, SyntaxErrorsNameTheLine) {
  const Status st = ParseError("a\n{% if x %}\nb\n{{ (1 }}");
  EXPECT_EQ(st.code(), StatusCode::kCorrupt);
  EXPECT_EQ(st.message(), "line 4: syntax error: unexpected '}', expected ')'");
  EXPECT_EQ(ParseError("{% for x in y %}").message(),
            "line 1: syntax error: unexpected end of template, expected 'endfor' or 'else'");
  EXPECT_EQ(ParseError("\n{% endif %}").message(), "line 2: syntax error: unknown tag 'endif'");
  EXPECT_EQ(ParseError("{{ 'abc }}").message(), "line 1: syntax error: unterminated string literal");
  EXPECT_EQ(ParseError("{% break %}").message(), "line 1: syntax error: 'break' outside of a loop");
}

TEST(JinjaErrorTest, UnsupportedConstructsAreRefusedAtParse) {
  Status st = ParseError("a\nb\n{{ x | xmlattr }}");
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_EQ(st.message(), "line 3: unknown filter 'xmlattr'");
  EXPECT_EQ(ParseError("{% for x in y %}{{ x is foo }}{% endfor %}").message(), "line 1: unknown test 'foo'");
  for (const char* tag : {"include 'a'", "import 'a' as b", "extends 'a'", "block b", "from 'a' import b"}) {
    st = ParseError(std::string("{% ") + tag + " %}");
    EXPECT_EQ(st.code(), StatusCode::kUnsupported) << tag;
  }
}

TEST(JinjaErrorTest, UnknownFiltersInsideAnIfFailOnlyWhenTheyRun) {
  // As in jinja2: an if statement or inline if defers the check to the moment the filter runs.
  EXPECT_EQ(Render("{% if false %}{{ x|xmlattr }}{% endif %}{{ 1 if true else x|xmlattr }}ok"), "1ok");
  const Status st = RenderError("{% if true %}\n{{ x|xmlattr }}{% endif %}");
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_EQ(st.message(), "line 2: unknown filter 'xmlattr'");
  // A loop or macro body inside the if is checked at parse again.
  EXPECT_EQ(ParseError("{% if false %}{% for i in x %}{{ i|xmlattr }}{% endfor %}{% endif %}").code(),
            StatusCode::kUnsupported);
}

TEST(JinjaErrorTest, RuntimeErrorsNameTheLineOfTheFailingExpression) {
  const Status st = RenderError("{% macro m(x) %}\n{{ x + 1 }}\n{% endmacro %}\n{{ m('a') }}");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(), "line 2: TypeError: can only concatenate str (not \"int\") to str");
}

TEST(JinjaErrorTest, ContextMustBeAnObjectOrNull) {
  auto t = Template::Parse("x{{ y }}");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->Render(ordered_json::array(), RenderOptions()).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(*t->Render(nullptr, RenderOptions()), "x");  // null: no variables
}

// ---------------------------------------------------------------- caps

TEST(JinjaLimitTest, SourceSize) {
  RenderLimits limits;
  limits.max_source_bytes = 10;
  EXPECT_TRUE(ParseError("0123456789", limits).ok());
  EXPECT_EQ(ParseError("0123456789a", limits).code(), StatusCode::kResourceExhausted);
}

TEST(JinjaLimitTest, LoopIterationsCountAcrossAllLoops) {
  RenderLimits limits;
  limits.max_loop_iterations = 100;
  const ordered_json ctx = {{"n", 50}};
  EXPECT_TRUE(RenderError("{% for i in range(n) %}{% endfor %}{% for i in range(n) %}{% endfor %}", ctx, limits).ok());
  const Status st =
      RenderError("{% for i in range(n) %}{% endfor %}{% for i in range(n + 1) %}{% endfor %}", ctx, limits);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(st.message(), "line 1: more than 100 loop iterations in one render");
  // Nested loops multiply.
  EXPECT_EQ(RenderError("{% for i in range(20) %}{% for j in range(20) %}{% endfor %}{% endfor %}", ctx, limits).code(),
            StatusCode::kResourceExhausted);
}

TEST(JinjaLimitTest, MacroCallDepth) {
  RenderLimits limits;
  limits.max_call_depth = 10;
  const std::string rec = "{% macro r(n) %}{% if n > 0 %}{{ r(n - 1) }}{% endif %}{% endmacro %}";
  EXPECT_TRUE(RenderError(rec + "{{ r(9) }}", {}, limits).ok());
  const Status st = RenderError(rec + "{{ r(10) }}", {}, limits);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(st.message(), "line 1: macro calls nest deeper than 10");
  // Unbounded recursion stops at the default depth instead of overflowing the stack, also when
  // each call nests deep expressions.
  EXPECT_EQ(RenderError("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(RenderError("{% macro r(n) %}{% if n ~ 0 %}{{ " + std::string(90, '-') +
                        "r(n - 2) }}{% endif %}"
                        "{% endmacro %}{{ r(5) }}")
                .code(),
            StatusCode::kResourceExhausted);
}

TEST(JinjaLimitTest, OutputAndBuiltStrings) {
  RenderLimits limits;
  limits.max_output_bytes = 100;
  EXPECT_TRUE(RenderError("{{ 'x' * 100 }}", {}, limits).ok());
  EXPECT_EQ(RenderError("{{ 'x' * 101 }}", {}, limits).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(RenderError("{% for i in range(30) %}abcd{% endfor %}", {}, limits).message(),
            "line 1: the output would exceed 100 bytes");
  // Strings that are never printed are bounded too.
  EXPECT_EQ(RenderError("{% set s = 'x' * 1000000000000 %}", {}, limits).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(RenderError("{% set ns = namespace(s='xx') %}{% for i in range(10) %}{% set ns.s = ns.s ~ ns.s %}"
                        "{% endfor %}",
                        {}, limits)
                .code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(RenderError("{% set s %}{% for i in range(200) %}x{% endfor %}{% endset %}", {}, limits).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(RenderError("{{ '%500s' % 'a' }}", {}, limits).code(), StatusCode::kResourceExhausted);
}

TEST(JinjaLimitTest, PrintingSharedValuesIsBounded) {
  // Lists may hold one big value many times over: printing or serialising them stops at the limit
  // instead of building gigabytes.
  const std::string big = "{% set x = [[1] * 1000] * 1000 %}{% set y = [x] * 1000 %}";
  EXPECT_EQ(RenderError(big + "{{ y }}").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(RenderError(big + "{{ y|string|length }}").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(RenderError(big + "{{ y|tojson }}").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(RenderError("{{ ([1] * 5000)|tojson(indent=1000) }}").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(RenderError("{{ range(-9223372036854775807, 9223372036854775807) }}").code(),
            StatusCode::kFailedPrecondition);  // OverflowError, like the sandbox's MAX_RANGE
}

TEST(JinjaLimitTest, NestingDepth) {
  // Deeply nested source is refused at parse; deeply nested values at render.
  EXPECT_EQ(ParseError("{{ " + std::string(500, '(') + "1" + std::string(500, ')') + " }}").code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(ParseError("{{ " + std::string(20, '(') + "1" + std::string(20, ')') + " }}").ok());
  std::string ifs;
  for (int i = 0; i < 500; ++i) ifs += "{% if true %}";
  EXPECT_EQ(ParseError(ifs).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(
      RenderError("{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = [ns.l] %}{% endfor %}").code(),
      StatusCode::kResourceExhausted);
  ordered_json deep = 1;
  for (int i = 0; i < 1000; ++i) deep = ordered_json::array({deep});
  EXPECT_EQ(RenderError("{{ d }}", {{"d", deep}}).code(), StatusCode::kResourceExhausted);
}

TEST(JinjaLimitTest, LongChainsAndCyclesOfNamespacesAreFreedSafely) {
  // 50000 namespaces linked one to the next, then dropped: freed without deep recursion.
  EXPECT_EQ(Render("{% set h = namespace(cur=none) %}{% for i in range(50000) %}"
                   "{% set h.cur = namespace(prev=h.cur) %}{% endfor %}{% set h.cur = none %}done"),
            "done");
  EXPECT_EQ(Render("{% set a = namespace() %}{% set b = namespace(a=a) %}{% set a.b = b %}ok"), "ok");
}

// ---------------------------------------------------------------- threads

TEST(JinjaThreadTest, OneTemplateRendersOnManyThreadsAtOnce) {
  auto t = Template::Parse(
      "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}"
      "{{ m.role }}:{{ m.content }};{% endfor %}{{ ns.n }}");
  ASSERT_TRUE(t.ok());
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int i = 0; i < 200; ++i) {
        const ordered_json ctx = {{"messages", {{{"role", "user"}, {"content", std::to_string(k * 1000 + i)}}}}};
        auto r = t->Render(ctx, RenderOptions());
        if (!r.ok() || *r != "user:" + std::to_string(k * 1000 + i) + ";1") ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace radixserve::jinja
