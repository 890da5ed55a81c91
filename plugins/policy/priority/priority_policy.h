// `priority`: priority scheduling (SCHEDULER_SPEC 2.4). Orders by
// (priority * sign, wait-queue entry); a request without a priority is the
// least important. Answers the queue-cap victim question and whether a
// running request may be preempted (priority gap above a threshold).
// Thread-compatible.
#pragma once

#include <memory>

#include "core/scheduler/params.h"
#include "core/scheduler/policy.h"

namespace radixserve::sched {

extern const RsParamSpec kPriorityParams[];
extern const uint32_t kNumPriorityParams;

class PriorityPolicy final : public SchedulePolicy {
 public:
  PriorityPolicy(bool low_values_first, bool preemption, int64_t preemption_threshold)
      : sign_(low_values_first ? 1 : -1), preemption_(preemption), threshold_(preemption_threshold) {}
  std::string_view name() const override { return "priority"; }
  void Order(std::span<const RequestView> queue, const OrderContext& ctx, std::vector<int32_t>* order) override;
  int32_t ChooseQueueVictim(std::span<const RequestView> queue, RequestView incoming) const override;
  bool preemption_enabled() const override { return preemption_; }
  bool MayPreempt(RequestView incoming, RequestView running) const override;
  bool PreemptBefore(RequestView a, RequestView b) const override;

  // Smaller is more important: priority * sign, missing priority the least important.
  int64_t Key(RequestView r) const;

 private:
  int64_t sign_;
  bool preemption_;
  int64_t threshold_;
};

Result<std::unique_ptr<SchedulePolicy>> MakePriorityPolicy(const Params& params);

}  // namespace radixserve::sched
