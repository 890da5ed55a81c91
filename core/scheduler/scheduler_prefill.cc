// The prefill pass (SCHEDULER_SPEC 1.4 step 6; admission 3, preemption 2.4,
// mixed chunks 1.5, fair chunked prefill): which waiting requests join the
// next prefill plan, and the plan itself.
#include "core/scheduler/scheduler.h"

#include <glog/logging.h>

#include <algorithm>
#include <string>

#include "core/scheduler/paging.h"

namespace radixserve::sched {

// Fair prefill shares a pass only while a short request (one fair_prefill_chunk holds) waits
// behind a longer one; otherwise long prompts take whole chunks, as without it.
bool Scheduler::ShortPrefillWaiting() const {
  constexpr size_t kScan = 128;  // bounds the matching cost of a long queue
  const size_t n = std::min(waiting_.size(), kScan);
  bool short_one = false, long_one = chunked_req_ != nullptr;
  for (size_t i = 0; i < n && !(short_one && long_one); ++i) {
    const RequestView r(waiting_[i]);
    const int32_t match = cache_->shares_prefixes() ? cache_->PeekMatchLength(MatchKeyOf(r)) : 0;
    if (UncachedPrefillWork(r, match) <= config_.fair_prefill_chunk) short_one = true; else long_one = true;
  }
  return short_one && long_one;
}

void Scheduler::InitNextRoundInput(Req* r) {
  r->InitNextRoundInput();
  r->prefix_indices.clear();
  // At least one token is recomputed so the forward produces logits.
  const CacheKey key(std::span<const int32_t>(r->tokens.data(), r->extend_end - 1), r->spec.cache_salt);
  r->last_node = cache_->MatchPrefix(key, &r->prefix_indices);
  r->num_matched_prefix_tokens = static_cast<int32_t>(r->prefix_indices.size());
}

Status Scheduler::GetNewBatchPrefill(Plan* plan, ScheduleBatch** out) {
  if (policy_.preemption_enabled()) running_.batch_is_full = false;
  if ((running_.batch_is_full || waiting_.empty() || swaps_.draining()) && chunked_req_ == nullptr) return Status::Ok();
  const int32_t running_bs = static_cast<int32_t>(running_.size());
  auto allocatable = [&] {
    return std::min(config_.max_running_requests - running_bs, pool_->available_size());
  };
  if (allocatable() <= 0 && chunked_req_ == nullptr && !policy_.preemption_enabled()) {
    running_.batch_is_full = true;
    return Status::Ok();
  }

  // Order the waiting queue (the policy sees a read-only view and a const cache).
  if (!swaps_.draining() && !waiting_.empty()) {
    policy_.Order(&waiting_, running_.reqs, MakeOrderContext(), cache_.get());
    stats_.policy_faults = policy_.faults();
  }

  PrefillAdderOptions opt;
  opt.page_size = config_.page_size;
  opt.max_prefill_tokens = config_.max_prefill_tokens;
  opt.chunked_prefill_size = config_.chunked_prefill_size;
  const bool mixed = config_.enable_mixed_chunk && config_.chunked_prefill_size > 0;
  opt.mixed_decode_tokens = mixed ? running_bs : 0;
  opt.clip_max_new_tokens = config_.clip_max_new_tokens;
  opt.per_req_token_overhead = config_.per_req_token_overhead;
  opt.new_token_ratio = ratio_.value();
  const bool waiters = !swaps_.draining() && !waiting_.empty();
  if (config_.fair_prefill_chunk > 0 && waiters && ShortPrefillWaiting()) {
    opt.per_req_chunk_cap = config_.fair_prefill_chunk;
    opt.skip_when_chunk_busy = true;
  }
  const bool chunking = config_.chunked_prefill_size > 0;
  if (chunked_req_ != nullptr && chunking && waiters) {
    const int64_t budget = config_.chunked_prefill_size - opt.mixed_decode_tokens;
    opt.chunked_req_limit = policy_.ChunkedReqLimit(*chunked_req_, waiting_, running_.reqs, MakeOrderContext(), budget);
  }
  PrefillAdder adder(opt, cache_.get(), alloc_.get(), running_.reqs, &can_run_);
  preempted_.clear();

  if (chunked_req_ != nullptr) {
    chunked_req_->InitNextRoundInput();
    chunked_req_ = adder.AddChunkedReq(chunked_req_);
    if (adder.chunk_capped()) ++stats_.chunk_caps;
  }
  if (!swaps_.draining()) {
    for (Req* r : waiting_) {
      if (static_cast<int32_t>(can_run_.size()) >= allocatable()) running_.batch_is_full = true;
      InitNextRoundInput(r);
      if (running_.batch_is_full) {
        if (!(policy_.preemption_enabled() && PreemptToSchedule(r, &adder))) break;
      }
      AddReqResult res = adder.AddOneReq(r);
      if (res == AddReqResult::kSkip) {  // fair prefill: a chunk is busy, shorter ones behind may fit
        ++stats_.fair_skips;
        continue;
      }
      if (res != AddReqResult::kContinue) {
        if (res == AddReqResult::kNoToken) running_.batch_is_full = true;
        break;
      }
    }
  }
  if (can_run_.empty()) {
    for (Req* p : preempted_) waiting_.push_back(p);
    return Status::Ok();
  }
  // The admitted ones leave the queue (fair prefill may have passed over some, so they need not be
  // a prefix of it); everything else in it is waiting.
  const bool timeouts_on = config_.running_timeout_s > 0;
  const double now = timeouts_on ? now_() : 0;
  for (Req* r : can_run_)
    if (r->req_pool_idx < 0) r->state = ReqState::kPrefill;
  waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(),
                                [](const Req* r) { return r->state != ReqState::kWaiting; }),
                 waiting_.end());
  for (Req* p : preempted_) waiting_.push_back(p);
  if (adder.new_chunked_req() != nullptr) chunked_req_ = adder.new_chunked_req();
  for (Req* r : can_run_) {
    if (r->start_time == 0) r->start_time = timeouts_on ? now : 1;  // nonzero: has run
    SaltStats* salt = r->spec.cache_salt.empty() ? nullptr : &requests_.StatsOfSalt(r->spec.cache_salt);
    if (r->req_pool_idx < 0) {
      r->cache_protected_len = static_cast<int32_t>(r->prefix_indices.size());
      r->cached_tokens = std::max(r->cached_tokens, r->cache_protected_len);
      stats_.cached_prompt_tokens += r->cache_protected_len;
      if (salt) salt->cached_prompt_tokens += r->cache_protected_len;
      r->is_retracted = false;
      r->state = ReqState::kPrefill;
    }
    stats_.computed_prompt_tokens += r->extend_len();
    if (salt) salt->computed_prompt_tokens += r->extend_len();
    processed_prefill_tokens_ += r->extend_len();
  }

  prefill_.Clear();
  prefill_.reqs.assign(can_run_.begin(), can_run_.end());
  prefill_.mode = ForwardMode::kExtend;
  RS_RETURN_IF_ERROR(preparer_.PrepareForExtend(prefill_.reqs, cache_.get(), &plan->batch));
  RecordEntries(prefill_.reqs, /*decode=*/false, plan);

  // Mixed chunked prefill (SCHEDULER_SPEC 1.5): running requests decode inside this batch.
  bool logprobs = false;
  for (Req* r : prefill_.reqs) logprobs |= r->spec.return_logprob;
  for (Req* r : running_.reqs) logprobs |= r->spec.return_logprob;
  if (mixed && !running_.empty() && !logprobs) {
    running_.Filter();
    if (!running_.empty() && decode_mem_.Check(running_.reqs, cache_.get())) {
      RS_RETURN_IF_ERROR(preparer_.PrepareForDecode(running_.reqs, cache_.get(), &plan->batch));
      RecordEntries(running_.reqs, /*decode=*/true, plan);
      prefill_.decoding_reqs.assign(running_.reqs.begin(), running_.reqs.end());
      prefill_.reqs.insert(prefill_.reqs.end(), running_.reqs.begin(), running_.reqs.end());
      prefill_.mode = ForwardMode::kMixed;
      running_.Clear();
    }
  }
  *out = &prefill_;
  return Status::Ok();
}

