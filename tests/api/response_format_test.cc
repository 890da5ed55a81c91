// Structured output on the API (response_format.h) and the refused / ignored fields
// (unsupported_fields.h): every accepted form and the spec it gives, every error with its param
// and message, and the mapping of compiler errors to a param inside the schema.
//
// Most cases run ParseStructuredOutput with a recording validator, so they test the API side
// apart from the grammar compiler; the cases at the end go through the request parsers and the
// real grammar::CompileSpec.
#include "core/api/response_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "core/api/request_parser.h"
#include "core/api/unsupported_fields.h"
#include "core/grammar/compile.h"

namespace radixserve::api {
namespace {

using grammar::GrammarKind;
using grammar::GrammarSpec;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Records what it was asked to validate; answers `answer` (OK by default).
struct RecordingValidator {
  std::vector<GrammarSpec> seen;
  grammar::GrammarLimits limits_seen;
  Status answer;

  GrammarValidator Fn() {
    return [this](const GrammarSpec& spec, const grammar::GrammarLimits& limits) {
      seen.push_back(spec);
      limits_seen = limits;
      return answer;
    };
  }
};

struct Parsed {
  bool ok = false;
  GrammarSpec spec;
  ApiError error;
};

Parsed Parse(const std::string& body, Endpoint endpoint, RecordingValidator& v, const ApiLimits& limits = {}) {
  Parsed p;
  nlohmann::json root = nlohmann::json::parse(body);
  p.ok = ParseStructuredOutput(body, root, endpoint, limits, &p.spec, &p.error, v.Fn());
  return p;
}

GrammarSpec Spec(GrammarKind kind, std::string text) {
  GrammarSpec s;
  s.kind = kind;
  s.text = std::move(text);
  return s;
}

// The issue's example, with its properties out of alphabetical order on purpose: the parsed body
// sorts keys, the spec must not.
constexpr const char* kSchema =
    R"({"type":"object","properties":{"name":{"type":"string","maxLength":8},"age":{"type":"integer","minimum":0,"maximum":120}},"required":["name","age"],"additionalProperties":false})";

struct FormCase {
  Endpoint endpoint;
  std::string body;
  GrammarSpec want;
};

TEST(StructuredOutputForms, EveryAcceptedNameGivesItsSpec) {
  const std::string schema = kSchema;
  const std::string schema_text = nlohmann::json(schema).dump();  // the schema as a JSON string value
  const std::vector<FormCase> cases = {
      // OpenAI's response_format, on both OpenAI endpoints.
      {Endpoint::kChatCompletions, R"({"response_format": {"type": "json_object"}})", Spec(GrammarKind::kJsonObject, "")},
      {Endpoint::kCompletions, R"({"response_format": {"type": "json_object"}})", Spec(GrammarKind::kJsonObject, "")},
      {Endpoint::kChatCompletions,
       R"({"response_format": {"type": "json_schema", "json_schema": {"name": "person", "strict": true, "schema": )" +
           schema + "}}}",
       Spec(GrammarKind::kJsonSchema, schema)},
      {Endpoint::kCompletions,
       R"({"response_format": {"type": "json_schema", "json_schema": {"description": "d", "strict": false,
           "name": "a-Z_09", "schema": )" + schema + "}}}",
       Spec(GrammarKind::kJsonSchema, schema)},
      // vLLM's guided_* names.
      {Endpoint::kChatCompletions, R"({"guided_json": )" + schema + "}", Spec(GrammarKind::kJsonSchema, schema)},
      // A schema given as text is kept byte for byte (its spacing included).
      {Endpoint::kChatCompletions, R"({"guided_json": "{ \"type\" : \"string\" }"})",
       Spec(GrammarKind::kJsonSchema, R"({ "type" : "string" })")},
      {Endpoint::kCompletions, R"({"guided_regex": "[a-z]+\\d"})", Spec(GrammarKind::kRegex, R"([a-z]+\d)")},
      {Endpoint::kChatCompletions, R"({"guided_grammar": "root ::= \"yes\" | \"no\""})",
       Spec(GrammarKind::kGbnf, R"(root ::= "yes" | "no")")},
      {Endpoint::kChatCompletions, R"({"guided_choice": ["yes", "no", "maybe \"so\""]})",
       Spec(GrammarKind::kChoice, R"(["yes","no","maybe \"so\""])")},
      // vLLM's structured_outputs object.
      {Endpoint::kChatCompletions, R"({"structured_outputs": {"json": )" + schema + "}}",
       Spec(GrammarKind::kJsonSchema, schema)},
      {Endpoint::kChatCompletions, R"({"structured_outputs": {"json": )" + schema_text + "}}",
       Spec(GrammarKind::kJsonSchema, schema)},
      {Endpoint::kCompletions, R"({"structured_outputs": {"regex": "a|b", "backend": "xgrammar"}})",
       Spec(GrammarKind::kRegex, "a|b")},
      {Endpoint::kChatCompletions, R"({"structured_outputs": {"grammar": "root ::= \"x\""}})",
       Spec(GrammarKind::kGbnf, R"(root ::= "x")")},
      {Endpoint::kChatCompletions, R"({"structured_outputs": {"choice": ["a"], "disable_any_whitespace": false}})",
       Spec(GrammarKind::kChoice, R"(["a"])")},
      {Endpoint::kChatCompletions, R"({"structured_outputs": {"json_object": true}})", Spec(GrammarKind::kJsonObject, "")},
      // SGLang's names on the OpenAI endpoints.
      {Endpoint::kChatCompletions, R"({"json_schema": )" + schema_text + "}", Spec(GrammarKind::kJsonSchema, schema)},
      {Endpoint::kCompletions, R"({"regex": "(cat|dog)s?"})", Spec(GrammarKind::kRegex, "(cat|dog)s?")},
      {Endpoint::kChatCompletions, R"({"ebnf": "root ::= [0-9]+"})", Spec(GrammarKind::kGbnf, "root ::= [0-9]+")},
      // /generate: the same names inside sampling_params.
      {Endpoint::kGenerate, R"({"text": "x", "sampling_params": {"json_schema": )" + schema_text + "}}",
       Spec(GrammarKind::kJsonSchema, schema)},
      {Endpoint::kGenerate, R"({"text": "x", "sampling_params": {"regex": "[0-9]{3}"}})",
       Spec(GrammarKind::kRegex, "[0-9]{3}")},
      {Endpoint::kGenerate, R"({"text": "x", "sampling_params": {"ebnf": "root ::= \"a\""}})",
       Spec(GrammarKind::kGbnf, R"(root ::= "a")")},
      {Endpoint::kGenerate, R"({"text": "x", "sampling_params": {"guided_json": )" + schema + "}}",
       Spec(GrammarKind::kJsonSchema, schema)},
      {Endpoint::kGenerate, R"({"text": "x", "sampling_params": {"guided_choice": ["p", "q"]}})",
       Spec(GrammarKind::kChoice, R"(["p","q"])")},
      {Endpoint::kGenerate, R"({"text": "x", "sampling_params": {"structured_outputs": {"regex": "z"}}})",
       Spec(GrammarKind::kRegex, "z")},
  };
  for (const FormCase& c : cases) {
    RecordingValidator v;
    Parsed p = Parse(c.body, c.endpoint, v);
    ASSERT_TRUE(p.ok) << c.body << "\n" << p.error.message;
    EXPECT_EQ(p.spec.kind, c.want.kind) << c.body;
    EXPECT_EQ(p.spec.text, c.want.text) << c.body;
    ASSERT_EQ(v.seen.size(), 1u) << c.body;  // validated once, the spec as it travels
    EXPECT_EQ(v.seen[0], p.spec) << c.body;
  }
}

