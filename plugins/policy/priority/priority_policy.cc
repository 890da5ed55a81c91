#include "plugins/policy/priority/priority_policy.h"

#include <algorithm>
#include <climits>

namespace radixserve::sched {

const RsParamSpec kPriorityParams[] = {
    {"low_values_first", RS_PARAM_BOOL, "false", 0, 0, "smaller priority value = more important"},
    {"preemption", RS_PARAM_BOOL, "true", 0, 0, "preempt running requests for more important ones"},
    {"preemption_threshold", RS_PARAM_INT, "10", 0, 9e18, "minimum priority gap to preempt"},
};
const uint32_t kNumPriorityParams = sizeof(kPriorityParams) / sizeof(kPriorityParams[0]);

int64_t PriorityPolicy::Key(const Req& r) const {
  if (!r.spec.priority) return INT64_MAX;
  return *r.spec.priority * sign_;
}

void PriorityPolicy::Order(std::span<const Req* const> queue, const OrderContext&, std::vector<int32_t>* order) {
  FcfsOrder(queue.size(), order);
  std::stable_sort(order->begin(), order->end(), [&](int32_t a, int32_t b) {
    int64_t ka = Key(*queue[a]), kb = Key(*queue[b]);
    if (ka != kb) return ka < kb;
    return queue[a]->arrival_seq < queue[b]->arrival_seq;
  });
}

int32_t PriorityPolicy::ChooseQueueVictim(std::span<const Req* const> queue, const Req& incoming) const {
  // Least preferred: largest key, newest on ties.
  int32_t victim = -1;
  for (int32_t i = 0; i < static_cast<int32_t>(queue.size()); ++i) {
    if (victim < 0) { victim = i; continue; }
    const Req& a = *queue[i];
    const Req& v = *queue[victim];
    if (Key(a) > Key(v) || (Key(a) == Key(v) && a.arrival_seq > v.arrival_seq)) victim = i;
  }
  if (victim >= 0 && Key(incoming) < Key(*queue[victim])) return victim;
  return -1;
}

bool PriorityPolicy::MayPreempt(const Req& incoming, const Req& running) const {
  if (!preemption_) return false;
  // Gap measured in importance units: positive when incoming is more important.
  __int128 gap = static_cast<__int128>(Key(running)) - Key(incoming);
  return gap > threshold_;
}

bool PriorityPolicy::PreemptBefore(const Req& a, const Req& b) const {
  // Least important first, newest first among equals.
  if (Key(a) != Key(b)) return Key(a) > Key(b);
  return a.arrival_seq > b.arrival_seq;
}

Result<std::unique_ptr<SchedulePolicy>> MakePriorityPolicy(const Params& p) {
  return std::unique_ptr<SchedulePolicy>(
      new PriorityPolicy(p.GetBool("low_values_first"), p.GetBool("preemption"), p.GetInt("preemption_threshold")));
}

}  // namespace radixserve::sched
