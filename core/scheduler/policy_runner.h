// PolicyRunner: the scheduler's side of the policy plugin (SCHEDULER_SPEC 2).
// It owns the active policy, hands it read-only views of the queue (built
// once per call into reused storage: no allocation in steady state) and checks
// what comes back: an Order() that throws or is not a permutation of the queue
// is replaced by FCFS for that pass (counted; logged once per 1000 faults), so
// a broken plugin can neither stall nor corrupt the loop. Preemption victims
// are chosen here too, in the policy's order. Scheduler thread only.
#pragma once

#include <cstdint>
#include <vector>

#include "core/scheduler/policy.h"
#include "core/scheduler/prefix_cache.h"
#include "core/scheduler/req.h"
#include "core/scheduler/request_view.h"

namespace radixserve::sched {

class PolicyRunner {
 public:
  explicit PolicyRunner(PolicyPtr policy) : policy_(std::move(policy)) {}

  // The old policy is destroyed here (call between iterations).
  void Replace(PolicyPtr policy) { policy_ = std::move(policy); }
  const SchedulePolicy& policy() const { return *policy_; }

  // Puts *waiting in the policy's admission order; `ctx.running` is set from `running`. After a
  // cache-aware pass every waiting prefix is touched in `cache` (SGLang's match refreshes LRU order).
  void Order(std::vector<Req*>* waiting, const std::vector<Req*>& running, const OrderContext& ctx,
             PrefixCache* cache);
  // The queued request to end so that `incoming` fits a full queue; -1: refuse `incoming`.
  int32_t ChooseQueueVictim(const std::vector<Req*>& waiting, const Req& incoming);
  // The policy's cap on the next chunk of `chunked` (-1: none); `waiting` is in admission order;
  // `ctx.running` is set from `running`.
  int64_t ChunkedReqLimit(const Req& chunked, const std::vector<Req*>& waiting, const std::vector<Req*>& running,
                          const OrderContext& ctx, int64_t budget);
  bool preemption_enabled() const { return policy_->preemption_enabled(); }
  // Running requests `incoming` may preempt, least important first (the unfinished ones).
  const std::vector<Req*>& PreemptionCandidates(const std::vector<Req*>& running, const Req& incoming);
  // Times Order() fell back to FCFS.
  int64_t faults() const { return faults_; }

 private:
  // The context handed to the policy: `ctx` with the running batch's views.
  OrderContext WithRunning(const OrderContext& ctx, const std::vector<Req*>& running);

  PolicyPtr policy_;
  int64_t faults_ = 0;
  // Reused scratch: the views of the last call's queue and running batch.
  std::vector<RequestView> queue_views_;
  std::vector<RequestView> running_views_;
  std::vector<int32_t> order_;
  std::vector<uint8_t> seen_;
  std::vector<Req*> sorted_;
  std::vector<Req*> victims_;
};

}  // namespace radixserve::sched