TEST(StructuredOutputForms, NoConstraint) {
  for (const char* body : {
           R"({})",
           R"({"response_format": {"type": "text"}})",
           R"({"response_format": null, "guided_json": null, "guided_regex": null, "regex": null})",
           R"({"structured_outputs": {}})",
           R"({"structured_outputs": {"json_object": false}})",
           R"({"guided_decoding_backend": "xgrammar"})",  // a hint, accepted and ignored
       }) {
    RecordingValidator v;
    Parsed p = Parse(body, Endpoint::kChatCompletions, v);
    ASSERT_TRUE(p.ok) << body << "\n" << p.error.message;
    EXPECT_FALSE(p.spec.active()) << body;
    EXPECT_TRUE(v.seen.empty()) << body;  // nothing to compile
  }
  // response_format text and one extension: the extension is the one constraint.
  RecordingValidator v;
  Parsed p = Parse(R"({"response_format": {"type": "text"}, "guided_regex": "a"})", Endpoint::kChatCompletions, v);
  ASSERT_TRUE(p.ok) << p.error.message;
  EXPECT_EQ(p.spec, Spec(GrammarKind::kRegex, "a"));
}

TEST(StructuredOutputForms, ValidatorGetsTheServersLimits) {
  ApiLimits limits;
  limits.grammar.max_symbols = 1234;
  limits.grammar.max_compile_time = std::chrono::milliseconds(77);
  RecordingValidator v;
  Parsed p = Parse(R"({"guided_regex": "a"})", Endpoint::kChatCompletions, v, limits);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(v.limits_seen.max_symbols, 1234u);
  EXPECT_EQ(v.limits_seen.max_compile_time, std::chrono::milliseconds(77));
}

