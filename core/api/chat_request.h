// PrepareChat: a chat request made ready for the engine. Its prompt is rendered by the chat
// template (with the tools, unless tool_choice is "none": then the model is not shown them), its
// output will be read back by the template's tool-call family (content, reasoning_content,
// tool_calls: chat_output.h), and, where the request has tools to call, the grammar of the
// family's call syntax around the tools' parameter schemas constrains what the model writes:
// from the first token with tool_choice "required" or a named function, after the family's
// trigger with "auto" (tool_calls/call_grammar.h). A family whose calls have no grammar (not JSON)
// is served unconstrained and logged.
//
// 400s: tools (or tool messages) with a template that writes no tool-call syntax radixserve knows
// (a hand-written family, or a Jinja template without one); tools that call under a
// response_format; parameters that do not compile (param "tools[i].function.parameters..."); a
// template that raises. Stateless; thread-safe.
#pragma once

#include "core/api/api_error.h"
#include "core/api/chat_prompt.h"
#include "core/api/generate_request.h"

namespace radixserve::api {

// Fills req->text (the prompt), output_family, output_starts_in_reasoning, the grammar of calls
// and, when the client left it out, skip_special_tokens (kept off where a family reads markup).
bool PrepareChat(const ChatPromptTemplate& chat_template, const ApiLimits& limits, GenerateRequest* req,
                 ApiError* error);

}  // namespace radixserve::api
