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
#include "core/grammar/grammar_spec.h"
#include "core/sampling/sampling_params.h"

namespace radixserve::api {

enum class Endpoint { kCompletions, kChatCompletions, kGenerate };

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// Limits the parser enforces; every one is a server parameter.
struct ApiLimits {
  int32_t max_n = 16;
  int32_t max_stop_strings = 16;
  int32_t max_stop_string_bytes = 256;
  int32_t max_stop_token_ids = 64;
  int32_t max_logprobs = 20;
  int32_t max_messages = 1024;
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

  SamplingParams sampling;               // validated; sampling.logprobs = -1 when none asked
  std::vector<std::string> stop;         // stop strings
  std::vector<int32_t> stop_token_ids;
  int32_t n = 1;
  bool stream = false;
  bool include_usage = false;            // stream_options.include_usage
  bool return_logprob = false;           // logprobs of the chosen tokens
  int32_t top_logprobs = 0;              // how many alternatives per position
  // The structured-output constraint (response_format or a vLLM/SGLang extension field), already
  // validated by compiling it once; kNone when the output is free (response_format.h).
  grammar::GrammarSpec grammar;

  // Scheduling: the priority ("priority": a class name or a number, or the X-Priority header; the
  // default class's number when none), its class (limits, metrics), the prefix-cache namespace
  // ("cache_salt", or the API key's; "" = shared) and the routing key ("" = none).
  std::optional<int64_t> priority;
  PriorityClass priority_class = PriorityClass::kDefault;
  std::string cache_salt;
  std::string routing_key;
};

}  // namespace radixserve::api
