#include "core/scheduler/policy_runner.h"

#include <glog/logging.h>

#include <algorithm>
#include <exception>
#include <span>
#include <string>

namespace radixserve::sched {

namespace {
// Refills *views with views of `reqs` (its capacity is kept: no allocation once warm).
std::span<const RequestView> ViewsOf(const std::vector<Req*>& reqs, std::vector<RequestView>* views) {
  views->clear();
  for (const Req* r : reqs) views->emplace_back(r);
  return *views;
}
}  // namespace

OrderContext PolicyRunner::WithRunning(const OrderContext& ctx, const std::vector<Req*>& running) {
  OrderContext with = ctx;
  with.running = ViewsOf(running, &running_views_);
  return with;
}

void PolicyRunner::Order(std::vector<Req*>* waiting, const std::vector<Req*>& running, const OrderContext& ctx,
                         PrefixCache* cache) {
  const std::span<const RequestView> queue = ViewsOf(*waiting, &queue_views_);
  const OrderContext with_running = WithRunning(ctx, running);
  const size_t n = waiting->size();
  const char* fault = nullptr;
  std::string what;
  try {
    policy_->Order(queue, with_running, &order_);
  } catch (const std::exception& e) {
    fault = "threw";
    what = e.what();
  } catch (...) {
    fault = "threw";
    what = "a non-standard exception";
  }
  if (fault == nullptr) {
    // A permutation of [0, n): right size, every index in range and seen once.
    if (order_.size() != n) {
      fault = "returned a wrong-sized order";
      what = std::to_string(order_.size()) + " entries for " + std::to_string(n) + " waiting requests";
    } else {
      seen_.assign(n, 0);
      for (int32_t i : order_) {
        if (i < 0 || static_cast<size_t>(i) >= n || seen_[i]) {
          fault = "returned an order that is not a permutation";
          what = "index " + std::to_string(i) + (i < 0 || static_cast<size_t>(i) >= n ? " out of range" : " repeated");
          break;
        }
        seen_[i] = 1;
      }
    }
  }
  if (fault == nullptr) {
    if (policy_->matched_prefixes())
      for (const Req* r : *waiting) cache->TouchPrefix(CacheKey(r->tokens, r->spec.cache_salt));
  } else {
    ++faults_;
    // One line per fault would flood the log when a broken plugin faults every iteration.
    LOG_EVERY_N(WARNING, 1000) << "policy '" << policy_->name() << "' " << fault << " (" << what
                               << "); FCFS used for this iteration (" << faults_ << " faults so far)";
    return;  // FCFS: the queue stays as it stands
  }
  sorted_.clear();
  for (int32_t i : order_) sorted_.push_back((*waiting)[i]);
  waiting->swap(sorted_);
}

int32_t PolicyRunner::ChooseQueueVictim(const std::vector<Req*>& waiting, const Req& incoming) {
  return policy_->ChooseQueueVictim(ViewsOf(waiting, &queue_views_), RequestView(incoming));
}

int64_t PolicyRunner::ChunkedReqLimit(const Req& chunked, const std::vector<Req*>& waiting,
                                      const std::vector<Req*>& running, const OrderContext& ctx, int64_t budget) {
  return policy_->ChunkedReqLimit(RequestView(chunked), ViewsOf(waiting, &queue_views_), WithRunning(ctx, running),
                                  budget);
}

const std::vector<Req*>& PolicyRunner::PreemptionCandidates(const std::vector<Req*>& running, const Req& incoming) {
  victims_.clear();
  for (Req* r : running)
    if (!r->finished()) victims_.push_back(r);
  std::stable_sort(victims_.begin(), victims_.end(),
                   [&](const Req* a, const Req* b) { return policy_->PreemptBefore(RequestView(a), RequestView(b)); });
  // Only a prefix of that order may go: the first the policy refuses ends the candidates.
  size_t may = 0;
  while (may < victims_.size() && policy_->MayPreempt(RequestView(incoming), RequestView(victims_[may]))) ++may;
  victims_.resize(may);
  return victims_;
}

}  // namespace radixserve::sched
