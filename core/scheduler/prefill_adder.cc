#include "core/scheduler/prefill_adder.h"

#include <algorithm>

#include "core/scheduler/worker.h"

namespace radixserve::sched {

PrefillAdder::PrefillAdder(const PrefillAdderOptions& opt, PrefixCache* cache, const KvAllocator* alloc,
                           std::span<Req* const> running, std::vector<Req*>* can_run_list)
    : opt_(opt), cache_(cache), alloc_(alloc), can_run_(can_run_list), running_(running) {
  const int64_t mixed = opt.mixed_decode_tokens;
  rem_input_tokens_ = opt.max_prefill_tokens - mixed;
  rem_chunk_tokens_ = chunking() ? opt.chunked_prefill_size - mixed : 0;
  total_offset_ = static_cast<double>(mixed);
  cur_offset_ = mixed;
  for (const Req* r : running) {
    int64_t left = std::min<int64_t>(std::max(r->max_new_tokens() - r->output_len(), 0), opt.clip_max_new_tokens);
    total_offset_ += static_cast<double>(left) * opt.new_token_ratio;
  }
  can_run_->clear();
}

int64_t PrefillAdder::rem_total_tokens() const {
  return static_cast<int64_t>(static_cast<double>(alloc_->available_size() + cache_->evictable_size()) - total_offset_);
}

int64_t PrefillAdder::cur_rem_tokens() const {
  return alloc_->available_size() + cache_->evictable_size() - cur_offset_;
}

void PrefillAdder::ReleaseRunningReservation(const Req& r) {
  int64_t left = std::min<int64_t>(std::max(r.max_new_tokens() - r.output_len(), 0), opt_.clip_max_new_tokens);
  total_offset_ -= static_cast<double>(left) * opt_.new_token_ratio;
}

void PrefillAdder::UpdateBudget(int64_t extend, int64_t max_new) {
  const int64_t e = CeilPage(extend);
  total_offset_ += static_cast<double>(e + max_new);
  cur_offset_ += e;
  rem_input_tokens_ -= e;
  if (chunking()) rem_chunk_tokens_ -= e;
}

AddReqResult PrefillAdder::BudgetState() const {
  if (rem_total_tokens() <= 0 || cur_rem_tokens() <= 0) return AddReqResult::kNoToken;
  if (rem_input_tokens_ <= 0 || (chunking() && rem_chunk_tokens_ <= 0)) return AddReqResult::kOther;
  return AddReqResult::kContinue;
}

int64_t PrefillAdder::ChunkRoom() const {
  if (opt_.per_req_chunk_cap <= 0) return rem_chunk_tokens_;
  const int64_t cap = std::max<int64_t>(PageFloor(opt_.per_req_chunk_cap, opt_.page_size), opt_.page_size);
  return std::min<int64_t>(rem_chunk_tokens_, cap);
}

Req* PrefillAdder::AddChunkedReq(Req* req) {
  const int64_t P = opt_.page_size;
  const int64_t uncapped = std::min<int64_t>(rem_chunk_tokens_, rem_total_tokens());
  int64_t rem = std::min<int64_t>(ChunkRoom(), uncapped);
  if (opt_.chunked_req_limit >= 0) rem = std::min<int64_t>(rem, opt_.chunked_req_limit);
  chunk_capped_ = rem < uncapped && req->extend_end - static_cast<int64_t>(req->prefix_indices.size()) > rem;
  const int64_t prefix = static_cast<int64_t>(req->prefix_indices.size());
  const int64_t cand = req->extend_end - prefix;
  const bool truncated = cand > rem;
  int64_t n = truncated ? PageFloor(prefix + rem, P) - prefix : cand;  // keep chunk ends page-aligned
  if (n <= 0) {  // no budget this pass; the request stays chunked with nothing new to compute
    req->extend_begin = req->extend_end = static_cast<int32_t>(prefix);
    chunk_pending_ = true;
    return req;
  }
  req->extend_begin = static_cast<int32_t>(prefix);
  req->extend_end = static_cast<int32_t>(prefix + n);
  can_run_->push_back(req);
  const int64_t max_new =
      std::min<int64_t>(std::max(req->max_new_tokens() - req->output_len(), 0), opt_.clip_max_new_tokens);
  UpdateBudget(n, truncated ? 0 : max_new);
  chunk_pending_ = truncated;
  return truncated ? req : nullptr;
}

bool PrefillAdder::IgnoreEosSimulationFits(const Req& cand, int64_t extend) {
  sim_.clear();
  auto add = [&](const Req& r) {
    const double ratio = r.spec.sampling.ignore_eos ? 1.0 : opt_.new_token_ratio;
    const int64_t max_new = std::min<int64_t>(r.max_new_tokens(), opt_.clip_max_new_tokens);
    sim_.emplace_back(static_cast<double>(max_new) * ratio - r.output_len(), r.seq_len());
  };
  for (const Req* r : running_) add(*r);
  for (const Req* r : *can_run_) add(*r);
  add(cand);
  std::sort(sim_.begin(), sim_.end());
  const double base = static_cast<double>(cur_rem_tokens() - CeilPage(extend));
  double freed = 0;
  const int64_t n = static_cast<int64_t>(sim_.size());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t bs = n - i;
    const double min_free = base + freed - sim_[i].first * static_cast<double>(bs);
    if (min_free <= static_cast<double>(opt_.ignore_eos_reserve_tokens) * static_cast<double>(bs)) return false;
    freed += static_cast<double>(sim_[i].second);
  }
  return true;
}

