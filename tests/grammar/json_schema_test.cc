// The JSON Schema front-end (core/grammar/json_schema.h), keyword by keyword: each test compiles
// a schema and checks texts in and out of the grammar's language with the test-only byte
// recognizer, or checks the refusal and the JSON pointer its message starts with. The keywords
// the shared corpus lacks (prefixItems, dependentRequired, unevaluatedProperties, $anchor) are
// covered here.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/grammar/json_schema.h"
#include "tests/grammar/byte_recognizer.h"

namespace radixserve::grammar {
namespace {

struct Compiled {
  Grammar grammar;
  JsonSchemaReport report;
};

Compiled MustCompile(std::string_view schema, const JsonSchemaOptions& options = {}) {
  Compiled c;
  auto g = CompileJsonSchemaText(schema, options, GrammarLimits{}, &c.report);
  EXPECT_TRUE(g.ok()) << schema << "\n" << g.status().ToString();
  if (g.ok()) c.grammar = std::move(g).value();
  return c;
}

// Every text of `in` is in the schema's language and none of `out` is.
void ExpectLanguage(std::string_view schema, const std::vector<std::string>& in, const std::vector<std::string>& out,
                    const JsonSchemaOptions& options = {}) {
  Compiled c = MustCompile(schema, options);
  if (c.grammar.rules().empty()) return;
  testing::ByteRecognizer r(c.grammar);
  for (const auto& t : in) EXPECT_TRUE(r.Recognizes(t)) << "should accept " << t << "\nschema " << schema;
  for (const auto& t : out) EXPECT_FALSE(r.Recognizes(t)) << "should reject " << t << "\nschema " << schema;
}

// The compile fails with `code` and a message that starts with `prefix`.
void ExpectRefused(std::string_view schema, StatusCode code, std::string_view prefix) {
  auto g = CompileJsonSchemaText(schema);
  ASSERT_FALSE(g.ok()) << schema;
  EXPECT_EQ(g.status().code(), code) << g.status().ToString();
  EXPECT_EQ(g.status().message().substr(0, prefix.size()), prefix) << g.status().ToString();
}

TEST(JsonSchema, Types) {
  ExpectLanguage(R"({"type":"null"})", {"null"}, {"0", "\"\"", "nul", "nulll"});
  ExpectLanguage(R"({"type":"boolean"})", {"true", "false"}, {"0", "null", "True"});
  ExpectLanguage(R"({"type":"string"})", {"\"\"", "\"abc\""}, {"abc", "1", "\"a"});
  ExpectLanguage(R"({"type":"array"})", {"[]", "[1,\"a\",[null]]"}, {"{}", "[1,]", "[,1]"});
  ExpectLanguage(R"({"type":"object"})", {"{}", R"({"a":{"b":[1]}})"}, {"[]", R"({"a"})", R"({"a":1,})"});
  ExpectLanguage(R"({"type":["string","null"]})", {"null", "\"x\""}, {"1", "true"});
  // No type: any value.
  ExpectLanguage(R"({"description":"anything"})", {"null", "1", "-2.5e3", "\"s\"", "[]", R"({"k":false})"},
                 {"", "nan", "{"});
  ExpectLanguage("true", {"1", "{}"}, {"x"});
}

TEST(JsonSchema, StringsSpellingsAndEscapes) {
  ExpectLanguage(R"({"type":"string"})",
                 {R"("\"\\\/\b\f\n\r\t")", R"("\u00e9")", R"("\uD83D\uDE00")", "\"\xc3\xa9\xe2\x82\xac\"",
                  R"("\u0041")"},
                 {"\"a\nb\"", R"("\x41")", R"("\ud800")", R"("\ud800x")", "\"\xff\""});
}

TEST(JsonSchema, LengthsCountCodePoints) {
  ExpectLanguage(R"({"type":"string","minLength":2,"maxLength":3})",
                 {"\"ab\"", "\"abc\"", "\"\xc3\xa9\xe2\x82\xac\"", R"("\n\t")", R"("\uD83D\uDE00x")", R"("\u00e9a")"},
                 {"\"a\"", "\"abcd\"", R"("\uD83D\uDE00")", "\"\""});
  // Bounds past GrammarLimits::max_repeat are written in blocks, not refused.
  const std::string a12344(12344, 'a');
  ExpectLanguage(R"({"type":"string","minLength":12345,"maxLength":65535})",
                 {"\"" + a12344 + "a\"", "\"" + a12344 + "ab\""}, {"\"" + a12344 + "\"", "\"\""});
  ExpectLanguage(R"({"type":"array","items":{"type":"integer"},"maxItems":100000})", {"[]", "[1,2,3]"}, {"[1,]"});
}

TEST(JsonSchema, IntegerRangesAreExact) {
  ExpectLanguage(R"({"type":"integer","minimum":-15,"maximum":27})",
                 {"-15", "-9", "-10", "0", "-0", "9", "10", "19", "20", "27", "27.0", "-15.00"},
                 {"-16", "28", "30", "100", "1.5", "1e1", "01", "-", "+1", "27.01"});
  ExpectLanguage(R"({"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":1000})", {"1", "999", "500"},
                 {"0", "-0", "1000", "-1"});
  // (nlohmann reads integers past 2^64 as doubles, so bounds stay below that.)
  ExpectLanguage(R"({"type":"integer","minimum":1000000000000,"maximum":9999999999999999999})",
                 {"1000000000000", "9999999999999999999", "54321098765432"},
                 {"999999999999", "10000000000000000000"});
  ExpectLanguage(R"({"type":"integer","maximum":-100})", {"-100", "-101", "-99999999"}, {"-99", "0", "100"});
  ExpectLanguage(R"({"type":"integer","minimum":1.5,"maximum":4.5})", {"2", "4"}, {"1", "5"});
  // Draft 4's boolean exclusive bounds.
  ExpectLanguage(R"({"$schema":"http://json-schema.org/draft-04/schema#","type":"integer","minimum":5,"exclusiveMinimum":true})",
                 {"6"}, {"5"});
  // Without the zero-fraction spelling of integers.
  JsonSchemaOptions plain;
  plain.integer_point_zero = false;
  ExpectLanguage(R"({"type":"integer","minimum":-5,"maximum":5})", {"0", "-5"}, {"1.0", "-0"}, plain);
}

TEST(JsonSchema, NumberRangesAreExact) {
  ExpectLanguage(R"({"type":"number","minimum":0.5,"maximum":2.25})",
                 {"0.5", "0.50", "0.6", "1", "2", "2.2", "2.25", "2.250", "1.999999"},
                 {"0.49", "0.4999", "2.26", "2.2501", "3", "0", "-1"});
  ExpectLanguage(R"({"type":"number","exclusiveMinimum":0,"exclusiveMaximum":100})",
                 {"0.001", "1", "99.999", "50.5"}, {"0", "0.0", "-0", "100", "100.0", "-0.5"});
  ExpectLanguage(R"({"type":"number","minimum":-1.5,"maximum":-0.25})", {"-1.5", "-1.49", "-0.25", "-1"},
                 {"-1.51", "-0.2", "0", "-2"});
  // Exponents where nothing bounds the value.
  ExpectLanguage(R"({"type":"number"})", {"1e5", "-2.5E-3", "0", "-0.0", "10.5e+2"}, {"1e", ".5", "1.", "0x1", "00"});
  ExpectLanguage(R"({"type":"number","minimum":0})", {"0", "12.5"}, {"-1", "1e5"});
}

TEST(JsonSchema, MultipleOf) {
  ExpectLanguage(R"({"type":"number","multipleOf":0.01})", {"1.23", "1.230", "5", "-0.01"}, {"1.234", "0.001"});
  ExpectLanguage(R"({"type":"number","multipleOf":1})", {"3", "3.0", "-7"}, {"3.5"});
  ExpectLanguage(R"({"type":"integer","multipleOf":1})", {"3"}, {"3.5"});
  ExpectRefused(R"({"properties":{"n":{"type":"integer","multipleOf":3}}})", StatusCode::kUnsupported,
                "/properties/n/multipleOf: ");
  // Inside enum any multipleOf works: the listed values are checked.
  ExpectLanguage(R"({"enum":[3,4,6,7.5],"multipleOf":3})", {"3", "6", "6.0"}, {"4", "7.5"});
}

TEST(JsonSchema, PropertiesInSchemaOrder) {
  const char* s = R"({"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"},"c":{"type":"boolean"}},
                      "required":["a"]})";
  ExpectLanguage(s, {R"({"a":"x"})", R"({"b":1,"a":"x"})", R"({"b":1,"a":"x","c":true})", R"({"a":"x","c":false})"},
                 {R"({})", R"({"b":1})", R"({"a":"x","b":1})", R"({"b":"1","a":"x"})", R"({"a":"x",})"});
  // Extra keys (additionalProperties absent) come after the listed ones, never as a listed name.
  ExpectLanguage(s, {R"({"a":"x","zz":[1,{}]})", R"({"b":1,"a":"x","z":null,"y":1})"},
                 {R"({"zz":1,"a":"x"})", R"({"a":"x","b":1})", R"({"a":"x","a":"y"})"});
  ExpectLanguage(R"({"properties":{"a":{"type":"integer"}},"additionalProperties":false})", {R"({})", R"({"a":1})"},
                 {R"({"b":1})", R"({"a":1,"b":1})"});
  ExpectLanguage(R"({"properties":{"a":{"type":"integer"}},"additionalProperties":{"type":"string"}})",
                 {R"({"a":1,"b":"x"})", R"({"b":"x","c":"y"})"}, {R"({"b":1})", R"({"a":"1"})"});
  // Keys are written as JSON strings.
  ExpectLanguage(R"({"properties":{"a\"b\u00e9":{"const":1}},"required":["a\"b\u00e9"]})",
                 {"{\"a\\\"b\xc3\xa9\":1}"}, {R"({"ab":1})"});
  // Any order when asked for, with what that costs reported.
  JsonSchemaOptions any;
  any.strict_property_order = false;
  ExpectLanguage(s, {R"({"a":"x","b":1})", R"({"c":true,"a":"x"})"}, {R"({"a":1})"}, any);
  EXPECT_FALSE(MustCompile(s, any).report.not_enforced.empty());
}

