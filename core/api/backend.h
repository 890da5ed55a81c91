// ApiBackend: the seam between the HTTP front end and the engine.
//
// The api node implements it over the transport (tokenizer in-process,
// scheduler and detokenizer over iceoryx); tests implement it with a
// deterministic fake. The HTTP server calls it from many connection threads
// at once, so every method must be thread-safe. Outputs of a submitted
// request arrive on its ResponseSink from any backend thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/api/admin_call.h"
#include "core/api/generate_request.h"
#include "core/util/finish_reason.h"
#include "core/util/status.h"

namespace radixserve::api {

// One alternative at a position (top_logprobs).
struct TopLogprob {
  int32_t token_id = 0;
  float logprob = 0.0f;
  std::string token;  // the token's bytes as text (may be a partial UTF-8 sequence)
};

// Logprob of one generated token, plus the top alternatives when asked.
struct TokenLogprob {
  int32_t token_id = 0;
  float logprob = 0.0f;
  std::string token;
  std::vector<TopLogprob> top;
};

// One incremental output of one (sub-)request. The last one has finish.kind != kNone.
struct GenerateOutput {
  std::string text_delta;                // new text since the previous output
  std::vector<int32_t> token_ids;        // new output token ids since the previous output
  std::vector<TokenLogprob> logprobs;    // one per new token id when logprobs were asked
  FinishReason finish;
  int32_t prompt_tokens = 0;             // totals so far
  int32_t completion_tokens = 0;
  int32_t cached_tokens = 0;
};

// Receives a request's outputs, in order, from a backend thread. Must not block.
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  virtual void OnOutput(GenerateOutput output) = 0;
};

class ApiBackend {
 public:
  virtual ~ApiBackend() = default;

  // False until the pipeline can serve (GET /health answers 503 meanwhile).
  virtual bool Ready() = 0;
  // The model's context length in tokens: prompts must be shorter.
  virtual int32_t ContextLength() = 0;
  // Token ids must be below this (prompts given as ids are checked); 0 when unknown.
  virtual int32_t VocabSize() { return 0; }

  // add_special_tokens: add BOS etc. as the model wants (plain prompts); chat prompts rendered by a
  // ChatTemplate already contain them, and are tokenized with add_special_tokens = false.
  virtual Result<std::vector<int32_t>> Tokenize(std::string_view text, bool add_special_tokens) = 0;
  virtual Result<std::string> Detokenize(std::span<const int32_t> ids, bool skip_special_tokens) = 0;

  // Starts one request (input_ids filled, n == 1). Outputs go to sink until a final one; an error
  // here means nothing was started and nothing will reach the sink.
  virtual Status Submit(const GenerateRequest& request, std::shared_ptr<ResponseSink> sink) = 0;
  // Stops a request early; its sink still receives a final output (kAbort) unless it had finished.
  virtual void Abort(const std::string& rid) = 0;

  // Control endpoints.
  virtual Result<std::string> ServerInfoJson() = 0;   // GET /get_server_info (a JSON object)
  virtual Result<std::string> MetricsText() = 0;      // GET /metrics (Prometheus text format)
  virtual Status FlushCache() = 0;                    // POST /flush_cache
  // Runtime control under /admin/ (nodes, parameters, policy and cache swaps, plugins), parsed by
  // the HTTP server (core/api/admin_call.h): a JSON answer.
  virtual Result<std::string> Admin(const AdminCall& call) {
    return Status::Unsupported("this server has no runtime control");
  }
};

}  // namespace radixserve::api
