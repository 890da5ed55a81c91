// Req: one generation request and its scheduling state (SCHEDULER_SPEC 7.1).
// Lifecycle: waiting → prefill (possibly several chunks) → running/decode →
// finished; or retracted back to waiting (keeping its output, recomputed on
// resume); or aborted. Token ids are stored once as prompt followed by output
// (`tokens`), so "fill ids" are a prefix of it and never copied.
// Not thread-safe: owned by the scheduler thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/request/request_spec.h"
#include "core/scheduler/cache_node.h"
#include "core/util/finish_reason.h"

namespace radixserve::sched {

enum class ReqState : uint8_t { kWaiting, kPrefill, kRunning, kFinished };

struct Req {
  // ---- set at arrival ----
  uint64_t rid = 0;
  std::vector<int32_t> tokens;  // prompt followed by output ids
  int32_t input_len = 0;
  // What the client asked (sampling, stops, logprobs, priority, routing key, cache salt, grammar),
  // as it arrived; RequestTable clips max_new_tokens and top_logprobs_num to what can be served.
  RequestSpec spec;
  int32_t stop_str_max_len = 0;  // longest stop string, in tokens (upper bound)
  uint64_t arrival_seq = 0;     // wait-queue entry order (FCFS key, ties)
  double wait_entry_time = 0;   // seconds, monotonic (the scheduler's clock) at arrival
  double start_time = 0;        // seconds, monotonic, at first admission; 0 until then
  // The scheduler's prefill-token counter when the request arrived (HRRN's wait, in work done).
  int64_t arrival_processed_tokens = 0;

  // ---- scheduling state ----
  ReqState state = ReqState::kWaiting;
  int32_t req_pool_idx = -1;
  std::vector<int32_t> prefix_indices;  // KV slots of the matched / already-computed prefix
  CacheNodeRef last_node = nullptr;     // locked while admitted
  int32_t cache_protected_len = 0;      // leading KV slots owned by the prefix cache
  int32_t extend_begin = 0;             // this round computes tokens [extend_begin, extend_end)
  int32_t extend_end = 0;
  int32_t kv_len = 0;                   // row positions [0, kv_len) hold allocated slots
  int32_t worker_synced_len = 0;        // row positions the worker's mirror already has right
  bool worker_state = false;            // the worker holds this request's state (sent new_state, not released)
  bool context_sent = false;            // the detokenizer got the prompt tail (first output message)
  int32_t inflight_chunks = 0;          // chunks whose sampled token must be discarded
  int32_t num_matched_prefix_tokens = 0;
  int32_t cached_tokens = 0;            // prompt tokens served from cache (reporting)
  int32_t retraction_count = 0;
  uint32_t epoch = 0;                   // bumped on retract/abort: in-flight results for older epochs are dropped
  int32_t inflight_batches = 0;         // batches referencing this Req whose results are pending
  bool is_retracted = false;
  bool to_abort = false;
  std::string abort_message;
  int32_t abort_status = 400;  // HTTP status of a to_abort finish (503 for timeouts)
  FinishReason finish;
  bool finished_output = false;  // final output already streamed (overlap guard)
  int32_t sent_output_len = 0;   // output tokens already streamed
  std::vector<float> output_logprobs;
  std::vector<int32_t> output_top_ids;       // spec.top_logprobs_num per generated token
  std::vector<float> output_top_logprobs;

  int32_t output_len() const { return static_cast<int32_t>(tokens.size()) - input_len; }
  int32_t seq_len() const { return static_cast<int32_t>(tokens.size()); }
  std::span<const int32_t> input_ids() const { return {tokens.data(), static_cast<size_t>(input_len)}; }
  std::span<const int32_t> output_ids() const {
    return {tokens.data() + input_len, static_cast<size_t>(output_len())};
  }
  std::span<const int32_t> fill_ids() const { return {tokens.data(), static_cast<size_t>(extend_end)}; }
  int32_t extend_len() const { return extend_end - extend_begin; }
  bool finished() const { return finish.finished(); }
  int32_t max_new_tokens() const { return spec.sampling.max_new_tokens; }

  // Computes the next round's fill range: everything not yet computed (prompt + output).
  void InitNextRoundInput() { extend_end = seq_len(); }
  // Clears admission state for a recompute on resume; output is kept.
  void ResetForRetract();
};

}  // namespace radixserve::sched