struct ErrorCase {
  Endpoint endpoint;
  std::string body;
  std::string param;
  std::string message;  // a substring of the message
};

void ExpectErrors(const std::vector<ErrorCase>& cases, const ApiLimits& limits = {}) {
  for (const ErrorCase& c : cases) {
    RecordingValidator v;
    Parsed p = Parse(c.body, c.endpoint, v, limits);
    EXPECT_FALSE(p.ok) << c.body;
    EXPECT_EQ(p.error.http_status, 400) << c.body;
    EXPECT_EQ(p.error.type, "invalid_request_error") << c.body;
    EXPECT_EQ(p.error.param, c.param) << c.body;
    EXPECT_THAT(p.error.message, StartsWith(c.param + ": ")) << c.body;
    EXPECT_THAT(p.error.message, HasSubstr(c.message)) << c.body;
    EXPECT_TRUE(v.seen.empty()) << c.body;  // refused before compiling anything
  }
}

TEST(StructuredOutputErrors, ResponseFormat) {
  const Endpoint chat = Endpoint::kChatCompletions;
  const std::string rf = R"({"response_format": {"type": "json_schema", "json_schema": )";
  ExpectErrors({
      {chat, R"({"response_format": 5})", "response_format", "expected an object, got integer"},
      {chat, R"({"response_format": "json_object"})", "response_format", "expected an object, got string"},
      {chat, R"({"response_format": {}})", "response_format.type",
       R"(is required ("text", "json_object" or "json_schema"))"},
      {chat, R"({"response_format": {"type": 1}})", "response_format.type", "expected a string, got integer"},
      {chat, R"({"response_format": {"type": "xml"}})", "response_format.type",
       R"(expected "text", "json_object" or "json_schema", got "xml")"},
      {chat, R"({"response_format": {"type": "structural_tag"}})", "response_format.type",
       R"(got "structural_tag")"},
      {chat, R"({"response_format": {"type": "json_schema"}})", "response_format.json_schema",
       R"(is required when type is "json_schema")"},
      {chat, rf + R"("x"}})", "response_format.json_schema", "expected an object, got string"},
      {chat, rf + R"({"schema": {}}}})", "response_format.json_schema.name", "is required"},
      {chat, rf + R"({"name": 7, "schema": {}}}})", "response_format.json_schema.name", "expected a string, got integer"},
      {chat, rf + R"({"name": "", "schema": {}}}})", "response_format.json_schema.name",
       R"(must be 1 to 64 characters of a-z, A-Z, 0-9, '_' and '-', got "")"},
      {chat, rf + R"({"name": "my schema", "schema": {}}}})", "response_format.json_schema.name", R"(got "my schema")"},
      {chat, rf + R"({"name": ")" + std::string(65, 'n') + R"(", "schema": {}}}})", "response_format.json_schema.name",
       "got a string of 65 bytes"},
      {chat, rf + R"({"name": "n", "strict": "yes", "schema": {}}}})", "response_format.json_schema.strict",
       "expected a boolean, got string"},
      {chat, rf + R"({"name": "n", "description": 1, "schema": {}}}})", "response_format.json_schema.description",
       "expected a string, got integer"},
      {chat, rf + R"({"name": "n"}}})", "response_format.json_schema.schema", "is required"},
      {chat, rf + R"({"name": "n", "schema": true}}})", "response_format.json_schema.schema",
       R"(expected a JSON schema object, got boolean (boolean schemas are not accepted; for any JSON object use response_format {"type": "json_object"}))"},
      {chat, rf + R"({"name": "n", "schema": "{}"}}})", "response_format.json_schema.schema",
       "expected a JSON schema object, got string"},
      {chat, rf + R"({"name": "n", "schema": []}}})", "response_format.json_schema.schema",
       "expected a JSON schema object, got array"},
  });
}