TEST(JsonSchema, MinMaxPropertiesCountEveryMember) {
  const char* s = R"({"properties":{"a":{},"b":{}},"minProperties":1,"maxProperties":2})";
  ExpectLanguage(s, {R"({"a":1})", R"({"b":1})", R"({"a":1,"b":2})", R"({"x":1})", R"({"a":1,"x":1})"},
                 {R"({})", R"({"a":1,"b":2,"x":3})", R"({"x":1,"y":2,"z":3})"});
}

TEST(JsonSchema, PatternProperties) {
  const char* s = R"({"patternProperties":{"^x-":{"type":"integer"},"y$":{"minimum":5}},
                      "additionalProperties":{"type":"string"}})";
  ExpectLanguage(s, {R"({"x-a":1,"b":"s"})", R"({"x-y":5})", R"({"ay":6,"zz":"q"})", R"({"ay":"str"})"},
                 {R"({"x-a":"s"})", R"({"b":1})", R"({"x-y":4})", R"({"x-y":5.5})"});
  // A listed property that matches a pattern must satisfy both.
  ExpectLanguage(R"({"properties":{"x-id":{"minimum":10}},"patternProperties":{"^x-":{"type":"integer"}}})",
                 {R"({"x-id":10})"}, {R"({"x-id":10.5})", R"({"x-id":9})"});
  // Without additionalProperties, unmatched keys take any value.
  ExpectLanguage(R"({"patternProperties":{"^n":{"type":"number"}}})", {R"({"n1":1,"s":"x"})", R"({"s":[]})"},
                 {R"({"n1":"1"})"});
}

