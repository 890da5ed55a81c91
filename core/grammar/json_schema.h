// JSON Schema front-end: a JSON Schema (drafts 4, 6, 7, 2019-09, 2020-12) compiled into the
// grammar (grammar.h) of the JSON texts it accepts, and JSON mode (any JSON object).
//
// What the output looks like:
//   - JSON text with at most JsonSchemaOptions::max_whitespace characters of [ \t\n\r] wherever
//     JSON allows whitespace (between tokens, and before and after the value). The default, 0,
//     means compact output: `{"a":1,"b":[true,null]}`.
//   - Object keys in a fixed order: the schema's `properties` in schema order (then keys named
//     only in `required` / `dependentRequired`), each optional one skippable; keys that are not
//     listed (allowed by `additionalProperties` / `patternProperties`, true by default) come
//     after them. This is what OpenAI's strict mode and llguidance do; a valid instance that
//     lists keys in another order is rejected.
//   - Strings: any code point but `"`, `\` and controls raw, the escapes \" \\ \/ \b \f \n \r \t,
//     and \uXXXX (a surrogate only as half of a pair). Strings under a `pattern`, `format`,
//     `enum` or other automaton constraint spell ordinary code points raw (regex.h's rule).
//   - Numbers: JSON's syntax; an exponent only where no bound applies. Integers are
//     -?(0|[1-9][0-9]*), and by default also with a `.0+` tail, because JSON Schema (and the
//     reference validator) counts 1.0 as an integer.
//   - `enum` / `const` values: compact, objects with their keys in the order written.
//
// Keywords and how exactly they are enforced:
//   Exact: type (unions, absent = any type), properties, required, additionalProperties,
//     patternProperties (key classes by regex intersection and complement), propertyNames,
//     unevaluatedProperties false (as additionalProperties false over every subschema's
//     listed keys), minProperties / maxProperties, dependentRequired and array-valued
//     dependencies, dependentSchemas and schema-valued dependencies, items / prefixItems (and
//     array `items` + additionalItems), minItems / maxItems, enum, const, anyOf, allOf (merged),
//     not (pushed down to keywords: types, values, bounds, lengths, required, properties,
//     patterns, formats; refused where no grammar can express it), if / then / else, $ref /
//     $defs / definitions (JSON pointers, `#`, $anchor, $id; recursion through rules),
//     minLength / maxLength (code points), pattern (ECMAScript, searched), the formats of
//     json_schema_formats.h, minimum / maximum / exclusive bounds (both drafts' forms; exact
//     decimals), multipleOf 1 and powers of ten (0.1, 0.01, ...).
//   Wherever a subschema has `enum` or `const`, the grammar is the list of its values that pass
//     every other keyword of that place, checked by a built-in validator; there any keyword
//     works, `uniqueItems`, `contains` and any `multipleOf` included.
//   Not enforced (accepted and reported in JsonSchemaReport): `uniqueItems` (no context-free
//     grammar can say "no two items are equal"); `oneOf` exclusivity (compiled as anyOf: an
//     instance matching two branches is accepted); the formats regex, idn-hostname, iri,
//     iri-reference, uri-template. Duplicate keys among additional properties are not
//     prevented.
//   Refused (Status::Unsupported naming the keyword and its JSON pointer): contains,
//     minContains / maxContains, unevaluatedItems, other multipleOf values, unevaluatedProperties
//     other than false / true, $dynamicRef / $recursiveRef, remote $refs, regex constructs that
//     regex.h refuses (lookaround, backreferences, \b), `not` of keywords no grammar can negate
//     (additionalProperties, items, uniqueItems, oneOf with several branches, ...).
//   Annotations, ignored: title, description, default, examples, deprecated, readOnly,
//     writeOnly, $comment, $schema, $id, $anchor (used for references), $vocabulary,
//     content*, and every key that is not a JSON Schema keyword (`x-*`, `nullable`,
//     `_format`, ...): only words of the JSON Schema vocabularies are keywords. In drafts 4 to 7
//     keywords next to `$ref` are ignored, as the specification and the reference validator
//     say; from 2019-09 on they apply.
//
// Errors: the message starts with the RFC 6901 JSON pointer of the offending place, then ": "
// ("/properties/age/minimum: ..."; ": ..." at the root). InvalidArgument for a malformed or
// unsatisfiable schema (minLength > maxLength, an empty enum, an allOf nothing satisfies, ...),
// Unsupported for a keyword or construct not implemented, ResourceExhausted for a cap of
// GrammarLimits (size, repetition bounds, compile time).
//
// Thread-safety: stateless functions; compiles may run concurrently.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/grammar/grammar.h"
#include "core/util/status.h"

namespace radixserve::grammar {

struct JsonSchemaOptions {
  // true: properties in schema order, every keyword exact. false: properties in any order
  // (each may repeat), and then required / minProperties / maxProperties / dependentRequired
  // are not enforced (reported as such); for clients that cannot accept a fixed order, and for
  // telling order mismatches apart in tests.
  bool strict_property_order = true;
  // Whitespace characters allowed at each place JSON allows whitespace (0: compact output).
  int max_whitespace = 0;
  // Whether integers may be written with a zero fraction (1.0), as JSON Schema allows.
  bool integer_point_zero = true;
};

// What a compile accepted without enforcing it.
struct JsonSchemaReport {
  // "pointer: what" for each place, e.g. "/properties/tags/uniqueItems: not enforced".
  std::vector<std::string> not_enforced;
};

// The schema must be an object or a boolean. The ordered_json form keeps the order of
// `properties`, which the output follows (a nlohmann::json would have sorted the keys).
Result<Grammar> CompileJsonSchema(const nlohmann::ordered_json& schema, const JsonSchemaOptions& options = {},
                                  const GrammarLimits& limits = {}, JsonSchemaReport* report = nullptr);
// The schema as JSON text (at most limits.max_source_bytes).
Result<Grammar> CompileJsonSchemaText(std::string_view schema_text, const JsonSchemaOptions& options = {},
                                      const GrammarLimits& limits = {}, JsonSchemaReport* report = nullptr);
// JSON mode: any JSON object (response_format json_object).
Result<Grammar> CompileJsonObject(const GrammarLimits& limits = {}, const JsonSchemaOptions& options = {});

}  // namespace radixserve::grammar