TEST(StructuredOutputErrors, Extensions) {
  const Endpoint chat = Endpoint::kChatCompletions, gen = Endpoint::kGenerate;
  std::string deep = "\"" + std::string(70, '[') + std::string(70, ']') + "\"";
  ExpectErrors({
      {chat, R"({"guided_json": 5})", "guided_json",
       "expected a JSON schema (an object, or its text as a string), got integer"},
      {chat, R"({"guided_json": true})", "guided_json", "got boolean"},
      {chat, R"({"guided_json": "{not json"})", "guided_json", "is not valid JSON (expected a JSON schema as text)"},
      {chat, R"({"guided_json": "true"})", "guided_json", "expected the text of a JSON schema object, got boolean"},
      {chat, R"({"guided_json": "[1]"})", "guided_json", "expected the text of a JSON schema object, got array"},
      {chat, R"({"guided_json": )" + deep + "}", "guided_json", "nests arrays/objects deeper than 64 levels"},
      {chat, R"({"guided_regex": 5})", "guided_regex", "expected a string, got integer"},
      {chat, R"({"guided_grammar": ["root ::= x"]})", "guided_grammar", "expected a string, got array"},
      {chat, R"({"guided_choice": "yes"})", "guided_choice", "expected an array of strings, got string"},
      {chat, R"({"guided_choice": []})", "guided_choice", "must contain at least one string"},
      {chat, R"({"guided_choice": ["a", 1]})", "guided_choice[1]", "expected a string, got integer"},
      {chat, R"({"guided_whitespace_pattern": " ?"})", "guided_whitespace_pattern", "is not supported"},
      {chat, R"({"structural_tag": {"structures": []}})", "structural_tag", "is not supported"},
      {chat, R"({"structured_outputs": "json"})", "structured_outputs", "expected an object, got string"},
      {chat, R"({"structured_outputs": {"json": 5}})", "structured_outputs.json", "got integer"},
      {chat, R"({"structured_outputs": {"regex": {}}})", "structured_outputs.regex", "expected a string, got object"},
      {chat, R"({"structured_outputs": {"choice": []}})", "structured_outputs.choice", "at least one string"},
      {chat, R"({"structured_outputs": {"json_object": 1}})", "structured_outputs.json_object",
       "expected a boolean, got integer"},
      {chat, R"({"structured_outputs": {"structural_tag": "{}"}})", "structured_outputs.structural_tag",
       "is not supported"},
      {chat, R"({"structured_outputs": {"regex": "a", "whitespace_pattern": " "}})",
       "structured_outputs.whitespace_pattern", "is not supported"},
      {chat, R"({"structured_outputs": {"json_object": true, "disable_any_whitespace": true}})",
       "structured_outputs.disable_any_whitespace", "is not supported"},
      {chat, R"({"structured_outputs": {"json": {}, "disable_additional_properties": true}})",
       "structured_outputs.disable_additional_properties", "is not supported"},
      {chat, R"({"json_schema": {"type": "object"}})", "json_schema",
       "expected a string holding a JSON schema, got object (a schema object goes in response_format json_schema or "
       "guided_json)"},
      {chat, R"({"json_schema": "{\"type\": "})", "json_schema", "is not valid JSON"},
      {chat, R"({"regex": 1})", "regex", "expected a string, got integer"},
      {chat, R"({"ebnf": false})", "ebnf", "expected a string, got boolean"},
      // /generate: constraints live in sampling_params; at the top level they would be ignored.
      {gen, R"({"text": "x", "response_format": {"type": "json_object"}})", "response_format",
       "is not read by /generate: put the constraint in sampling_params"},
      {gen, R"({"text": "x", "regex": "a"})", "regex", "belongs inside sampling_params on /generate (sampling_params.regex)"},
      {gen, R"({"text": "x", "guided_json": {}})", "guided_json", "belongs inside sampling_params"},
      {gen, R"({"text": "x", "sampling_params": {"json_schema": 5}})", "sampling_params.json_schema",
       "expected a string holding a JSON schema, got integer"},
      {gen, R"({"text": "x", "sampling_params": {"regex": 5}})", "sampling_params.regex", "expected a string"},
      {gen, R"({"text": "x", "sampling_params": {"ebnf": 5}})", "sampling_params.ebnf", "expected a string"},
      {gen, R"({"text": "x", "sampling_params": {"guided_choice": [1]}})", "sampling_params.guided_choice[0]",
       "expected a string, got integer"},
      {gen, R"({"text": "x", "sampling_params": {"structural_tag": "{}"}})", "sampling_params.structural_tag",
       "is not supported"},
  });
}

TEST(StructuredOutputErrors, AtMostOneConstraintNamingBoth) {
  const Endpoint chat = Endpoint::kChatCompletions, gen = Endpoint::kGenerate;
  const std::string msg = "at most one structured-output constraint per request, got ";
  ExpectErrors({
      {chat, R"({"response_format": {"type": "json_object"}, "guided_regex": "a"})", "guided_regex",
       msg + "response_format and guided_regex"},
      {chat, R"({"response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {}}},
                 "guided_json": {}})",
       "guided_json", msg + "response_format and guided_json"},
      {chat, R"({"guided_json": {}, "json_schema": "{}"})", "json_schema", msg + "guided_json and json_schema"},
      {chat, R"({"guided_choice": ["a"], "ebnf": "root ::= \"a\""})", "ebnf", msg + "guided_choice and ebnf"},
      {chat, R"({"guided_regex": "a", "regex": "a"})", "regex", msg + "guided_regex and regex"},
      {chat, R"({"structured_outputs": {"regex": "a", "choice": ["a"]}})", "structured_outputs.choice",
       msg + "structured_outputs.regex and structured_outputs.choice"},
      {chat, R"({"guided_grammar": "root ::= \"a\"", "structured_outputs": {"json_object": true}})",
       "structured_outputs.json_object", msg + "guided_grammar and structured_outputs.json_object"},
      {gen, R"({"text": "x", "sampling_params": {"regex": "a", "ebnf": "root ::= \"a\""}})", "sampling_params.ebnf",
       msg + "sampling_params.regex and sampling_params.ebnf"},
  });
}

