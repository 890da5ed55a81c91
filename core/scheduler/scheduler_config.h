// SchedulerConfig: every constant of SCHEDULER_SPEC sections 1-7 as a
// parameter. Its defaults are the one source of the served defaults: the
// scheduler node declares its parameters from them, and the launcher sizes
// RouDi's pools from them; where a default differs from SGLang's, the comment
// says why. Plain value type.
#pragma once

#include <cstdint>
#include <vector>

namespace radixserve::sched {

struct SchedulerConfig {
  // Memory.
  int32_t page_size = 1;
  int64_t max_total_tokens = 16384;   // KV slots (max_total_num_tokens)
  int32_t max_running_requests = 256; // also the number of req_to_token rows
  int32_t max_req_len = 4096;         // context length: prompt + output
  // Admission (SCHEDULER_SPEC 3).
  // SGLang: 16384 and 4096 (large GPUs). A CPU prefills about 1-2k tokens/s on two cores, so
  // smaller batches keep decode steps flowing between prefill chunks.
  int32_t max_prefill_tokens = 8192;
  int32_t chunked_prefill_size = 2048;  // <= 0 disables chunking
  bool enable_mixed_chunk = false;
  int32_t clip_max_new_tokens = 4096;
  int32_t per_req_token_overhead = -1;  // -1: page_size (newest SGLang)
  double init_new_token_ratio = 0.7;
  double schedule_conservativeness = 1.0;
  double min_new_token_ratio_factor = 0.14;
  int32_t new_token_ratio_decay_steps = 600;
  int32_t retract_decode_steps = 20;
  int32_t max_queued_requests = 1 << 20;
  // Fair chunked prefill: while a request of at most this many uncached tokens waits behind a
  // longer one, no request takes more than this many tokens of a pass (page-rounded): long prompts
  // advance by chunks of it, requests behind them are admitted past them, and a long prompt no
  // longer holds up short ones. 0: off (SGLang's behaviour).
  int32_t fair_prefill_chunk = 0;
  // Per-request timeouts (SCHEDULER_SPEC 1.4 step 2, SGLANG_REQ_WAITING/RUNNING_TIMEOUT); <= 0: off.
  // A request that waited longer than waiting_timeout_s without ever running ends with 503; one
  // running longer than running_timeout_s since its first admission is aborted (503).
  double waiting_timeout_s = 0;
  double running_timeout_s = 0;
  // Loops (SCHEDULER_SPEC 1).
  bool overlap = true;  // SGLang's default too (disable_overlap_schedule = false)
  bool disable_consecutive_prefill_overlap = false;
  // The worker's pipeline stages (Worker::pipeline_depth): with more than one, decode runs as
  // micro-batches of 1/depth of the running batch and mixed chunks are off. StepDriver checks it.
  int32_t pipeline_depth = 1;
  // Finishing and streaming (SCHEDULER_SPEC 7).
  std::vector<int32_t> eos_token_ids;
  int32_t vocab_size = 1 << 30;
  int32_t stream_interval = 1;
  int32_t force_stream_interval = 50;
  // Consistency checks after every iteration (tests); the idle check always runs.
  bool check_invariants_every_iteration = false;
};

}  // namespace radixserve::sched
