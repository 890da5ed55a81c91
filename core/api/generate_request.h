// GenerateRequest: one validated generation request, whatever endpoint it
// came from (/v1/completions, /v1/chat/completions, /generate).
//
// The parser fills the input (text, chat messages or token ids) and the
// options; the HTTP server then renders chat messages, tokenizes, checks the
// length against the context and hands one request per choice (n > 1:
// rids "<rid>-<i>") to the backend. Plain value type, thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/api/priority_class.h"
#include "core/grammar/grammar.h"
#include "core/request/request_spec.h"
#include "core/tool_calls/family.h"

namespace radixserve::api {

enum class Endpoint { kCompletions, kChatCompletions, kGenerate };

// A call an earlier assistant turn made (OpenAI's message.tool_calls[i]), as the chat template sees
// it: arguments as the JSON value the client's string holds, keys in the order written.
struct ChatToolCall {
  std::string id;
  std::string name;
  nlohmann::ordered_json arguments;
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant" or "tool"
  std::string content;
  bool content_null = false;  // an assistant turn that only called tools (content absent or null)
  std::vector<ChatToolCall> tool_calls;  // assistant only
  std::string tool_call_id;              // tool only: the call this message answers
  std::string name;                      // optional "name" of the message ("" when absent)
};

// tool_choice: whether the model may, must or must not call a tool, and which ones.
struct ToolChoice {
  enum class Mode : uint8_t {
    kAuto,      // free text or calls ("auto"; the default with tools)
    kNone,      // no calls ("none"; the tools are not shown to the model)
    kRequired,  // at least one call ("required", a named function, allowed_tools with mode "required")
  };
  Mode mode = Mode::kAuto;
  // The functions a call may name (a named function, allowed_tools); empty: any of the tools.
  std::vector<std::string> allowed;
};

// Limits the parser enforces; every one is a server parameter.
struct ApiLimits {
  int32_t max_n = 16;
  int32_t max_stop_strings = 16;
  int32_t max_stop_string_bytes = 256;
  int32_t max_stop_token_ids = 64;
  int32_t max_logprobs = 20;
  int32_t max_messages = 1024;
  int32_t max_tools = 128;  // "tools" entries of one request
  size_t max_body_bytes = 8u << 20;
  int32_t max_key_bytes = 256;  // cache_salt, routing_key
  // Deepest nesting of arrays/objects a body may have: nlohmann's parser is iterative, but
  // copying and dumping values recurse, so a hostile 10^5-level body must be refused first.
  int32_t max_json_depth = 64;
  // Caps on a structured-output constraint: its text size (a larger one is a 400), and what
  // validating it by compiling it once may build and spend (response_format.h). The text rides in
  // the request and forward-batch messages, so its cap keeps them in RouDi's 256 KiB chunks
  // (launch/roudi_sizing.cc); 99.5 % of the real-world schemas in ../shared/jsonschema are smaller.
  grammar::GrammarLimits grammar = ServerGrammarLimits();
  static grammar::GrammarLimits ServerGrammarLimits() {
    grammar::GrammarLimits l;
    l.max_source_bytes = 96 << 10;
    return l;
  }
};

struct GenerateRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string rid;    // user-supplied or generated; sub-requests append "-<i>"
  std::string model;  // as the client sent it ("" when absent)

  // Input: exactly one of text / messages / input_ids is given by the client.
  // After PrepareInput, input_ids always holds the prompt tokens.
  std::string text;
  std::vector<ChatMessage> messages;
  std::vector<int32_t> input_ids;
  bool has_text = false;
  bool has_input_ids = false;
  bool add_generation_prompt = true;  // chat only
  // chat only: extra variables for the model's chat template (e.g. enable_thinking); an object
  // or null.
  nlohmann::ordered_json chat_template_kwargs;
  // chat only: the request's "tools" in document order (an array of {"type": "function",
  // "function": {...}}), or null when none; tool_choice and parallel_tool_calls (tool_request.h).
  nlohmann::ordered_json tools;
  ToolChoice tool_choice;
  bool parallel_tool_calls = true;
  // chat only: the client left skip_special_tokens out (a template's call markup may be control
  // tokens, which the output parser must see, so the server keeps them: chat_request.h).
  bool skip_special_tokens_default = true;
  // Set by the server when it renders a chat prompt: how the output is read back into content,
  // reasoning and tool calls (core/tool_calls), and whether the prompt left the model reasoning.
  tool_calls::ToolCallFamily output_family = tool_calls::ToolCallFamily::kNone;
  bool output_starts_in_reasoning = false;

  // What the engine past the HTTP layer needs of each choice: sampling, stops, logprobs, the
  // structured-output constraint (validated by compiling it once: response_format.h) and the
  // scheduling fields: the priority ("priority": a class name or a number, or the X-Priority
  // header; the default class's number when none), the prefix-cache namespace ("cache_salt", or
  // the API key's; "" = shared) and the routing key ("" = none).
  RequestSpec spec;
  int32_t n = 1;
  bool include_usage = false;  // stream_options.include_usage
  PriorityClass priority_class = PriorityClass::kDefault;  // spec.priority's class (limits, metrics)
};

}  // namespace radixserve::api