TEST(StructuredOutputErrors, SizeCap) {
  ApiLimits limits;
  limits.grammar.max_source_bytes = 16;
  const Endpoint chat = Endpoint::kChatCompletions;
  ExpectErrors(
      {
          {chat, R"({"guided_regex": "0123456789abcdefg"})", "guided_regex",
           "the regular expression is 17 bytes, the limit is 16"},
          {chat, R"({"ebnf": "root ::= \"abcdefgh\""})", "ebnf", "the grammar is 19 bytes, the limit is 16"},
          {chat, R"({"guided_choice": ["abcdef", "ghijkl"]})", "guided_choice",
           "the list of choices is 19 bytes, the limit is 16"},
          {chat, R"({"guided_json": "{\"type\": \"string\"}"})", "guided_json", "the schema is 18 bytes, the limit is 16"},
          {chat, R"({"response_format": {"type": "json_schema", "json_schema": {"name": "n",
                     "schema": {"type": "string"}}}})",
           "response_format.json_schema.schema", "the schema is 17 bytes, the limit is 16"},
      },
      limits);
  // At the cap is accepted.
  RecordingValidator v;
  Parsed p = Parse(R"({"guided_regex": "0123456789abcdef"})", chat, v, limits);
  EXPECT_TRUE(p.ok) << p.error.message;
}

// Compiler errors: the param points into the schema, the message keeps the compiler's words.
struct CompileErrorCase {
  Endpoint endpoint;
  std::string body;
  Status status;
  int http_status;
  std::string param;
  std::string message;  // the whole message
};

