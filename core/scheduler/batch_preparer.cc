#include "core/scheduler/batch_preparer.h"

#include <glog/logging.h>

#include <algorithm>

namespace radixserve::sched {

void BatchPreparer::EnsureAvailable(int64_t need, PrefixCache* cache) {
  if (alloc_->available_size() < need) cache->Evict(need - alloc_->available_size());
}

void BatchPreparer::Emit(Req& r, int32_t prefix_len, int32_t extend_len, const int32_t* slots, bool sample,
                         ForwardBatch* fb) {
  std::span<const int32_t> row = pool_->Row(r.req_pool_idx);
  ForwardReq f;
  f.rid = r.rid;
  f.row = r.req_pool_idx;
  f.sync_begin = std::min(r.worker_synced_len, prefix_len);
  f.prefix_offset = static_cast<int32_t>(fb->prefix_slots.size());
  fb->prefix_slots.insert(fb->prefix_slots.end(), row.begin() + f.sync_begin, row.begin() + prefix_len);
  f.prefix_len = prefix_len;
  f.extend_len = extend_len;
  f.token_offset = static_cast<int32_t>(fb->input_ids.size());
  f.sample = sample;
  f.return_logprob = r.spec.return_logprob;
  f.top_logprobs_num = r.spec.top_logprobs_num;
  f.sampling = r.spec.sampling;
  if (sample && !r.worker_state) {  // the worker creates the request's state at its first sampled step
    f.new_state = true;
    r.worker_state = true;
    f.history_offset = static_cast<int32_t>(fb->history_ids.size());
    // Penalties count the whole history; a grammar replays the output a resumed request made.
    if (r.spec.sampling.has_penalties() || r.spec.grammar.active()) {
      const int32_t n = std::min(prefix_len, r.seq_len());
      fb->history_ids.insert(fb->history_ids.end(), r.tokens.begin(), r.tokens.begin() + n);
      f.history_len = n;
      f.output_begin = r.input_len;
    }
    if (r.spec.grammar.active()) {
      f.grammar_kind = r.spec.grammar.kind;
      f.grammar_offset = static_cast<int32_t>(fb->grammar_text.size());
      f.grammar_len = static_cast<int32_t>(r.spec.grammar.text.size());
      fb->grammar_text.insert(fb->grammar_text.end(), r.spec.grammar.text.begin(), r.spec.grammar.text.end());
    }
  }
  for (int32_t p = prefix_len; p < prefix_len + extend_len; ++p)
    fb->input_ids.push_back(p < r.seq_len() ? r.tokens[p] : kFutureToken);
  fb->out_cache_loc.insert(fb->out_cache_loc.end(), slots, slots + extend_len);
  fb->reqs.push_back(f);
  r.worker_synced_len = prefix_len + extend_len;
}

Status BatchPreparer::PrepareForExtend(std::span<Req* const> reqs, PrefixCache* cache, ForwardBatch* fb) {
  prefix_lens_.clear();
  seq_lens_.clear();
  last_locs_.clear();
  slots_.clear();
  int64_t extend_tokens = 0;
  for (Req* r : reqs) {
    if (r->req_pool_idx < 0) {
      r->req_pool_idx = pool_->Alloc();
      if (r->req_pool_idx < 0) return Status::ResourceExhausted("no free req_to_token row for a new request");
      std::span<int32_t> row = pool_->Row(r->req_pool_idx);
      std::copy(r->prefix_indices.begin(), r->prefix_indices.end(), row.begin());
      r->worker_synced_len = 0;
      r->kv_len = static_cast<int32_t>(r->prefix_indices.size());
    }
    CHECK_EQ(r->extend_begin, r->kv_len) << "extend must start where the row's KV ends";
    prefix_lens_.push_back(r->extend_begin);
    seq_lens_.push_back(r->extend_end);
    last_locs_.push_back(r->extend_begin > 0 ? pool_->Row(r->req_pool_idx)[r->extend_begin - 1] : -1);
    extend_tokens += r->extend_end - r->extend_begin;
  }
  const int32_t P = alloc_->page_size();
  EnsureAvailable(extend_tokens + (P > 1 ? static_cast<int64_t>(reqs.size()) * P : 0), cache);
  if (!alloc_->AllocExtend(prefix_lens_, seq_lens_, last_locs_, &slots_))
    return Status::ResourceExhausted("Prefill out of memory: " + std::to_string(extend_tokens) +
                                     " KV slots needed, " + std::to_string(alloc_->available_size()) + " free");
  size_t off = 0;
  for (Req* r : reqs) {
    const int32_t n = r->extend_end - r->extend_begin;
    std::span<int32_t> row = pool_->Row(r->req_pool_idx);
    std::copy(slots_.begin() + off, slots_.begin() + off + n, row.begin() + r->extend_begin);
    r->kv_len = r->extend_end;
    Emit(*r, r->extend_begin, n, slots_.data() + off, r->extend_end >= r->seq_len(), fb);
    off += n;
  }
  return Status::Ok();
}

Status BatchPreparer::PrepareForDecode(std::span<Req* const> reqs, PrefixCache* cache, ForwardBatch* fb) {
  seq_lens_.clear();
  last_locs_.clear();
  slots_.clear();
  const int32_t P = alloc_->page_size();
  int64_t need = 0;
  for (Req* r : reqs) {
    seq_lens_.push_back(r->kv_len + 1);
    last_locs_.push_back(pool_->Row(r->req_pool_idx)[r->kv_len - 1]);
    need += (r->kv_len % P == 0) ? P : 0;
  }
  EnsureAvailable(need, cache);
  if (!alloc_->AllocDecode(seq_lens_, last_locs_, &slots_))
    return Status::ResourceExhausted("Decode out of memory: " + std::to_string(need) + " KV slots needed, " +
                                     std::to_string(alloc_->available_size()) + " free");
  for (size_t i = 0; i < reqs.size(); ++i) {
    Req& r = *reqs[i];
    const int32_t pos = r.kv_len;
    CHECK_LT(pos, pool_->max_context_len()) << "request outgrew its req_to_token row";
    pool_->Row(r.req_pool_idx)[pos] = slots_[i];
    r.kv_len = pos + 1;
    Emit(r, pos, 1, &slots_[i], true, fb);
  }
  return Status::Ok();
}

}  // namespace radixserve::sched