TEST(JsonSchema, PropertyNames) {
  ExpectLanguage(R"({"propertyNames":{"pattern":"^[a-z]+$","maxLength":3}})", {R"({})", R"({"abc":1,"x":[]})"},
                 {R"({"abcd":1})", R"({"A":1})", R"({"":1})"});
  ExpectLanguage(R"({"properties":{"Bad":{},"ok":{}},"propertyNames":{"enum":["ok","fine"]}})",
                 {R"({"ok":1})", R"({"fine":2})"}, {R"({"Bad":1})", R"({"other":1})"});
}

TEST(JsonSchema, DependentRequired) {
  const char* s = R"({"properties":{"a":{},"b":{}},"dependentRequired":{"a":["b"]}})";
  ExpectLanguage(s, {R"({})", R"({"b":1})", R"({"a":1,"b":2})"}, {R"({"a":1})"});
  // The needed key written before the one that needs it.
  const char* t = R"({"properties":{"a":{},"b":{}},"dependentRequired":{"b":["a"]}})";
  ExpectLanguage(t, {R"({"a":1,"b":2})", R"({"a":1})"}, {R"({"b":1})"});
  // Draft 7's array-valued dependencies.
  ExpectLanguage(R"({"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{},"b":{}},"dependencies":{"a":["b"]}})",
                 {R"({"a":1,"b":2})"}, {R"({"a":1})"});
  // 2020-12 has no `dependencies` keyword (the reference validator ignores it).
  ExpectLanguage(R"({"properties":{"a":{},"b":{}},"dependencies":{"a":["b"]}})", {R"({"a":1})"}, {});
}

TEST(JsonSchema, DependentSchemas) {
  ExpectLanguage(R"({"properties":{"a":{},"c":{}},"dependentSchemas":{"a":{"required":["c"]}}})",
                 {R"({})", R"({"c":1})", R"({"a":1,"c":2})"}, {R"({"a":1})"});
}