TEST(StructuredOutputErrors, CompileErrorsPointIntoTheSchema) {
  const Endpoint chat = Endpoint::kChatCompletions, cmpl = Endpoint::kCompletions, gen = Endpoint::kGenerate;
  const std::string rf = R"({"response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": )";
  const std::string schema = kSchema;
  const std::vector<CompileErrorCase> cases = {
      {chat, rf + schema + "}}}", Status::InvalidArgument("/properties/age/minimum: 200 is more than maximum 120"), 400,
       "response_format.json_schema.schema/properties/age/minimum",
       "response_format.json_schema.schema/properties/age/minimum: 200 is more than maximum 120"},
      {chat, rf + schema + "}}}", Status::InvalidArgument(": the schema allows no value"), 400,
       "response_format.json_schema.schema", "response_format.json_schema.schema: the schema allows no value"},
      {chat, rf + schema + "}}}", Status::InvalidArgument("no pointer here"), 400, "response_format.json_schema.schema",
       "response_format.json_schema.schema: no pointer here"},
      {cmpl, R"({"guided_json": )" + schema + "}", Status::Unsupported("/properties/name: keyword \"x\" is not supported"),
       400, "guided_json/properties/name", "guided_json/properties/name: keyword \"x\" is not supported"},
      // A property name that contains ": " and one that needs RFC 6901 escapes (~1 for '/', ~0 for '~').
      {chat, R"({"guided_json": {"properties": {"a: b": {"minLength": 3, "maxLength": 1}}}})",
       Status::InvalidArgument("/properties/a: b/minLength: minLength 3 > maxLength 1"), 400,
       "guided_json/properties/a: b/minLength", "guided_json/properties/a: b/minLength: minLength 3 > maxLength 1"},
      {chat, R"({"guided_json": {"properties": {"a/b~": {"enum": []}}}})",
       Status::InvalidArgument("/properties/a~1b~0/enum: enum is empty"), 400, "guided_json/properties/a~1b~0/enum",
       "guided_json/properties/a~1b~0/enum: enum is empty"},
      {chat, R"j({"guided_json": {"prefixItems": [{}, {"pattern": "(?=x)"}]}})j",
       Status::Unsupported("/prefixItems/1/pattern: lookahead at byte 0"), 400, "guided_json/prefixItems/1/pattern",
       "guided_json/prefixItems/1/pattern: lookahead at byte 0"},
      {chat, R"({"json_schema": "{\"items\": {\"type\": \"strin\"}}"})",
       Status::InvalidArgument("/items/type: unknown type \"strin\""), 400, "json_schema/items/type",
       "json_schema/items/type: unknown type \"strin\""},
      {chat, R"({"structured_outputs": {"json": {"$ref": "#/$defs/x"}}})",
       Status::InvalidArgument("/$ref: no definition at #/$defs/x"), 400, "structured_outputs.json/$ref",
       "structured_outputs.json/$ref: no definition at #/$defs/x"},
      {gen, R"({"text": "x", "sampling_params": {"json_schema": "{\"minItems\": 3, \"maxItems\": 2}"}})",
       Status::InvalidArgument("/minItems: minItems 3 > maxItems 2"), 400, "sampling_params.json_schema/minItems",
       "sampling_params.json_schema/minItems: minItems 3 > maxItems 2"},
      // Caps and time limits are the request's fault too: 400, not 429.
      {chat, R"({"guided_json": {}})", Status::ResourceExhausted(": compile ran past 2000 ms"), 400, "guided_json",
       "guided_json: compile ran past 2000 ms"},
      // Other kinds: the field alone; a slash in the message is not a pointer.
      {chat, R"j({"guided_regex": "a(?=b)"})j", Status::Unsupported("lookahead (?= at byte 1 is not supported"), 400,
       "guided_regex", "guided_regex: lookahead (?= at byte 1 is not supported"},
      {chat, R"({"guided_grammar": "root ::= x"})", Status::InvalidArgument("/x: undefined rule x at line 1"), 400,
       "guided_grammar", "guided_grammar: /x: undefined rule x at line 1"},
      {gen, R"({"text": "x", "sampling_params": {"ebnf": "root ::= "}})", Status::InvalidArgument("empty rule root"), 400,
       "sampling_params.ebnf", "sampling_params.ebnf: empty rule root"},
      {chat, R"({"guided_choice": ["a"]})", Status::ResourceExhausted("grammar has 2000000 symbols, the limit is 1000000"),
       400, "guided_choice", "guided_choice: grammar has 2000000 symbols, the limit is 1000000"},
      {chat, R"({"response_format": {"type": "json_object"}})", Status::Unsupported("not built yet"), 400,
       "response_format", "response_format: not built yet"},
      // A bug in the compiler is the server's fault.
      {chat, R"({"guided_regex": "a"})", Status::Internal("invariant broken"), 500, "guided_regex",
       "guided_regex: invariant broken"},
  };
  for (const CompileErrorCase& c : cases) {
    RecordingValidator v;
    v.answer = c.status;
    Parsed p = Parse(c.body, c.endpoint, v);
    EXPECT_FALSE(p.ok) << c.body;
    EXPECT_EQ(p.error.http_status, c.http_status) << c.body;
    EXPECT_EQ(p.error.param, c.param) << c.body;
    EXPECT_EQ(p.error.message, c.message) << c.body;
    EXPECT_EQ(v.seen.size(), 1u) << c.body;
  }
}

// A pointer that names no place in the schema is split at the first ": " all the same.
TEST(StructuredOutputErrors, UnresolvedPointerSplitsAtFirstColon) {
  ApiError e = StructuredOutputError("guided_json", GrammarKind::kJsonSchema, R"({"type": "object"})",
                                     Status::InvalidArgument("/properties/x: is: odd"));
  EXPECT_EQ(e.param, "guided_json/properties/x");
  EXPECT_EQ(e.message, "guided_json/properties/x: is: odd");
  EXPECT_EQ(e.ToJson(),
            R"({"error":{"code":400,"message":"guided_json/properties/x: is: odd","param":"guided_json/properties/x","type":"invalid_request_error"}})");
}

// ---- Fields the server does not implement (through the request parsers) ----------------------

struct FieldCase {
  bool chat;
  std::string fields;  // members added to a minimal valid body
  std::string param;   // "" = accepted
  std::string message;
};

