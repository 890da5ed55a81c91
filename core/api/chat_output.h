// ChatOutput: one chat choice's generated text as the OpenAI chat API returns it: content,
// reasoning_content and tool_calls, whole (message) or as stream deltas, read by the tool-call
// family's parser (core/tool_calls) of the template that made the prompt.
//
// The server gives every call its id (tool_calls::NewToolCallId) in the call's first delta, the one
// that names it, so streamed and whole answers agree and ids a model writes are not trusted.
// finish_reason is "tool_calls" when the answer made a call and ended on its own (EOS or a stop
// string); an answer cut by max_tokens stays "length", with what was received of the call.
// Not thread-safe: one per choice.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/tool_calls/output_parser.h"

namespace radixserve::api {

class ChatOutput {
 public:
  ChatOutput(tool_calls::ToolCallFamily family, bool starts_in_reasoning);

  // The next piece of generated text; returns what became certain, with ids on new calls.
  tool_calls::OutputDelta Feed(std::string_view text);
  // The end of the output (cut_by_length: max_tokens ended it); the rest held back.
  tool_calls::OutputDelta Finish(bool cut_by_length);

  // Everything so far, assembled (after Finish: the whole message).
  const tool_calls::ParsedOutput& message() const { return message_; }
  bool made_calls() const { return !message_.tool_calls.empty(); }

 private:
  tool_calls::OutputDelta Number(tool_calls::OutputDelta delta);

  tool_calls::ToolCallFamily family_;
  std::unique_ptr<tool_calls::OutputParser> parser_;
  tool_calls::ParsedOutput message_;
};

// message: {"role": "assistant", "content": text or null (calls and no text), "reasoning_content"
// (when there is some), "tool_calls" (when there are some)}.
nlohmann::json ChatMessageJson(const tool_calls::ParsedOutput& message);
// A stream delta: "content", "reasoning_content" and "tool_calls" (index, then id, type and
// function.name in a call's first delta, function.arguments fragments) where non-empty.
nlohmann::json ChatDeltaJson(const tool_calls::OutputDelta& delta);

}  // namespace radixserve::api