TEST(JsonSchema, UnevaluatedPropertiesFalse) {
  const char* s = R"({"allOf":[{"properties":{"a":{"type":"integer"}}}],"properties":{"b":{}},"unevaluatedProperties":false})";
  ExpectLanguage(s, {R"({})", R"({"a":1,"b":2})", R"({"b":[]})"}, {R"({"c":1})", R"({"a":1,"c":1})", R"({"a":"x"})"});
  ExpectRefused(R"({"unevaluatedProperties":{"type":"string"}})", StatusCode::kUnsupported, "/unevaluatedProperties: ");
}

TEST(JsonSchema, ArraysAndPrefixItems) {
  ExpectLanguage(R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})",
                 {"[1]", "[1,2,3]"}, {"[]", "[1,2,3,4]", "[\"a\"]"});
  ExpectLanguage(R"({"prefixItems":[{"type":"integer"},{"type":"string"}],"items":false})",
                 {"[]", "[1]", "[1,\"a\"]"}, {"[1,\"a\",2]", "[\"a\"]", "[1,2]"});
  ExpectLanguage(R"({"prefixItems":[{"const":"x"}],"items":{"type":"boolean"},"minItems":2})",
                 {"[\"x\",true]", "[\"x\",false,true]"}, {"[\"x\"]", "[\"x\",1]", "[true,true]"});
  // Drafts up to 2019-09: array-form items and additionalItems.
  ExpectLanguage(R"({"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"integer"}],"additionalItems":false})",
                 {"[]", "[1]"}, {"[1,2]", "[\"a\"]"});
  // 2020-12 does not know prefixItems' draft-7 spelling either way round: draft 7 ignores prefixItems.
  ExpectLanguage(R"({"$schema":"http://json-schema.org/draft-07/schema#","prefixItems":[{"type":"integer"}]})",
                 {"[\"a\"]"}, {});
}

TEST(JsonSchema, ContainsAndUniqueItems) {
  ExpectLanguage(R"({"type":"array","contains":{"type":"integer"}})", {"[1]", "[\"a\",1,\"b\"]", "[1,2]"},
                 {"[]", "[\"a\"]"});
  ExpectLanguage(R"({"type":"array","items":{"type":["integer","string"]},"contains":{"type":"integer"},"maxItems":2})",
                 {"[1]", "[\"a\",1]"}, {"[\"a\",\"b\"]", "[1,2,3]", "[null,1]"});
  Compiled c = MustCompile(R"({"type":"array","uniqueItems":true})");
  ASSERT_EQ(c.report.not_enforced.size(), 1u);
  EXPECT_EQ(c.report.not_enforced[0].substr(0, 13), "/uniqueItems:");
  testing::ByteRecognizer r(c.grammar);
  EXPECT_TRUE(r.Recognizes("[1,1]"));  // documented as not enforced
}

TEST(JsonSchema, EnumAndConst) {
  ExpectLanguage(R"({"enum":[1,"a/b",null,true,{"x":[1,2]},[]]})",
                 {"1", "1.0", "\"a/b\"", "\"a\\/b\"", "null", "true", R"({"x":[1,2]})", "[]"},
                 {"2", "false", "\"a\"", R"({"x":[1]})", R"({"x":[1,2],"y":1})", "[1]"});
  ExpectLanguage(R"({"const":{"b":1,"a":"\n"}})", {R"({"b":1,"a":"\n"})", R"({"b":1.0,"a":"\u000a"})"},
                 {R"({"b":1})", "\"x\""});
  // Other keywords filter the listed values.
  ExpectLanguage(R"({"enum":["a","bb","ccc"],"minLength":2})", {"\"bb\"", "\"ccc\""}, {"\"a\""});
  ExpectRefused(R"({"properties":{"k":{"enum":[]}}})", StatusCode::kInvalidArgument, "/properties/k/enum: ");
  ExpectRefused(R"({"enum":["a"],"type":"integer"})", StatusCode::kInvalidArgument, "/enum: ");
}