TEST(UnsupportedFields, RefusedByNameOrAccepted) {
  const std::vector<FieldCase> cases = {
      // Tools are read by tool_request.h (tool_request_test.cc has every case); here: what the
      // field check lets through and what it refuses by name.
      {true, R"("tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}])", "", ""},
      {true, R"("tools": {})", "tools", "tools: expected an array of tools, got object"},
      {true, R"("tools": [])", "", ""},
      {true, R"("tools": null)", "", ""},
      {false, R"("tools": [{"type": "function", "function": {"name": "f"}}])", "tools",
       "tools: tool calls are made through /v1/chat/completions"},
      {false, R"("tool_choice": "auto")", "tool_choice", "tool_choice: tool calls are made through /v1/chat/completions"},
      {true, R"("functions": [{"name": "f"}])", "functions",
       "functions: the deprecated functions API is not supported; use tools and tool_choice"},
      {true, R"("functions": [])", "", ""},
      {true, R"("tool_choice": "required")", "tool_choice", "tool_choice: needs tools: the request has none"},
      {true, R"("tool_choice": {"type": "function", "function": {"name": "f"}})", "tool_choice.function.name",
       "tool_choice.function.name: names no function of tools: \"f\""},
      {true, R"("tool_choice": "none")", "", ""},
      {true, R"("function_call": "auto")", "function_call",
       "function_call: the deprecated functions API is not supported; use tools and tool_choice"},
      {true, R"("function_call": "none")", "", ""},
      {true, R"("parallel_tool_calls": false)", "", ""},
      {true, R"("parallel_tool_calls": 1)", "parallel_tool_calls", "parallel_tool_calls: expected a boolean, got integer"},
      {true, R"("modalities": ["text", "audio"])", "modalities", R"(modalities: only ["text"] output is supported, got "audio")"},
      {true, R"("modalities": ["audio"])", "modalities", R"(modalities: only ["text"] output is supported, got "audio")"},
      {true, R"("modalities": "text")", "modalities", "modalities: expected an array of strings"},
      {true, R"("modalities": ["text"])", "", ""},
      {true, R"("audio": {"voice": "alloy", "format": "wav"})", "audio", "audio: audio output is not supported"},
      {false, R"("echo": true)", "echo", "echo: is not supported"},
      {false, R"("echo": "yes")", "echo", "echo: expected a boolean"},
      {false, R"("echo": false)", "", ""},
      {true, R"("echo": true)", "echo", "echo: is not supported"},  // vLLM's chat echo
      {false, R"("suffix": "the end")", "suffix", "suffix: is not supported"},
      {false, R"("suffix": 3)", "suffix", "suffix: expected a string"},
      {false, R"("suffix": "")", "", ""},
      {false, R"("suffix": null)", "", ""},
      // Hints and metadata: accepted and ignored.
      {true, R"("user": "u1", "store": true, "metadata": {"k": "v"}, "service_tier": "auto",
                "prediction": {"type": "content", "content": "x"})", "", ""},
      {false, R"("user": "u1", "store": false, "metadata": {}, "service_tier": "default",
                 "prediction": {"type": "content", "content": "x"})", "", ""},
  };
  for (const FieldCase& c : cases) {
    const std::string body = c.chat ? R"({"messages": [{"role": "user", "content": "hi"}], )" + c.fields + "}"
                                    : R"({"prompt": "hi", )" + c.fields + "}";
    GenerateRequest r;
    ApiError e;
    bool ok = c.chat ? ParseChatCompletionRequest(body, ApiLimits{}, &r, &e)
                     : ParseCompletionRequest(body, ApiLimits{}, &r, &e);
    if (c.param.empty()) {
      EXPECT_TRUE(ok) << body << "\n" << e.message;
      EXPECT_FALSE(r.spec.grammar.active()) << body;
    } else {
      EXPECT_FALSE(ok) << body;
      EXPECT_EQ(e.http_status, 400) << body;
      EXPECT_EQ(e.param, c.param) << body;
      EXPECT_EQ(e.message, c.message) << body;
    }
  }
  // The list the README gives is the list the tests accept.
  for (std::string_view field : kIgnoredHintFields) {
    GenerateRequest r;
    ApiError e;
    const std::string body = R"({"prompt": "hi", ")" + std::string(field) + R"(": "x"})";
    EXPECT_TRUE(ParseCompletionRequest(body, ApiLimits{}, &r, &e)) << body << "\n" << e.message;
  }
}

TEST(UnsupportedFields, NativeGenerateIsNotChecked) {
  // SGLang's /generate has none of these fields; whatever it does not know it ignores, as before.
  GenerateRequest r;
  ApiError e;
  EXPECT_TRUE(ParseNativeGenerateRequest(R"({"text": "x", "tools": [{}], "echo": true})", ApiLimits{}, &r, &e))
      << e.message;
}

// ---- Through the request parsers and the real compiler ---------------------------------------