AddReqResult PrefillAdder::AddOneReq(Req* req) {
  const int64_t P = opt_.page_size;
  const int64_t max_new =
      std::min<int64_t>(std::max(req->max_new_tokens() - req->output_len(), 0), opt_.clip_max_new_tokens);
  const int64_t prefix = static_cast<int64_t>(req->prefix_indices.size());
  const int64_t extend = req->extend_end - prefix;
  const int64_t total_tokens = extend + max_new + opt_.per_req_token_overhead;

  // Lock the matched prefix while judging the fit, so it is not counted as evictable.
  cache_->IncLockRef(req->last_node);
  AddReqResult verdict = AddReqResult::kContinue;
  // The grammar a request's first sampled step carries counts against the batch's message budget.
  const int64_t grammar_bytes = req->spec.grammar.active() && !req->worker_state ? req->spec.grammar.text.size() : 0;
  // So do the prefix slots its worker row lacks and the history its first sampled step carries
  // (batch_preparer.cc Emit).
  const bool carries_history = !req->worker_state && (req->spec.sampling.has_penalties() || req->spec.grammar.active());
  const int64_t prefix_ids = prefix - std::min<int64_t>(req->worker_synced_len, prefix) +
                             (carries_history ? std::min<int64_t>(prefix, req->seq_len()) : 0);
  if (total_tokens >= rem_total_tokens()) {
    verdict = AddReqResult::kNoToken;
  } else if (grammar_bytes > 0 && !can_run_->empty() &&
             grammar_bytes_ + grammar_bytes > static_cast<int64_t>(kMaxBatchGrammarBytes)) {
    verdict = AddReqResult::kOther;
  } else if (prefix_ids > 0 && !can_run_->empty() && prefix_ids_ + prefix_ids > kMaxBatchPrefixIds) {
    verdict = AddReqResult::kOther;
  } else if (req->spec.sampling.ignore_eos && !cache_->shares_prefixes() && !IgnoreEosSimulationFits(*req, extend)) {
    verdict = AddReqResult::kNoToken;
  } else if (!chunking() && !can_run_->empty() && CeilPage(extend) >= rem_input_tokens_) {
    verdict = AddReqResult::kOther;
  } else if (!chunking() || CeilPage(extend) <= ChunkRoom()) {
    req->extend_begin = static_cast<int32_t>(prefix);
    cache_->IncLockRef(req->last_node);  // held until the request is released
    can_run_->push_back(req);
    UpdateBudget(extend, max_new);
  } else {
    // Start chunked prefill: as much as the chunk budget allows, ending on a page boundary.
    int64_t trunc = PageFloor(ChunkRoom(), P);
    trunc = PageFloor(prefix + trunc, P) - prefix;
    if (chunk_pending_ || new_chunked_req_ != nullptr) {  // at most one chunked request at a time
      verdict = opt_.skip_when_chunk_busy ? AddReqResult::kSkip : AddReqResult::kOther;
    } else if (trunc <= 0) {
      verdict = AddReqResult::kOther;
    } else {
      req->extend_begin = static_cast<int32_t>(prefix);
      req->extend_end = static_cast<int32_t>(prefix + trunc);
      cache_->IncLockRef(req->last_node);
      can_run_->push_back(req);
      new_chunked_req_ = req;
      UpdateBudget(trunc, 0);  // no output reserve while chunking
    }
  }
  cache_->DecLockRef(req->last_node);
  if (verdict != AddReqResult::kContinue) return verdict;
  grammar_bytes_ += grammar_bytes;
  prefix_ids_ += prefix_ids;
  return BudgetState();
}

}  // namespace radixserve::sched
