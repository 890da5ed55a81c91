// The grammar that makes a model's tool calls valid: for a family's call syntax (family.h) and the
// tools a call may name, the text of a grammar::GrammarKind::kStructural spec (core/grammar/
// structural.h): each call is the family's markup around a JSON value of its tool's parameter
// schema.
//
// Two modes, as tool_choice asks: kRequired constrains the output from its first token to one or
// more calls (reasoning blocks are skipped); kAuto leaves the output free until the family's
// trigger ("<tool_call>", "[TOOL_CALLS]", ...) and constrains it from there to the end (a lazy
// grammar). Families whose arguments are not JSON (Qwen3-Coder's XML parameters, Gemma 4,
// MiniCPM5), and functionary's trigger-less auto mode, have no grammar: Unsupported, and their
// calls are parsed as written. Stateless; thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tool_calls/family.h"
#include "core/util/status.h"

namespace radixserve::tool_calls {

struct CallableTool {
  std::string name;
  nlohmann::ordered_json parameters;  // a JSON schema object, or null: any JSON object
};

enum class CallMode { kRequired, kAuto };

struct CallGrammarOptions {
  CallMode mode = CallMode::kRequired;
  bool parallel = true;     // more than one call per answer
  int max_whitespace = 1;   // JSON whitespace allowed at each place inside arguments
};

// The spec text (JSON) for `tools`; Unsupported when the family has no grammar in this mode.
Result<std::string> CallGrammarSpec(ToolCallFamily family, const std::vector<CallableTool>& tools,
                                    const CallGrammarOptions& options);

// One call as the grammar lets the family write it, arguments given: what a model under the
// grammar outputs for one call (tests check that the family's parser reads it back).
Result<std::string> RenderCallForTest(ToolCallFamily family, const std::string& name, const std::string& arguments,
                                      CallMode mode);

}  // namespace radixserve::tool_calls