TEST(StructuredOutputCompiled, ParsersCarryTheValidatedSpec) {
  GenerateRequest r;
  ApiError e;
  ASSERT_TRUE(ParseCompletionRequest(R"({"prompt": "x", "guided_choice": ["yes", "no"]})", ApiLimits{}, &r, &e))
      << e.message;
  EXPECT_EQ(r.spec.grammar, Spec(GrammarKind::kChoice, R"(["yes","no"])"));
  ASSERT_TRUE(ParseCompletionRequest(R"({"prompt": "x", "guided_regex": "[0-9]{3}-[0-9]{4}", "max_tokens": 9})",
                                     ApiLimits{}, &r, &e))
      << e.message;
  EXPECT_EQ(r.spec.grammar, Spec(GrammarKind::kRegex, "[0-9]{3}-[0-9]{4}"));
  EXPECT_EQ(r.spec.sampling.max_new_tokens, 9);  // the rest of the request is read as before
  ASSERT_TRUE(ParseChatCompletionRequest(R"({"messages": [{"role": "user", "content": "x"}],
      "ebnf": "root ::= \"yes\" | \"no\""})",
                                         ApiLimits{}, &r, &e))
      << e.message;
  EXPECT_EQ(r.spec.grammar, Spec(GrammarKind::kGbnf, R"(root ::= "yes" | "no")"));
  ASSERT_TRUE(ParseNativeGenerateRequest(R"({"text": "x", "sampling_params": {"regex": "(a|b)+"}})", ApiLimits{}, &r, &e))
      << e.message;
  EXPECT_EQ(r.spec.grammar, Spec(GrammarKind::kRegex, "(a|b)+"));
}

TEST(StructuredOutputCompiled, JsonSpecsCarried) {
  const std::string schema = kSchema;
  GenerateRequest r;
  ApiError e;
  ASSERT_TRUE(ParseChatCompletionRequest(R"({"messages": [{"role": "user", "content": "Who?"}], "max_tokens": 40,
      "response_format": {"type": "json_schema", "json_schema": {"name": "person", "strict": true, "schema": )" +
                                             schema + "}}}",
                                         ApiLimits{}, &r, &e))
      << e.message;
  EXPECT_EQ(r.spec.grammar, Spec(GrammarKind::kJsonSchema, schema));
  ASSERT_TRUE(ParseChatCompletionRequest(R"({"messages": [{"role": "user", "content": "x"}],
      "response_format": {"type": "json_object"}})",
                                         ApiLimits{}, &r, &e))
      << e.message;
  EXPECT_EQ(r.spec.grammar.kind, GrammarKind::kJsonObject);
  ASSERT_TRUE(ParseNativeGenerateRequest(R"({"text": "x", "sampling_params": {"json_schema": )" +
                                             nlohmann::json(schema).dump() + "}}",
                                         ApiLimits{}, &r, &e))
      << e.message;
  EXPECT_EQ(r.spec.grammar, Spec(GrammarKind::kJsonSchema, schema));
}

TEST(StructuredOutputCompiled, CompileErrorsAre400sNamingTheField) {
  GenerateRequest r;
  ApiError e;
  // A regex the engine refuses (lookahead).
  EXPECT_FALSE(ParseCompletionRequest(R"j({"prompt": "x", "guided_regex": "a(?=b)"})j", ApiLimits{}, &r, &e));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.param, "guided_regex");
  EXPECT_THAT(e.message, StartsWith("guided_regex: "));
  // A grammar with an undefined rule.
  EXPECT_FALSE(ParseNativeGenerateRequest(R"({"text": "x", "sampling_params": {"ebnf": "root ::= missing"}})",
                                          ApiLimits{}, &r, &e));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.param, "sampling_params.ebnf");
  EXPECT_THAT(e.message, StartsWith("sampling_params.ebnf: "));
  // The server's size cap.
  ApiLimits small;
  small.grammar.max_source_bytes = 8;
  EXPECT_FALSE(ParseCompletionRequest(R"({"prompt": "x", "guided_regex": "abcdefghi"})", small, &r, &e));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.param, "guided_regex");
  EXPECT_EQ(e.message, "guided_regex: the regular expression is 9 bytes, the limit is 8");
}

TEST(StructuredOutputCompiled, SchemaErrorsPointIntoTheSchema) {
  GenerateRequest r;
  ApiError e;
  // Unsatisfiable: minLength > maxLength at /properties/name.
  EXPECT_FALSE(ParseChatCompletionRequest(R"({"messages": [{"role": "user", "content": "x"}],
      "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "object",
      "properties": {"name": {"type": "string", "minLength": 5, "maxLength": 2}}}}}})",
                                          ApiLimits{}, &r, &e));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_THAT(e.param, StartsWith("response_format.json_schema.schema/properties/name"));
  EXPECT_THAT(e.message, StartsWith(e.param + ": "));
  // An empty enum.
  EXPECT_FALSE(ParseCompletionRequest(R"({"prompt": "x", "guided_json": {"properties": {"a": {"enum": []}}}})",
                                      ApiLimits{}, &r, &e));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_THAT(e.param, StartsWith("guided_json/properties/a"));
}

}  // namespace
}  // namespace radixserve::api
