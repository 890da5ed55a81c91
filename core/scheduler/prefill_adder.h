// PrefillAdder: admission control for one prefill batch (SCHEDULER_SPEC 3.3
// - 3.6). Tracks the future-aware KV budget (rem_total_tokens), this batch's
// KV budget, the compute budget (rem_input_tokens) and the chunk budget, and
// admits requests whole or starts chunking the one that does not fit.
// Built fresh per prefill attempt (cheap; vectors are borrowed). Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "core/scheduler/kv_allocator.h"
#include "core/scheduler/paging.h"
#include "core/scheduler/prefix_cache.h"
#include "core/scheduler/req.h"
#include "core/scheduler/scheduler_config.h"

namespace radixserve::sched {

// kSkip (only with skip_when_chunk_busy): this request would need a chunk while another is being
// chunked; later, shorter requests may still be admitted.
enum class AddReqResult { kContinue, kNoToken, kOther, kSkip };

// The defaults shared with the served configuration come from SchedulerConfig (their one owner).
struct PrefillAdderOptions {
  int32_t page_size = SchedulerConfig{}.page_size;
  int32_t max_prefill_tokens = SchedulerConfig{}.max_prefill_tokens;
  int32_t chunked_prefill_size = SchedulerConfig{}.chunked_prefill_size;  // <= 0: chunking disabled
  int32_t mixed_decode_tokens = 0;
  int32_t clip_max_new_tokens = SchedulerConfig{}.clip_max_new_tokens;
  int32_t per_req_token_overhead = 0;
  double new_token_ratio = SchedulerConfig{}.init_new_token_ratio;
  int32_t ignore_eos_reserve_tokens = 1;  // SCHEDULER_SPEC 3.7, used only without prefix sharing
  // The policy's cap on the continuing chunk (SchedulePolicy::ChunkedReqLimit); -1: none.
  int64_t chunked_req_limit = -1;
  // Fair chunked prefill: no request takes more than this many tokens of the chunk budget (page
  // rounded, at least a page); longer ones are chunked. 0: off.
  int32_t per_req_chunk_cap = 0;
  bool skip_when_chunk_busy = false;  // answer kSkip instead of kOther (see AddReqResult)
};

class PrefillAdder {
 public:
  // running: the current running batch (its expected growth is reserved).
  PrefillAdder(const PrefillAdderOptions& opt, PrefixCache* cache, const KvAllocator* alloc,
               std::span<Req* const> running, std::vector<Req*>* can_run_list);

  // Continues the in-flight chunked request; returns it while still chunked, nullptr on its last chunk.
  Req* AddChunkedReq(Req* req);
  // req.prefix_indices / last_node must hold its fresh match (InitNextRoundInput done).
  AddReqResult AddOneReq(Req* req);
  Req* new_chunked_req() const { return new_chunked_req_; }
  // The continuing chunk was made shorter by chunked_req_limit or per_req_chunk_cap.
  bool chunk_capped() const { return chunk_capped_; }

  // Frees budget held for a preempted running request (its remaining-output reservation).
  void ReleaseRunningReservation(const Req& r);
  int64_t rem_total_tokens() const;
  int64_t cur_rem_tokens() const;
  int64_t rem_input_tokens() const { return rem_input_tokens_; }
  int64_t rem_chunk_tokens() const { return rem_chunk_tokens_; }
  double new_token_ratio() const { return opt_.new_token_ratio; }
  int32_t clip() const { return opt_.clip_max_new_tokens; }
  AddReqResult BudgetState() const;

 private:
  bool chunking() const { return opt_.chunked_prefill_size > 0; }
  // What one request may take of the chunk budget now: rem_chunk_tokens, under the fair cap.
  int64_t ChunkRoom() const;
  int64_t CeilPage(int64_t x) const { return PageCeil(x, opt_.page_size); }
  void UpdateBudget(int64_t extend, int64_t max_new);
  // SCHEDULER_SPEC 3.7: will memory survive every request decoding to the end?
  bool IgnoreEosSimulationFits(const Req& req, int64_t extend);

  PrefillAdderOptions opt_;
  PrefixCache* cache_;
  const KvAllocator* alloc_;
  std::vector<Req*>* can_run_;
  std::span<Req* const> running_;
  std::vector<std::pair<double, int64_t>> sim_;  // (tokens_left, tokens_occupied)
  Req* new_chunked_req_ = nullptr;
  bool chunk_pending_ = false;
  bool chunk_capped_ = false;  // the in-flight chunked request still has tokens left
  double total_offset_ = 0;
  int64_t cur_offset_ = 0;
  int64_t rem_input_tokens_ = 0;
  int64_t grammar_bytes_ = 0;  // grammar text the batch's new requests carry (kMaxBatchGrammarBytes)
  int64_t prefix_ids_ = 0;     // prefix slots and history the batch's new requests carry (kMaxBatchPrefixIds)
  int64_t rem_chunk_tokens_ = 0;
};

}  // namespace radixserve::sched
