// Worker: what the scheduler needs from a model worker (ARCHITECTURE 2, 3).
// A ForwardBatch carries only what changed since the worker last saw each
// request: the slots of new tokens (out_cache_loc) and, for a new or resumed
// request (or one whose row was repointed at shared slots), the prefix slot
// ids once. The worker keeps a mirror of the req-to-token rows. It maps 1:1 to
// a fixed-layout message (flat arrays + per-request offsets).
// Implementations are called from one thread at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "core/grammar/grammar_spec.h"
#include "core/sampling/sampling_params.h"
#include "core/util/status.h"

namespace radixserve::sched {

enum class ForwardMode : uint8_t { kIdle = 0, kExtend, kDecode, kMixed };

// Input id placeholder for a token the worker sampled but the scheduler has not seen yet
// (overlap mode): the worker substitutes the last token it sampled for that row.
inline constexpr int32_t kFutureToken = -1;

struct ForwardReq {
  uint64_t rid = 0;
  int32_t row = 0;          // req_to_token row index (the mirror's row)
  int32_t sync_begin = 0;   // row[sync_begin, prefix_len) = prefix_slots[prefix_offset ...]
  int32_t prefix_offset = 0;
  int32_t prefix_len = 0;   // positions [0, prefix_len) already have KV
  int32_t extend_len = 0;   // new tokens at positions [prefix_len, prefix_len + extend_len)
  int32_t token_offset = 0; // into input_ids and out_cache_loc
  bool sample = true;       // false for a non-final chunk (its token is discarded anyway)
  bool return_logprob = false;
  int32_t top_logprobs_num = 0;  // alternatives wanted per generated token (<= 20)
  // The request's first sampled step for this worker: create its state here. Its penalty history
  // is history_ids[history_offset, + history_len) (the tokens before prefix_len, which this worker
  // may never have seen as inputs: a cached prefix) followed by this step's inputs.
  bool new_state = false;
  int32_t history_offset = 0;
  int32_t history_len = 0;
  // A new_state request's grammar: its kind and text at grammar_text[grammar_offset, + grammar_len).
  // Its matcher is fed the tokens from output_begin on of (history, this step's inputs): the
  // output a retracted request generated before it resumes here. -1 when no history is sent.
  grammar::GrammarKind grammar_kind = grammar::GrammarKind::kNone;
  int32_t grammar_offset = 0;
  int32_t grammar_len = 0;
  int32_t output_begin = -1;
  SamplingParams sampling;
};

// The grammar text one prefill batch may carry for its new requests: admission stops adding
// constrained requests past it (the first is always admitted), and RouDi's chunk sizing counts
// it (plus one more grammar: a chunked request's last chunk is not admitted again).
inline constexpr size_t kMaxBatchGrammarBytes = 96u << 10;

// The prefix ids one prefill batch may carry for its new requests: the radix-cached prefix slots
// the worker's request row lacks, and the token history of requests with penalties or a grammar.
// Admission stops adding such requests past it (the first is always admitted), so that RouDi's
// chunks are sized for this, not for max_running_requests full contexts (65,536 ids: 256 KiB).
inline constexpr int64_t kMaxBatchPrefixIds = int64_t{64} << 10;

struct ForwardBatch {
  uint64_t batch_id = 0;
  ForwardMode mode = ForwardMode::kIdle;
  std::vector<ForwardReq> reqs;
  std::vector<int32_t> input_ids;      // Σ extend_len
  std::vector<int32_t> out_cache_loc;  // Σ extend_len, slot per new token
  std::vector<int32_t> prefix_slots;   // row patches for requests that need them
  std::vector<int32_t> history_ids;    // penalty histories of new_state requests
  std::vector<char> grammar_text;      // grammars of new_state requests, back to back
  std::vector<uint64_t> released_rids; // drop these requests' states after this step (none is in reqs)

  void Clear() {
    reqs.clear();
    input_ids.clear();
    out_cache_loc.clear();
    prefix_slots.clear();
    history_ids.clear();
    grammar_text.clear();
    released_rids.clear();
    mode = ForwardMode::kIdle;
  }
};

struct ForwardResult {
  uint64_t batch_id = 0;
  std::vector<int32_t> next_token_ids;  // one per request, in batch order
  std::vector<float> logprobs;          // empty, or one per request
  // top_n alternatives per request (ids and logprobs, best first; id -1 pads a request that asked
  // for fewer). top_n is the most any request of the batch asked for; 0 when none did.
  int32_t top_n = 0;
  std::vector<int32_t> top_ids;
  std::vector<float> top_logprobs;
  // Per-request states the worker still holds after this step (-1: not reported). The scheduler
  // sends its last releases before it goes idle, so at idle this is 0; anything else is a leak.
  int32_t request_states = -1;
};

class Worker {
 public:
  virtual ~Worker() = default;
  // Runs one forward step and samples. Batches arrive in order and are run in that order.
  virtual Status Forward(const ForwardBatch& batch, ForwardResult* result) = 0;
  // Request states held now (created, not yet released); -1 when the worker does not count them.
  virtual int32_t request_states() const { return -1; }

  // Pipeline stages: how many batches the worker runs at once (one per stage). A worker deeper
  // than 1 also takes batches without waiting for their results: Send hands one over, Receive
  // waits for the result of the oldest one sent and not yet received (Forward is the two in a
  // row). Send is called from one thread and Receive from another; each from one at a time.
  virtual int pipeline_depth() const { return 1; }
  virtual Status Send(const ForwardBatch& batch) {
    (void)batch;
    return Status::Unsupported("this worker runs one batch at a time (pipeline depth 1)");
  }
  virtual Status Receive(const ForwardBatch& batch, ForwardResult* result) {
    (void)batch;
    (void)result;
    return Status::Unsupported("this worker runs one batch at a time (pipeline depth 1)");
  }
};

}  // namespace radixserve::sched
