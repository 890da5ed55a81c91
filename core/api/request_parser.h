// Request parsing: JSON bodies of the api endpoints → GenerateRequest and
// friends, with every check the OpenAI API and our limits require.
//
// A failure returns false and fills an ApiError whose message names the
// field and says what was expected (HTTP 400). Unknown fields are ignored,
// as vLLM and SGLang do, but known fields that would change the output and
// are not implemented are refused by name (unsupported_fields.h). The
// structured-output constraint is read and validated by response_format.h.
// Stateless functions, safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/api_error.h"
#include "core/api/generate_request.h"

namespace radixserve::api {

// POST /v1/completions.
bool ParseCompletionRequest(std::string_view body, const ApiLimits& limits, GenerateRequest* out, ApiError* error);
// POST /v1/chat/completions.
bool ParseChatCompletionRequest(std::string_view body, const ApiLimits& limits, GenerateRequest* out,
                                ApiError* error);
// POST /generate (native): text | input_ids, sampling_params{...}, stream, return_logprob, top_logprobs_num, rid.
bool ParseNativeGenerateRequest(std::string_view body, const ApiLimits& limits, GenerateRequest* out,
                                ApiError* error);

// POST /tokenize: {"text" | "prompt": str, "add_special_tokens": bool (default true)}; or chat "messages".
struct TokenizeRequest {
  std::string text;
  std::vector<ChatMessage> messages;
  bool has_messages = false;
  bool add_generation_prompt = true;       // with messages
  nlohmann::ordered_json chat_template_kwargs;  // with messages
  bool add_special_tokens = true;
  std::string model;
};
bool ParseTokenizeRequest(std::string_view body, const ApiLimits& limits, TokenizeRequest* out, ApiError* error);

// POST /detokenize: {"tokens" | "input_ids": [int], "skip_special_tokens": bool (default true)}.
struct DetokenizeRequest {
  std::vector<int32_t> tokens;
  bool skip_special_tokens = true;
  std::string model;
};
bool ParseDetokenizeRequest(std::string_view body, const ApiLimits& limits, DetokenizeRequest* out,
                            ApiError* error);

// The model name check: empty and "default" always pass, otherwise it must equal served_model_name.
bool CheckModelName(const std::string& requested, const std::string& served_model_name, ApiError* error);

}  // namespace radixserve::api
