// The Jinja engine's filters (tojson as transformers overrides it), and the str, dict and list
// methods templates call. Checked against jinja2 3.1.6.
#include <gtest/gtest.h>

#include "tests/jinja/render_helpers.h"

namespace radixserve::jinja {
namespace {

using testing::ordered_json;
using testing::Render;
using testing::RenderError;

// ---------------------------------------------------------------- tojson

TEST(JinjaTojsonTest, IsJsonDumpsWithTransformersDefaults) {
  ordered_json args = ordered_json::object();
  args["city"] = "São Paulo";
  args["n"] = 3;
  args["ok"] = true;
  args["none"] = nullptr;
  args["ratio"] = 0.5;
  args["list"] = {1, 2.0};
  EXPECT_EQ(Render("{{ a|tojson }}", {{"a", args}}),
            "{\"city\": \"São Paulo\", \"n\": 3, \"ok\": true, \"none\": null, \"ratio\": 0.5, \"list\": [1, 2.0]}");
  EXPECT_EQ(Render("{{ 'q\"\\\\ \\n\\t\\x1b <&>'|tojson }}"), "\"q\\\"\\\\ \\n\\t\\u001b <&>\"");
  EXPECT_EQ(Render("{{ 'é😀'|tojson(ensure_ascii=true) }}"), "\"\\u00e9\\ud83d\\ude00\"");
  EXPECT_EQ(Render("{{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }} {{ [1, 2]|tojson(separators=(',', ':')) }}"),
            "{\"a\": 2, \"b\": 1} [1,2]");
}

TEST(JinjaTojsonTest, IndentPutsItemsOnLines) {
  EXPECT_EQ(Render("{{ {'a': [1, 2], 'b': {}, 'c': []}|tojson(indent=2) }}"),
            "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {},\n  \"c\": []\n}");
  EXPECT_EQ(Render("{{ {'a': 1}|tojson(indent=0) }}"), "{\n\"a\": 1\n}");
}

TEST(JinjaTojsonTest, RefusesWhatJsonCannotHold) {
  EXPECT_EQ(RenderError("{{ namespace()|tojson }}").message(),
            "line 1: TypeError: Object of type Namespace is not JSON serializable");
}

// ---------------------------------------------------------------- string filters

TEST(JinjaFilterTest, StringFilters) {
  EXPECT_EQ(Render("[{{ '  x \\n'|trim }}][{{ 'xxaxx'|trim('x') }}][{{ none|trim }}]"), "[x][a][None]");
  EXPECT_EQ(Render("{{ 'aBc'|upper }} {{ 'aBc'|lower }} {{ 'hello wORLD'|capitalize }} {{ \"it's a-b (c)\"|title }}"),
            "ABC abc Hello world It's A-B (C)");
  EXPECT_EQ(Render("{{ \"{'a': 1}\"|replace(\"'\", '\"') }} {{ 'aaa'|replace('a', 'b', 2) }}"), "{\"a\": 1} bba");
  EXPECT_EQ(Render("{{ 'a\\nb\\n\\nc'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}"), "a\n  b\n\n  c|  a\n  b");
  EXPECT_EQ(Render("{{ '%s=%d'|format('a', 1) }} {{ 3.14159|round(2) }} {{ 2.5|round }} {{ '42.7'|int }} "
                   "{{ 'x'|int }} {{ '1.5'|float }} {{ -3|abs }}"),
            "a=1 3.14 2.0 42 0 1.5 3");
}

TEST(JinjaFilterTest, DefaultReplacesUndefinedOrWithTrueFalseValues) {
  EXPECT_EQ(Render("{{ x|default('d') }} {{ none|default('d') }} {{ none|default('d', true) }} "
                   "{{ ''|default('d', true) }} {{ []|default('d', true) }} {{ 0|d('d', true) }}"),
            "d None d d d d");
}

TEST(JinjaFilterTest, LengthStringListAndSafe) {
  EXPECT_EQ(Render("{{ 'héllo'|length }} {{ [1, 2]|count }} {{ {'a': 1}|length }} {{ x|length }}"), "5 2 1 0");
  EXPECT_EQ(RenderError("{{ none|length }}").message(), "line 1: TypeError: object of type 'NoneType' has no len()");
  EXPECT_EQ(Render("{{ 'ab'|list }} {{ {'a': 1}|list }} {{ 1|string ~ 2 }}"), "['a', 'b'] ['a'] 12");
  // |safe marks text as Markup: printing is unchanged, but `+` escapes the plain side.
  EXPECT_EQ(Render("{{ '<b>'|safe }} {{ ('<'|safe) + '&' }} {{ '<' ~ ('&'|safe) }}"), "<b> <&amp; <&");
}

// ---------------------------------------------------------------- sequence filters

TEST(JinjaFilterTest, SortingIsCaseInsensitiveByDefault) {
  EXPECT_EQ(Render("{{ {'b': 1, 'A': 2, 'a': 3}|dictsort }}"), "[('A', 2), ('a', 3), ('b', 1)]");
  EXPECT_EQ(Render("{{ ['b', 'A', 'a', 'B']|sort }} {{ ['b', 'A', 'a', 'B']|sort(case_sensitive=true) }} "
                   "{{ [3, 1, 2]|sort(reverse=true) }}"),
            "['A', 'a', 'b', 'B'] ['A', 'B', 'a', 'b'] [3, 2, 1]");
  EXPECT_EQ(Render("{{ ['b', 'A', 'a', 'B']|unique|list }} {{ ['b', 'A', 'a']|min }} {{ ['b', 'A', 'C']|max }}"),
            "['b', 'A'] A C");
  EXPECT_EQ(Render("{{ [{'t': 'b', 'v': 1}, {'t': 'a', 'v': 2}]|sort(attribute='t')|map(attribute='v')|list }}"),
            "[2, 1]");
  EXPECT_EQ(RenderError("{{ [1, 'a']|sort }}").message(),
            "line 1: TypeError: '<' not supported between instances of 'str' and 'int'");
}

TEST(JinjaFilterTest, ItemsNeedsAMapping) {
  EXPECT_EQ(Render("{{ {'a': 1}|items|list }} {{ x|items|list }}"), "[('a', 1)] []");
  EXPECT_EQ(RenderError("{% for k, v in 'abc'|items %}{% endfor %}").message(),
            "line 1: TypeError: Can only get item pairs from a mapping.");
}

TEST(JinjaFilterTest, SelectRejectMapJoin) {
  const ordered_json tools = {{{"type", "function"}, {"name", "a"}}, {{"type", "code_interpreter"}}, {{"name", "c"}}};
  const ordered_json ctx = {{"tools", tools}};
  EXPECT_EQ(Render("{{ tools|selectattr('type', 'equalto', 'function')|list|length }} "
                   "{{ tools|selectattr('name', 'defined')|map(attribute='name')|join(', ') }} "
                   "{{ tools|rejectattr('type')|list }}",
                   ctx),
            "1 a, c [{'name': 'c'}]");
  EXPECT_EQ(Render("{{ ['a', 'code_interpreter']|reject('equalto', 'code_interpreter')|join(', ') }} "
                   "{{ ['a', 'b']|map('upper')|list }} {{ [1, 2, 3]|select('odd')|list }} {{ [0, 1]|select|list }}"),
            "a ['A', 'B'] [1, 3] [1]");
  EXPECT_EQ(Render("{{ [1, 'a', none]|join('-') }} {{ tools|map(attribute='name', default='?')|join }}", ctx),
            "1-a-None a?c");
}

TEST(JinjaFilterTest, OtherSequenceFilters) {
  EXPECT_EQ(Render("{{ [1, 2, 3]|first }}{{ [1, 2, 3]|last }} {{ []|first }}| {{ [1, 2]|reverse|list }} "
                   "{{ 'abc'|reverse }} {{ [1, 2, 3]|sum }} {{ [1, 2, 3, 4, 5]|batch(2)|list }}"),
            "13 | [2, 1] cba 6 [[1, 2], [3, 4], [5]]");
  EXPECT_EQ(Render("{{ [3, 1]|min }} {{ []|max }}|"), "1 |");
}

// ---------------------------------------------------------------- methods

TEST(JinjaMethodTest, StringMethods) {
  EXPECT_EQ(Render("{{ 'a</think>b'.split('</think>') }} {{ ' a  b '.split() }} {{ 'a b c'.split(' ', 1) }}"),
            "['a', 'b'] ['a', 'b'] ['a', 'b c']");
  EXPECT_EQ(Render("[{{ '\\n\\nx\\n'.lstrip('\\n') }}][{{ 'x\\n\\n'.rstrip('\\n') }}][{{ '  x  '.strip() }}]"
                   "[{{ ' x '.lstrip() }}]"),
            "[x\n][x][x][x ]");
  EXPECT_EQ(Render("{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }} {{ 'a-b'.replace('-', '+') }} "
                   "{{ 'hi'.upper() }} {{ 'hé'.find('é') }} {{ ', '.join(['a', 'b']) }}"),
            "True True a+b HI 1 a, b");
}

TEST(JinjaMethodTest, DictAndListMethods) {
  const ordered_json ctx = {{"d", {{"a", 1}, {"b", 2}}}};
  EXPECT_EQ(Render("{{ d.items()|list }} {{ d.keys()|list }} {{ d.values()|list }} {{ d.get('a') }} "
                   "{{ d.get('z', 0) }} {{ [1, 2, 2].count(2) }} {{ [1, 2].index(2) }}",
                   ctx),
            "[('a', 1), ('b', 2)] ['a', 'b'] [1, 2] 1 0 2 1");
}

TEST(JinjaMethodTest, ListsAndDictsCannotBeChanged) {
  EXPECT_EQ(RenderError("{% set l = [] %}{{ l.append(1) }}").message(),
            "line 1: SecurityError: access to attribute 'append' of 'list' object is unsafe.");
  EXPECT_EQ(RenderError("{{ {'a': 1}.pop('a') }}").message(),
            "line 1: SecurityError: access to attribute 'pop' of 'dict' object is unsafe.");
}

}  // namespace
}  // namespace radixserve::jinja
