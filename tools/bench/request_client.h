// Sends one streamed generation request and times it.
//
// Backend kRadixserve uses the native POST /generate (token ids or text);
// kOpenAI uses POST /v1/completions with a text prompt, as any
// OpenAI-compatible engine (e.g. llama.cpp's server) accepts. Each SSE event
// is timed on arrival: the first one carrying tokens gives TTFT, the later
// ones inter-token latencies (an event with k tokens counts k gaps of 1/k of
// its delay). Thread-safe: SendRequest shares nothing between calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tools/bench/http_client.h"

namespace radixserve::bench {

enum class Backend { kRadixserve, kOpenAI };

struct ClientOptions {
  HttpEndpoint endpoint;
  Backend backend = Backend::kRadixserve;
  std::string model;    // OpenAI "model"; omitted when empty
  std::string api_key;  // sent as a bearer token when set
  int timeout_ms = 3600 * 1000;
  bool ignore_eos = true;
  double temperature = 0.0;  // greedy
};

struct PromptInput {
  std::vector<int32_t> ids;  // used when use_ids
  std::string text;
  bool use_ids = false;
  int32_t output_len = 1;
  int32_t expected_prompt_len = 0;  // used for throughput when the server reports no usage
};

struct RequestOutcome {
  FailureKind failure = FailureKind::kNone;
  int http_status = 0;
  std::string error;
  double start_s = 0;    // when it was sent, seconds from the run's start (set by the runner)
  double ttft_s = 0;
  double latency_s = 0;
  std::vector<double> itl_s;
  int32_t prompt_tokens = 0;  // from the server's usage fields (else the expected length)
  int32_t output_tokens = 0;
  int32_t cached_tokens = -1;  // -1: the server did not say
  std::string output_text;     // the generated text (carried into the next turn of a conversation)
  bool ok() const { return failure == FailureKind::kNone; }
};

// Interprets the SSE events of one response. Thread-compatible.
class StreamAccumulator {
 public:
  using Clock = std::chrono::steady_clock;
  StreamAccumulator(Backend backend, Clock::time_point start) : backend_(backend), start_(start) {}

  void OnEvent(std::string_view data, Clock::time_point now);
  // Fills the timing and token fields of *out (and a failure when the stream said so or had no tokens).
  void Finish(Clock::time_point now, RequestOutcome* out);

  bool failed() const { return failure_ != FailureKind::kNone; }

 private:
  void OnTokens(int32_t k, Clock::time_point now);
  void Failed(FailureKind kind, int status, std::string error);

  Backend backend_;
  Clock::time_point start_;
  Clock::time_point last_token_{};
  bool have_first_ = false;
  double ttft_s_ = 0;
  std::vector<double> itl_s_;
  int32_t tokens_seen_ = 0;      // tokens counted from events
  int32_t usage_prompt_ = -1;    // from the server's counters, when sent
  int32_t usage_completion_ = -1;
  int32_t usage_cached_ = -1;
  std::string text_;
  FailureKind failure_ = FailureKind::kNone;
  int failure_status_ = 0;
  std::string error_;
};

// The JSON body for one request.
std::string BuildRequestBody(const ClientOptions& options, const PromptInput& prompt);

RequestOutcome SendRequest(const ClientOptions& options, const PromptInput& prompt);

}  // namespace radixserve::bench