TEST(JsonSchema, AnyOfOneOfAllOf) {
  ExpectLanguage(R"({"anyOf":[{"type":"integer","minimum":10},{"type":"string","maxLength":1}]})",
                 {"10", "\"a\""}, {"9", "\"ab\"", "null"});
  // Disjoint branches: exact, nothing reported.
  Compiled disjoint = MustCompile(R"({"oneOf":[{"type":"string"},{"type":"null"}]})");
  EXPECT_TRUE(disjoint.report.not_enforced.empty());
  Compiled tagged = MustCompile(R"({"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{}},"required":["kind"]},
                                              {"type":"object","properties":{"kind":{"const":"b"},"y":{}},"required":["kind"]}]})");
  EXPECT_TRUE(tagged.report.not_enforced.empty());
  // Overlapping branches with cheap negations: exactly one, by "this branch and not the others".
  ExpectLanguage(R"({"oneOf":[{"type":"integer"},{"minimum":0}]})", {"-1", "0.5", "\"s\""}, {"5", "0"});
  ExpectLanguage(R"({"type":"object","properties":{"a":{},"b":{},"r":{}},"oneOf":[{"required":["a","b"]},{"required":["r"]}]})",
                 {R"({"a":1,"b":2})", R"({"r":1})", R"({"a":1,"r":1})"}, {R"({"a":1,"b":2,"r":3})", R"({"a":1})"});
  EXPECT_TRUE(MustCompile(R"({"oneOf":[{"type":"integer"},{"minimum":0}]})").report.not_enforced.empty());
  // Otherwise compiled as anyOf and reported.
  Compiled overlap = MustCompile(R"({"oneOf":[{"additionalProperties":false},{"required":["a"]}]})");
  ASSERT_EQ(overlap.report.not_enforced.size(), 1u);
  EXPECT_EQ(overlap.report.not_enforced[0].substr(0, 7), "/oneOf:");
  // allOf merges properties, bounds and required.
  ExpectLanguage(R"({"allOf":[{"properties":{"a":{"type":"integer","minimum":0}}},
                              {"properties":{"a":{"maximum":10},"b":{"type":"string"}},"required":["a"]}]})",
                 {R"({"a":5})", R"({"a":0,"b":"x"})"}, {R"({"a":11})", R"({})", R"({"a":-1})", R"({"a":1,"b":2})"});
  // Branches merged with their siblings, keys in document order.
  ExpectLanguage(R"({"properties":{"kind":{"enum":["a","b"]}},"required":["kind"],
                     "anyOf":[{"properties":{"kind":{"const":"a"},"x":{"type":"integer"}},"required":["x"]},
                              {"properties":{"kind":{"const":"b"},"y":{"type":"string"}}}]})",
                 {R"({"kind":"a","x":1})", R"({"kind":"b"})", R"({"kind":"b","y":"s"})"},
                 {R"({"kind":"a"})", R"({"kind":"b","x":1,"y":"s"})", R"({"kind":"c"})"});
}

TEST(JsonSchema, UnsatisfiableSchemasAreRefused) {
  ExpectRefused(R"({"allOf":[{"type":"string"},{"type":"integer"}]})", StatusCode::kInvalidArgument, "/allOf/1/type: ");
  ExpectRefused(R"({"properties":{"x":{"type":"string","minLength":5,"maxLength":2}}})", StatusCode::kInvalidArgument,
                "/properties/x/maxLength: maxLength 2 is below minLength 5");
  ExpectRefused(R"({"type":"array","minItems":3,"maxItems":1})", StatusCode::kInvalidArgument, "/maxItems: ");
  ExpectRefused(R"({"type":"number","minimum":5,"maximum":1})", StatusCode::kInvalidArgument, "/maximum: ");
  ExpectRefused(R"({"type":"object","properties":{"a":false},"required":["a"]})", StatusCode::kInvalidArgument,
                "/required: the required property 'a' can have no value (/properties/a: the schema is false)");
  ExpectRefused("false", StatusCode::kInvalidArgument, ": ");
  // Across allOf: found when the whole schema accepts nothing.
  ExpectRefused(R"({"allOf":[{"type":"string","minLength":5},{"maxLength":2}]})", StatusCode::kInvalidArgument, "/allOf/");
}

