// The tool fields of a chat request (OpenAI's function calling): "tools", "tool_choice",
// "parallel_tool_calls", and the tool parts of messages (an assistant turn's "tool_calls", a
// "tool" message's "tool_call_id").
//
// What is accepted:
//   tools                [{"type": "function", "function": {"name", "description"?, "parameters"?,
//                         "strict"?}}], at most ApiLimits::max_tools, names unique and made of
//                         [A-Za-z0-9_-] (1 to 64 characters, OpenAI's rule); "parameters" is a JSON
//                         schema object (compiled by the server when it constrains calls).
//   tool_choice          "auto" (default with tools), "none", "required",
//                         {"type": "function", "function": {"name": N}} (must call N),
//                         {"type": "allowed_tools", "allowed_tools": {"mode": "auto" | "required",
//                          "tools": [{"type": "function", "function": {"name": N}}, ...]}};
//                         a name must be one of the tools; anything but "none" needs tools.
//   parallel_tool_calls  boolean (default true): false allows at most one call per answer.
//   messages[i]          role "tool" with "tool_call_id" and "content"; role "assistant" with
//                         "tool_calls": [{"id", "type": "function", "function": {"name",
//                         "arguments": a JSON text (OpenAI) or an object}}], content then optional.
// The deprecated "functions" / "function_call" are refused by name (unsupported_fields.h).
// Errors are 400s whose param is the dotted path of the field ("tools[2].function.name").
//
// The tools are kept as the client wrote them, keys in document order (the body is re-read for
// that): the chat template prints them and a schema's property order is the order calls follow.
// Stateless functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/api/api_error.h"
#include "core/api/generate_request.h"

namespace radixserve::api {

// Reads tools, tool_choice and parallel_tool_calls of a chat request into *out. `body` is the raw
// text and `root` its parse (an object).
bool ParseToolFields(std::string_view body, const nlohmann::json& root, const ApiLimits& limits,
                     GenerateRequest* out, ApiError* error);

// Reads the tool parts of one message (`field`: "messages[i]") into *msg, whose role is set: an
// assistant's tool_calls, a tool message's tool_call_id, and "name".
bool ParseMessageToolFields(const nlohmann::json& message, const std::string& field, const ApiLimits& limits,
                            ChatMessage* msg, ApiError* error);

// The functions a call may name under the request's tool_choice: `allowed`, or every tool.
std::vector<std::string> CallableToolNames(const GenerateRequest& request);

}  // namespace radixserve::api
