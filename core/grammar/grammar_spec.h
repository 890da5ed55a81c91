// GrammarSpec: what a request asks its output to match, as the client wrote it.
//
// The api node parses a request's response_format (or a vLLM/SGLang-style extension field)
// into a GrammarSpec and validates it by compiling it once; the spec's text travels with the
// request and the worker compiles it again through its grammar cache (keyed by kind and text),
// so nothing but plain bytes crosses the process boundary. Plain data, thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace radixserve::grammar {

enum class GrammarKind : uint8_t {
  kNone = 0,     // unconstrained
  kJsonObject,   // any JSON object (response_format json_object); text is empty
  kJsonSchema,   // text: the schema as JSON text
  kRegex,        // text: an ECMAScript regular expression, matched in full
  kGbnf,         // text: a grammar in llama.cpp's GBNF format (root rule "root")
  kChoice,       // text: a JSON array of strings; the output is exactly one of them
  kStructural,   // text: a JSON object of tool calls and their markup (structural.h); may be lazy
};

struct GrammarSpec {
  GrammarKind kind = GrammarKind::kNone;
  std::string text;

  bool active() const { return kind != GrammarKind::kNone; }
  bool operator==(const GrammarSpec& o) const { return kind == o.kind && text == o.text; }
};

std::string_view GrammarKindName(GrammarKind kind);

}  // namespace radixserve::grammar