TEST(JsonSchema, ReferencesAndRecursion) {
  const char* tree = R"({"type":"object","properties":{"value":{"type":"integer"},
                         "children":{"type":"array","items":{"$ref":"#"}}},"required":["value"]})";
  ExpectLanguage(tree, {R"({"value":1})", R"({"value":1,"children":[{"value":2,"children":[{"value":3}]}]})"},
                 {R"({"value":1,"children":[{}]})", R"({"children":[]})"});
  ExpectLanguage(R"({"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"},"v":{"type":"string"}}}},
                     "$ref":"#/$defs/node"})",
                 {R"({})", R"({"next":{"next":{"v":"x"}}})"}, {R"({"next":1})"});
  ExpectLanguage(R"({"definitions":{"pos":{"type":"integer","minimum":1}},"properties":{"a":{"$ref":"#/definitions/pos"},
                     "b":{"$ref":"#/properties/a"}}})",
                 {R"({"a":1,"b":2})"}, {R"({"b":0})"});
  // $anchor and $id.
  ExpectLanguage(R"({"$defs":{"x":{"$anchor":"pos","type":"integer","minimum":0}},"$ref":"#pos"})", {"3"}, {"-1"});
  ExpectLanguage(R"({"$defs":{"a":{"$id":"http://example.com/a.json","type":"string"}},
                     "properties":{"p":{"$ref":"http://example.com/a.json"},"q":{"$ref":"a.json"}}})",
                 {R"({"p":"x","q":"y"})"}, {R"({"p":1})"});
  // Mutual recursion through anyOf.
  ExpectLanguage(R"({"$defs":{"v":{"anyOf":[{"type":"integer"},{"type":"array","items":{"$ref":"#/$defs/v"}}]}},
                     "$ref":"#/$defs/v"})",
                 {"1", "[1,[2,[3]],[]]"}, {"[\"a\"]", "[[1,\"x\"]]"});
  ExpectRefused(R"({"properties":{"a":{"$ref":"other.json#/x"}}})", StatusCode::kUnsupported, "/properties/a/$ref: ");
  ExpectRefused(R"({"$ref":"#/definitions/missing"})", StatusCode::kInvalidArgument, "/$ref: ");
  // A recursion that never ends accepts nothing.
  auto g = CompileJsonSchemaText(R"({"type":"object","properties":{"a":{"$ref":"#"}},"required":["a"]})");
  EXPECT_FALSE(g.ok());
}

TEST(JsonSchema, RefSiblingsByDraft) {
  // Drafts 4 to 7 ignore keywords next to $ref (as the reference validator does); 2019-09 on apply them.
  ExpectLanguage(R"({"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},
                     "$ref":"#/definitions/s","maxLength":2})",
                 {"\"abcd\""}, {"1"});
  ExpectLanguage(R"({"definitions":{"s":{"type":"string"}},"$ref":"#/definitions/s","maxLength":2})", {"\"ab\""},
                 {"\"abcd\"", "1"});
}

TEST(JsonSchema, Patterns) {
  // JSON Schema's pattern searches.
  ExpectLanguage(R"({"type":"string","pattern":"ab"})", {"\"ab\"", "\"xaby\""}, {"\"xy\"", "\"a\""});
  ExpectLanguage(R"({"type":"string","pattern":"^[a-z]+$","minLength":2,"maxLength":4})",
                 {"\"ab\"", "\"abcd\""}, {"\"a\"", "\"abcde\"", "\"aB\""});
  // The code points a pattern allows keep their JSON escapes.
  ExpectLanguage(R"({"type":"string","pattern":"^[\"/\n]$"})", {R"("\"")", R"("/")", R"("\/")", R"("\n")", R"("\u000A")"},
                 {"\"x\""});
  // A lookahead right after a leading ^.
  ExpectLanguage(R"({"type":"string","pattern":"^(?!x-)[a-z-]+$"})", {"\"ab-c\""}, {"\"x-ab\"", "\"\""});
  // A lone pattern too large for one automaton (search for a[ab]{20}$ needs 2^21 states) goes to
  // regex.h's grammar instead.
  ExpectLanguage(R"({"type":"string","pattern":"a[ab]{20}$"})", {"\"xab" + std::string(19, 'b') + "\""},
                 {"\"ab\"", "\"a" + std::string(21, 'b') + "\""});
  // Length bounds a pattern already implies cost nothing; others are products.
  ExpectLanguage(R"({"type":"string","pattern":"^[0-9]{4}$","maxLength":100000})", {"\"1234\""}, {"\"123\""});
  ExpectRefused(R"({"type":"string","pattern":"^a+$","maxLength":100000})", StatusCode::kResourceExhausted,
                "/maxLength: ");
  ExpectRefused(R"({"properties":{"s":{"type":"string","pattern":"(?<=a)b"}}})", StatusCode::kUnsupported,
                "/properties/s/pattern: ");
  ExpectRefused(R"({"type":"string","pattern":"(a)\\1","maxLength":3})", StatusCode::kUnsupported, "/pattern: ");
}