// SCHEDULER_SPEC 2.4 preempt_to_schedule.
bool Scheduler::PreemptToSchedule(Req* req, PrefillAdder* adder) {
  const std::vector<Req*>& victims = policy_.PreemptionCandidates(running_.reqs, *req);
  const int64_t clip = adder->clip();
  double need = static_cast<double>(req->extend_end - static_cast<int64_t>(req->prefix_indices.size()) +
                                    std::min<int64_t>(req->max_new_tokens(), clip)) -
                static_cast<double>(adder->rem_total_tokens());
  size_t picked = 0;
  for (Req* rr : victims) {
    ++picked;
    need -= static_cast<double>(std::min<int64_t>(rr->max_new_tokens() - rr->output_len(), clip)) *
            adder->new_token_ratio();
    need -= static_cast<double>(rr->kv_len - rr->cache_protected_len);  // its private KV comes back
    if (need <= 0) break;
  }
  if (picked == 0 || need > 0) return false;
  for (size_t i = 0; i < picked; ++i) {
    Req* rr = victims[i];
    adder->ReleaseRunningReservation(*rr);
    ReleaseForRetract(rr);
    preempted_.push_back(rr);
    running_.reqs.erase(std::find(running_.reqs.begin(), running_.reqs.end(), rr));
  }
  stats_.preemptions += static_cast<int64_t>(picked);
  running_.batch_is_full = false;
  return true;
}

}  // namespace radixserve::sched
