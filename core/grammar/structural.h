// Structural grammars (GrammarKind::kStructural): tool calls (OpenAI `tools`) as one grammar, so
// that every call a model writes is valid JSON for its tool's parameter schema, in the markup of
// the model's family. The api side writes the spec per family; this compiles it.
//
// The spec is a JSON object (no other keys):
//   "calls"          array of at least one call: {"begin": string, "schema": JSON Schema (object
//                    or boolean), "end": string}; begin and end default to "", a call without
//                    "schema" takes any JSON object (as CompileJsonObject)
//   "prefix"         string, default "": before the first call (e.g. "[TOOL_CALLS][")
//   "separator"      string, default "": between two calls (e.g. ", ")
//   "suffix"         string, default "": after the last call (e.g. "]")
//   "min_calls"      integer >= 0, default 1
//   "max_calls"      integer, default -1 (unbounded); else max(1, min_calls)..GrammarLimits::max_repeat
//   "max_whitespace" integer 0..64, default 0: JsonSchemaOptions::max_whitespace of every schema
//   "trigger"        string of 1..128 bytes, optional: lazy mode (below)
//
// The output is exactly: prefix, then min_calls..max_calls calls joined by separator, then
// suffix, then EOS; with min_calls 0 it may instead be empty (no prefix or suffix then). A call
// is its begin, then a JSON value its schema accepts, then its end. Schemas compile as
// json_schema.h says (properties in schema order, integers written plainly as for
// GrammarKind::kJsonSchema, at most max_whitespace whitespace characters where JSON allows
// them); calls with equal schemas share one compiled schema.
//
// Lazy mode ("trigger" present): the output is free text until it contains the trigger; from
// the trigger's first byte on it is as above (Grammar::trigger, GrammarMatcher's dormant phase).
// The trigger must start prefix + begin of every call (it is how the model announces a call,
// e.g. "<tool_call>" or "[TOOL_CALLS]").
//
// Markup tokens: prefix, separator (where max_calls allows a second call), suffix, every call's
// begin and end and the trigger are recorded as the grammar's markup texts
// (Grammar::markup_texts()), so that a vocabulary's special tokens written within them (Qwen's
// "<tool_call>", Mistral's "[TOOL_CALLS]") are taken whole where the grammar accepts their bytes
// (compiled_grammar.h), as the model writes them.
//
// Errors: InvalidArgument naming the field ("calls[2].end: must be a string"); a schema's error
// is the JSON Schema compiler's (its code and message) under the call's field, so its JSON
// pointer reads on ("calls[2].schema/properties/x/minimum: ..."); ResourceExhausted for the caps
// of GrammarLimits: the spec's text counts against max_source_bytes, and max_compile_time and
// max_symbols bound the whole compile, all schemas together.
//
// Thread-safety: stateless; compiles may run concurrently.
#pragma once

#include <string_view>

#include "core/grammar/grammar.h"
#include "core/util/status.h"

namespace radixserve::grammar {

Result<Grammar> CompileStructural(std::string_view spec_text, const GrammarLimits& limits = {});

}  // namespace radixserve::grammar