TEST(JsonSchema, Formats) {
  ExpectLanguage(R"({"type":"string","format":"date-time"})",
                 {"\"2024-02-29T12:00:00Z\"", "\"2023-01-01t00:00:00.5+01:00\"", "\"1999-12-31T23:59:59-05:30\""},
                 {"\"2023-02-29T00:00:00Z\"", "\"2024-01-01T00:00:00\"", "\"2024-13-01T00:00:00Z\"",
                  "\"2024-01-01T24:00:00Z\"", "\"0000-01-01T00:00:00Z\""});
  ExpectLanguage(R"({"format":"date"})", {"\"2000-02-29\"", "\"1900-02-28\"", "1"}, {"\"1900-02-29\"", "\"2021-04-31\""});
  ExpectLanguage(R"({"format":"time"})", {"\"12:00:00Z\"", "\"23:59:59.123+02:00\""}, {"\"12:00:00\"", "\"12:60:00Z\""});
  ExpectLanguage(R"({"format":"email"})", {"\"a@b\"", "\"john.doe@example.com\""}, {"\"ab\""});
  ExpectLanguage(R"({"format":"uuid"})", {"\"123e4567-e89b-12d3-a456-426614174000\""},
                 {"\"123e4567e89b12d3a456426614174000\"", "\"123e4567-e89b-12d3-a456-42661417400g\""});
  ExpectLanguage(R"({"format":"ipv4"})", {"\"192.168.0.1\"", "\"0.0.0.0\""},
                 {"\"256.1.1.1\"", "\"01.1.1.1\"", "\"1.1.1\""});
  ExpectLanguage(R"({"format":"ipv6"})",
                 {"\"::1\"", "\"::\"", "\"2001:db8::8a2e:370:7334\"", "\"::ffff:192.168.1.1\"", "\"1:2:3:4:5:6:7::\""},
                 {"\"1::2::3\"", "\"1:2:3:4:5:6:7:8:9\"", "\"::1%eth0\"", "\"12345::\""});
  ExpectLanguage(R"({"format":"hostname"})", {"\"example.com\"", "\"a-b.c\""}, {"\"-a.com\"", "\"a..b\"", "\"a:b\""});
  ExpectLanguage(R"({"format":"uri"})", {"\"https://x.y/z?q=1\"", "\"urn:isbn:123\""}, {"\"not a uri\"", "\"x.y/z\""});
  ExpectLanguage(R"({"format":"duration"})", {"\"P1Y2M\"", "\"PT1H\"", "\"P3W\"", "\"P1DT2.5S\""},
                 {"\"P\"", "\"PT\"", "\"1Y\""});
  // Annotation formats: any string; known but unenforced ones are reported.
  ExpectLanguage(R"({"format":"int32"})", {"\"anything\""}, {});
  Compiled regex = MustCompile(R"({"format":"regex"})");
  EXPECT_EQ(regex.report.not_enforced.size(), 1u);
  // A format with a length bound.
  ExpectLanguage(R"({"type":"string","format":"date","maxLength":10})", {"\"2020-01-01\""}, {"\"2020-1-1\""});
}

TEST(JsonSchema, Not) {
  ExpectLanguage(R"({"not":{"type":"string"}})", {"1", "null", "{}"}, {"\"s\""});
  ExpectLanguage(R"({"type":"string","not":{"enum":["a","b"]}})", {"\"c\"", "\"ab\"", "\"\""}, {"\"a\"", "\"b\""});
  ExpectLanguage(R"({"type":"integer","not":{"minimum":0,"maximum":9}})", {"-1", "10"}, {"0", "5", "9"});
  ExpectLanguage(R"({"type":"object","properties":{"a":{},"b":{}},"not":{"required":["a"]}})", {R"({"b":1})"},
                 {R"({"a":1})"});
  ExpectLanguage(R"({"type":"string","not":{"pattern":"^x"}})", {"\"ax\""}, {"\"xa\""});
  ExpectLanguage(R"({"not":{"not":{"type":"null"}}})", {"null"}, {"1"});
  ExpectLanguage(R"({"type":"number","minimum":-1,"maximum":2,"not":{"type":"integer"}})",
                 {"0.5", "-0.5", "1.25", "-0.999", "1.9"}, {"1", "0", "2", "1.0", "2.5", "-1.5", "-0.0"});
  ExpectRefused(R"({"not":{"additionalProperties":false}})", StatusCode::kUnsupported, "/not/additionalProperties: ");
}

TEST(JsonSchema, IfThenElse) {
  const char* s = R"({"properties":{"kind":{"type":"string"},"x":{},"y":{}},
                      "if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["x"]},"else":{"required":["y"]}})";
  // Without "kind" the `if` holds (properties constrains only present keys), so x is required.
  ExpectLanguage(s, {R"({"kind":"a","x":1})", R"({"kind":"b","y":1})", R"({"x":1})"},
                 {R"({"kind":"a"})", R"({"kind":"b"})", R"({"kind":"a","y":1})", R"({"y":1})"});
}

