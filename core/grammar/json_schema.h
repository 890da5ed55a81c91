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
//     -?(0|[1-9][0-9]*), and by default also with a `.0+` tail, because JSON Schema from draft 6
//     on (and the reference validator) counts 1.0 as an integer; draft 4 does not.
//   - `enum` / `const` values: compact, objects with their keys in the order written.
//
// Keywords and how exactly they are enforced. "Exact" means the grammar accepts what the
// reference validator (Python jsonschema, see shared/jsonschema/README.md) accepts, key order
// and whitespace aside:
//   Exact: type (unions, absent = any type), properties, required, additionalProperties,
//     patternProperties (keys split into classes by regex intersection and complement),
//     propertyNames, minProperties / maxProperties, dependentRequired and array-valued
//     dependencies, dependentSchemas and schema-valued dependencies, items / prefixItems (and
//     array `items` + additionalItems), contains (one per array, without prefixItems),
//     minItems / maxItems, enum, const, anyOf, allOf (merged), oneOf whose branches are
//     disjoint (types, listed values, a required property pinned to different values) or whose
//     branches have cheap negations (then "this branch and not the others"), not (pushed down
//     to keywords: types, values, bounds, lengths, counts, required, properties, patterns,
//     formats, contains, items, oneOf), if / then / else, $ref / $defs / definitions (JSON
//     pointers, `#`, $anchor, $id; recursion through rules), minLength / maxLength (code
//     points), pattern (searched; see the regex note below), the formats of
//     json_schema_formats.h, minimum / maximum / exclusive bounds (both drafts' forms; exact
//     decimals), multipleOf 1 and powers of ten (0.1, 0.01, ...; decimal arithmetic where the
//     reference divides doubles and calls 0.07 no multiple of 0.01).
//   Wherever a subschema has `enum` or `const`, the grammar is the list of its values that pass
//     every other keyword of that place, checked by a built-in validator; there any keyword
//     works, `uniqueItems`, `contains`, any `multipleOf` and any `not` included.
//   Approximate: unevaluatedProperties false is additionalProperties false over the keys that
//     any merged subschema lists or matches (exact for the usual allOf / $ref composition).
//   Not enforced, accepted and reported in JsonSchemaReport: `uniqueItems` (no context-free
//     grammar can say "no two items are equal"); the exclusivity of other oneOfs (compiled as
//     anyOf); the formats regex, idn-hostname, iri, iri-reference, uri-template. Not reported:
//     duplicate keys among additional properties are not prevented; a `$schema` inside a
//     subschema does not switch drafts.
//   Refused (Status::Unsupported naming the keyword and its JSON pointer): minContains /
//     maxContains, unevaluatedItems, other multipleOf values, unevaluatedProperties with a
//     schema, $dynamicRef / $recursiveRef, remote $refs, regex constructs neither the automata
//     nor regex.h read (lookbehind, lookahead past a leading ^, backreferences, \b), a length
//     bound over GrammarLimits::max_repeat together with an unbounded pattern, `not` of
//     keywords no grammar can negate (additionalProperties, patternProperties, uniqueItems, a
//     propertyNames that refuses infinitely many names, ...).
//   Keywords of another draft than the schema's are ignored, as that draft and the reference
//     validator ignore them (`const` in draft 4, `dependencies` in 2020-12), and reported. In
//     drafts 4 to 7 keywords next to `$ref` are ignored likewise; from 2019-09 on they apply.
//   Annotations, ignored: title, description, default, examples, deprecated, readOnly,
//     writeOnly, $comment, $schema, $id, $anchor (used for references), $vocabulary,
//     content*, and every key that is not a JSON Schema keyword (`x-*`, `nullable`,
//     `_format`, ...): only words of the JSON Schema vocabularies are keywords. Keys starting
//     with `$rs-` are reserved.
//
// Regexes (pattern, patternProperties): the ECMAScript subset of regex.h, read where ECMAScript
// and the reference validator's Python re differ on what a model could write the way the
// reference reads it (\s includes U+001C..U+001F and U+0085 but not U+FEFF; `.` is anything but
// \n; `$` also matches before a final \n for keys, and only at the end for a value's pattern,
// which accepts a subset); \d and \w are ASCII, as in ECMAScript. A pattern too large for the
// automata is compiled by regex.h's AddRegex when nothing else constrains the string.
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
  // Whether integers may be written with a zero fraction (1.0) or as -0, as JSON Schema allows
  // from draft 6 on (never for a draft-4 schema).
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
