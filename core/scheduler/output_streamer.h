// OutputStreamer: streaming output batching of SCHEDULER_SPEC 7.4. After each
// processed batch it decides per request whether to emit (finished once;
// streaming every stream_interval tokens, first token immediately, holding
// back a possible stop-string prefix; non-streaming every 50 tokens) and sends
// all of them as one BatchTokenIdOut. Not thread-safe.
#pragma once

#include <functional>
#include <vector>

#include "core/scheduler/finish_checker.h"
#include "core/scheduler/req.h"

namespace radixserve::sched {

// Prompt tokens the detokenizer decodes before a request's first output, so that the first text
// joins the prompt as a tokenizer would join it (SGLang's INIT_INCREMENTAL_DETOKENIZATION_OFFSET).
inline constexpr int32_t kDetokenizerContextTokens = 5;

struct TokenOutput {
  uint64_t rid = 0;
  std::vector<int32_t> output_ids;  // new output ids since the previous message
  // A request's first message only: its last prompt tokens (at most kDetokenizerContextTokens).
  std::vector<int32_t> prompt_tail;
  bool skip_special_tokens = true;
  std::vector<float> output_logprobs;
  int32_t top_n = 0;                      // alternatives per token in top_ids / top_logprobs
  std::vector<int32_t> top_ids;
  std::vector<float> top_logprobs;
  bool finished = false;
  FinishReason finish;
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  int32_t cached_tokens = 0;
  int32_t retraction_count = 0;
};

// One message to the detokenizer: every request that should output in one step.
struct BatchTokenIdOut {
  std::vector<TokenOutput> outputs;
};

using OutputSink = std::function<void(const BatchTokenIdOut&)>;

class OutputStreamer {
 public:
  OutputStreamer(int32_t stream_interval, int32_t force_stream_interval, const FinishChecker* checker)
      : stream_interval_(stream_interval), force_interval_(force_stream_interval), checker_(checker) {}
  // Adds req's pending output to the message if it should output now.
  void Consider(Req& req);
  // Sends the collected message (if any) and starts a new one.
  void Flush(const OutputSink& sink);

 private:
  int32_t stream_interval_;
  int32_t force_interval_;
  const FinishChecker* checker_;
  BatchTokenIdOut msg_;
  size_t used_ = 0;  // entries of msg_.outputs in use (kept allocated between steps)
};

}  // namespace radixserve::sched
