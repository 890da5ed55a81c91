#include "core/scheduler/request_table.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/scheduler/paging.h"

namespace radixserve::sched {

Req* RequestTable::NewReq() {
  if (free_.empty()) return storage_.emplace_back(std::make_unique<Req>()).get();
  Req* r = free_.back();
  free_.pop_back();
  std::vector<int32_t> tokens = std::move(r->tokens);
  std::vector<int32_t> prefix = std::move(r->prefix_indices);
  *r = Req();
  r->tokens = std::move(tokens);
  r->tokens.clear();
  r->prefix_indices = std::move(prefix);
  r->prefix_indices.clear();
  return r;
}

Req* RequestTable::Create(TokenizedRequest&& g, double now, int64_t processed_prefill_tokens,
                          FinishReason* refusal) {
  *refusal = FinishReason();
  Req* r = NewReq();
  r->rid = g.rid;
  r->tokens = std::move(g.input_ids);
  r->input_len = static_cast<int32_t>(r->tokens.size());
  r->spec = std::move(g.spec);
  // Derived state, and the clip of what the client asked to what is served.
  for (const auto& s : r->spec.stop_strs) r->stop_str_max_len = std::max<int32_t>(r->stop_str_max_len, s.size());
  r->spec.top_logprobs_num = r->spec.return_logprob ? std::clamp(r->spec.top_logprobs_num, 0, 20) : 0;
  r->arrival_seq = ++arrival_seq_;
  r->wait_entry_time = now;
  r->arrival_processed_tokens = processed_prefill_tokens;
  if (reqs_.count(r->rid)) {  // not indexed: the id stays the earlier request's
    *refusal = FinishReason::Abort("duplicate request id " + std::to_string(r->rid), 400);
    return r;
  }
  reqs_[r->rid] = r;
  Validate(r, refusal);
  return r;
}

// SCHEDULER_SPEC 4.3, 7.1.
bool RequestTable::Validate(Req* r, FinishReason* refusal) const {
  const SchedulerConfig& c = *config_;
  const int64_t P = c.page_size;
  const int64_t in = r->input_len;
  const int64_t limit = std::min<int64_t>(c.max_req_len - in - 1, c.max_total_tokens - PageCeil(in, P) - P - 1);
  if (in == 0) {
    *refusal = FinishReason::Abort("empty prompt", 400);
    return false;
  }
  for (int64_t i = 0; i < in; ++i) {
    const int32_t t = r->tokens[static_cast<size_t>(i)];
    if (t < 0 || t >= c.vocab_size) {  // the worker could not embed it: refuse this request alone
      *refusal = FinishReason::Abort("token id " + std::to_string(t) + " at position " + std::to_string(i) +
                                         " is outside the vocabulary [0, " + std::to_string(c.vocab_size) + ")",
                                     400);
      return false;
    }
  }
  if (limit < 1) {
    std::string why = in >= c.max_req_len - 1
                          ? "prompt of " + std::to_string(in) + " tokens leaves no room for output in the context of " +
                                std::to_string(c.max_req_len - 1) + " tokens"
                          : "prompt of " + std::to_string(in) + " tokens can never fit: the KV pool holds " +
                                std::to_string(c.max_total_tokens) + " tokens";
    *refusal = FinishReason::Abort(why, 400);
    return false;
  }
  SamplingParams& sp = r->spec.sampling;
  sp.max_new_tokens = static_cast<int32_t>(std::min<int64_t>(sp.max_new_tokens, limit));
  sp.min_new_tokens = std::min(sp.min_new_tokens, sp.max_new_tokens);
  return true;
}

Req* RequestTable::Find(uint64_t rid) const {
  auto it = reqs_.find(rid);
  return it == reqs_.end() ? nullptr : it->second;
}

void RequestTable::Reap() {
  size_t w = 0;
  for (Req* r : graveyard_) {
    if (r->inflight_batches > 0) {
      graveyard_[w++] = r;
      continue;
    }
    auto it = reqs_.find(r->rid);
    if (it != reqs_.end() && it->second == r) reqs_.erase(it);
    if (r->worker_state) pending_release_.push_back(r->rid);  // rides on the next batch
    free_.push_back(r);
  }
  graveyard_.resize(w);
}

void RequestTable::TakeReleases(size_t cap, std::vector<uint64_t>* out) {
  if (pending_release_.size() <= cap) {
    out->swap(pending_release_);
    pending_release_.clear();
    return;
  }
  out->assign(pending_release_.begin(), pending_release_.begin() + static_cast<std::ptrdiff_t>(cap));
  pending_release_.erase(pending_release_.begin(), pending_release_.begin() + static_cast<std::ptrdiff_t>(cap));
}

void RequestTable::ForgetWorkerStates() {
  for (auto& [rid, r] : reqs_) r->worker_state = false;
  pending_release_.clear();
}

int64_t RequestTable::unfinished() const {
  int64_t n = 0;
  for (const auto& [rid, r] : reqs_) n += r->finished() ? 0 : 1;
  return n;
}

int64_t RequestTable::worker_states() const {
  int64_t n = static_cast<int64_t>(pending_release_.size());
  for (const auto& [rid, r] : reqs_) n += r->worker_state ? 1 : 0;
  return n;
}

SaltStats& RequestTable::StatsOfSalt(const std::string& salt) {
  auto it = salt_stats_.find(salt);
  if (it != salt_stats_.end()) return it->second;
  // Tenants can be many; the table is bounded (one entry sums the rest).
  if (salt_stats_.size() >= kMaxTrackedSalts) return salt_stats_[kOtherSalts];
  return salt_stats_[salt];
}

}  // namespace radixserve::sched