TEST(JsonSchema, KeywordsAndAnnotations) {
  // Keys outside the JSON Schema vocabulary are annotations.
  ExpectLanguage(R"({"type":"string","x-vendor":{"a":1},"nullable":true,"_format":"date","title":"t",
                     "examples":["x"],"deprecated":true,"readOnly":true})",
                 {"\"s\""}, {"null"});
  ExpectRefused(R"({"properties":{"a":{"type":"array","contains":{"type":"integer"},"maxContains":2}}})",
                StatusCode::kUnsupported, "/properties/a/maxContains: ");
  ExpectRefused(R"({"$dynamicRef":"#meta"})", StatusCode::kUnsupported, "/$dynamicRef: ");
  ExpectRefused(R"({"type":"array","unevaluatedItems":false})", StatusCode::kUnsupported, "/unevaluatedItems: ");
  ExpectRefused(R"({"properties":{"a":{"minLength":"3"}}})", StatusCode::kInvalidArgument, "/properties/a/minLength: ");
  ExpectRefused(R"({"type":"strin"})", StatusCode::kInvalidArgument, "/type: ");
}

TEST(JsonSchema, MalformedSchemasAreErrors) {
  for (const char* schema :
       {R"({"allOf":{}})", R"({"anyOf":5})", R"({"oneOf":[]})", R"({"properties":[]})", R"({"items":5})",
        R"({"enum":{}})", R"({"minItems":"x"})", R"({"required":"a"})", R"({"type":5})", R"({"$ref":5})",
        R"({"not":5})", R"({"if":5,"then":{}})", R"({"prefixItems":{}})", R"({"dependentRequired":{"a":"b"}})",
        R"({"patternProperties":{"(":{}}})", R"({"pattern":"["})", R"({"$rs-loc":0})", R"({"not":{"$rs-exclude":[1]}})",
        R"({"enum":[{}],"minProperties":"x"})", R"({"const":1,"allOf":{}})", R"({"enum":[[1]],"items":5})",
        R"({"enum":[{"a":1}],"properties":{"a":{"$rs-loc":99}}})", "[]", "1", R"({"format":1})", R"({"multipleOf":0})",
        R"({"minimum":"1"})", R"({"dependentSchemas":[]})", R"({"propertyNames":5})", R"({"additionalProperties":"x"})"}) {
    auto g = CompileJsonSchemaText(schema);
    EXPECT_FALSE(g.ok()) << schema;
    if (!g.ok()) {
      EXPECT_NE(g.status().code(), StatusCode::kInternal) << schema << " " << g.status().ToString();
    }
  }
}

TEST(JsonSchema, Whitespace) {
  // Compact by default.
  ExpectLanguage(R"({"type":"object","properties":{"a":{"type":"array"}}})", {R"({"a":[1,2]})"},
                 {R"({ "a":[1,2]})", R"( {"a":[]})", R"({"a":[1, 2]})"});
  JsonSchemaOptions ws;
  ws.max_whitespace = 1;
  ExpectLanguage(R"({"type":"object","properties":{"a":{"type":"array"}}})",
                 {R"({ "a": [1, 2] })", " {\"a\":[]}\n", "{\"a\":[\n1\t]}", "{}", "{ }"}, {R"({  "a":[]})", "{\"a\":[1,  2]}"},
                 ws);
}

TEST(JsonSchema, JsonMode) {
  auto g = CompileJsonObject();
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  testing::ByteRecognizer r(*g);
  for (const char* ok : {"{}", R"({"a":[1,{"b":null}],"c":"\u00e9"})", R"({"a":{"a":{}}})"}) EXPECT_TRUE(r.Recognizes(ok)) << ok;
  for (const char* bad : {"[]", "\"x\"", "1", "{", R"({"a":1,})"}) EXPECT_FALSE(r.Recognizes(bad)) << bad;
}

TEST(JsonSchema, Caps) {
  GrammarLimits small;
  small.max_symbols = 200;
  auto g = CompileJsonSchemaText(
      R"({"properties":{"a":{"type":"string","pattern":"^[a-z]{3}-[0-9]{4}$"},"b":{"type":"integer","minimum":17,"maximum":123456}}})",
      {}, small);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kResourceExhausted) << g.status().ToString();
  GrammarLimits no_time;
  no_time.max_compile_time = std::chrono::milliseconds(0);
  g = CompileJsonSchemaText(R"({"properties":{"a":{"type":"integer"}}})", {}, no_time);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kResourceExhausted) << g.status().ToString();
  GrammarLimits tiny_source;
  tiny_source.max_source_bytes = 10;
  g = CompileJsonSchemaText(R"({"type":"string"})", {}, tiny_source);
  EXPECT_EQ(g.status().code(), StatusCode::kResourceExhausted);
  g = CompileJsonSchemaText("{not json");
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace radixserve::grammar
