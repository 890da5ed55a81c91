// Request fields the server does not implement: refused by name, never silently ignored.
//
// A field that changes what a client gets (tool calls, audio output, an echoed prompt, a suffix)
// and that the engine does not implement yet is a 400 whose param names it, so a client that
// relies on it learns at once instead of getting plain text it did not ask for. Fields that are
// only hints or metadata (kIgnoredHintFields) are accepted and ignored, as are fields the server
// does not know at all (as vLLM and SGLang do; request_parser.h).
//
// Stateless functions, safe from any thread.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <string_view>

#include "core/api/api_error.h"
#include "core/api/generate_request.h"

namespace radixserve::api {

// Hint and metadata fields of the OpenAI endpoints, accepted and ignored (the README lists them).
inline constexpr std::array<std::string_view, 5> kIgnoredHintFields = {"user", "store", "metadata", "service_tier",
                                                                       "prediction"};

// Refuses, on /v1/chat/completions and /v1/completions:
//   functions (unless an empty array), function_call (unless "none"): the deprecated functions API;
//   on /v1/completions: tools, tool_choice, parallel_tool_calls (chat takes them: tool_request.h);
//   modalities other than ["text"], audio: audio output is not supported;
//   echo: true (also vLLM's chat echo), suffix: a non-empty string.
// Other endpoints pass. `root` is the parsed body (an object).
bool CheckUnsupportedFields(const nlohmann::json& root, Endpoint endpoint, ApiError* error);

}  // namespace radixserve::api
