// Structured output on the API: a request body's response_format, or one of the extension fields
// vLLM and SGLang users know, read into a grammar::GrammarSpec and validated by compiling it once.
//
// Where a constraint may be written (at most one per request; two are a 400 naming both):
//   /v1/chat/completions and /v1/completions, top level of the body:
//     response_format  {"type": "text"}                       no constraint
//                      {"type": "json_object"}                kJsonObject
//                      {"type": "json_schema", "json_schema": {"name", "schema", "strict", "description"}}
//                                                             kJsonSchema
//     guided_json (object | string), guided_regex, guided_grammar (GBNF), guided_choice ([string])
//                                                             vLLM's names
//     structured_outputs {json | regex | grammar | choice | json_object: true}
//                                                             vLLM's newer object
//     json_schema (string), regex, ebnf (read as GBNF)        SGLang's names
//   /generate: the same extension fields (not response_format) inside "sampling_params".
//
// Error `param` convention: the field that holds the constraint, dotted from the body's root
// ("response_format.json_schema.schema", "sampling_params.regex", "guided_choice[2]"); for an
// error inside a JSON schema that the compiler places, the field directly followed by the RFC 6901
// JSON pointer into the schema ("response_format.json_schema.schema/properties/age/minimum"). The
// message starts with the param, then ": " and the compiler's own words.
//
// A schema given as a JSON object is re-read from the body text in document order, because the
// parsed body (nlohmann::json) sorts object keys and a schema's property order is the order the
// output follows.
//
// Stateless functions, safe from any thread. Validation compiles on the calling thread, bounded by
// ApiLimits::grammar (size, symbols, time).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <string>
#include <string_view>

#include "core/api/api_error.h"
#include "core/api/generate_request.h"
#include "core/grammar/grammar_spec.h"
#include "core/util/status.h"

namespace radixserve::api {

// Checks that a spec compiles; the production validator is grammar::CompileSpec. Tests pass their
// own to exercise the parsing and error mapping apart from the compiler.
using GrammarValidator = std::function<Status(const grammar::GrammarSpec&, const grammar::GrammarLimits&)>;

// grammar::CompileSpec, its result dropped.
Status CompileToValidate(const grammar::GrammarSpec& spec, const grammar::GrammarLimits& limits);

// Reads the constraint of a request body into *spec (kNone when there is none) and validates it.
// `body` is the raw text and `root` its parse (a JSON object). On a bad constraint returns false
// with a 400 in *error (500 only when the validator reports an internal error).
bool ParseStructuredOutput(std::string_view body, const nlohmann::json& root, Endpoint endpoint,
                           const ApiLimits& limits, grammar::GrammarSpec* spec, ApiError* error,
                           const GrammarValidator& validate = CompileToValidate);

// A constrained request cannot ignore EOS: the grammar ends the output with it, and nothing may
// follow. ignore_eos with a constraint is a 400 naming ignore_eos.
bool CheckConstrainedSampling(const GenerateRequest& request, ApiError* error);

// The error for a validator's non-OK status on the constraint held by `field`. For kJsonSchema the
// message may start with a JSON pointer into `schema_text` ("/properties/age/minimum: ..."; ": ..."
// or no pointer for the root); the pointer is split off at the first ": " whose prefix names a
// place in the schema (so a property name that contains ": " is still found) and appended to
// `field` to make the param. Exposed for tests.
ApiError StructuredOutputError(const std::string& field, grammar::GrammarKind kind, std::string_view schema_text,
                               const Status& status);

}  // namespace radixserve::api
