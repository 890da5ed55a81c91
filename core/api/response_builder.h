// Response builders: OpenAI completion / chat completion JSON, their SSE
// chunks, and the native /generate output, from backend outputs.
//
// Pure functions of their arguments; safe from any thread. Text that is not
// valid UTF-8 (a token that ends inside a character) is written with U+FFFD.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/backend.h"
#include "core/tool_calls/tool_call.h"

namespace radixserve::api {

// What a response says about itself: "cmpl-<rid>" / "chatcmpl-<rid>", the model name, unix time.
struct ResponseContext {
  std::string id;
  std::string model;
  int64_t created = 0;
};

// Everything one choice produced so far (the merge of its GenerateOutputs).
struct ChoiceResult {
  std::string rid;
  std::string text;
  std::vector<int32_t> token_ids;
  std::vector<TokenLogprob> logprobs;
  FinishReason finish;
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  int32_t cached_tokens = 0;

  void Append(const GenerateOutput& output);
};

struct Usage {
  int32_t prompt_tokens = 0;      // counted once for n > 1: the choices share the prompt
  int32_t completion_tokens = 0;  // summed over choices
  int32_t cached_tokens = 0;
};
Usage SumUsage(const std::vector<ChoiceResult>& choices);

// "stop" / "length"; kAbort and kNone have no OpenAI finish_reason (abort becomes an error).
const char* OpenAiFinishReason(FinishKind kind);

// Non-stream bodies.
std::string BuildCompletionResponse(const ResponseContext& ctx, const std::vector<ChoiceResult>& choices,
                                    bool with_logprobs);
// messages[i]: choice i's text read into content, reasoning and tool calls (chat_output.h);
// finish_reason "tool_calls" where a choice made calls and ended on its own.
std::string BuildChatCompletionResponse(const ResponseContext& ctx, const std::vector<ChoiceResult>& choices,
                                        const std::vector<tool_calls::ParsedOutput>& messages, bool with_logprobs);
// n == 1: one object; n > 1: an array of objects with "index".
std::string BuildNativeGenerateResponse(const std::vector<ChoiceResult>& choices, bool with_logprobs);

// Server-sent events.
std::string SseEvent(std::string_view json);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

// A text_completion chunk for one choice's new output; text_offset_base = bytes of text sent before it.
std::string BuildCompletionChunk(const ResponseContext& ctx, int32_t index, const GenerateOutput& delta,
                                 bool with_logprobs, size_t text_offset_base, bool include_usage);
// The first chat chunk of a choice: delta {"role": "assistant", "content": ""}.
std::string BuildChatRoleChunk(const ResponseContext& ctx, int32_t index, bool include_usage);
// A chat chunk: `parsed` is what the choice's ChatOutput made of raw.text_delta; raw carries the
// logprobs and the finish; made_calls: the choice has made a call (finish_reason "tool_calls").
std::string BuildChatChunk(const ResponseContext& ctx, int32_t index, const tool_calls::OutputDelta& parsed,
                           const GenerateOutput& raw, bool made_calls, bool with_logprobs, bool include_usage);
// The final usage chunk (stream_options.include_usage): choices [], usage {...}.
std::string BuildUsageChunk(const ResponseContext& ctx, bool chat, const Usage& usage);
// A native /generate stream event: cumulative text and output_ids so far (SGLang's default).
std::string BuildNativeStreamEvent(const ChoiceResult& choice, int32_t index, bool with_index, bool with_logprobs);
// An error event inside a stream: data: {"error": {...}}.
std::string BuildStreamErrorEvent(const std::string& error_json);

}  // namespace radixserve::api
