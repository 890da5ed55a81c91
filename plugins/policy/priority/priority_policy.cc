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

int64_t PriorityPolicy::Key(RequestView r) const {
  if (!r.has_priority()) return INT64_MAX;
  return r.priority() * sign_;
}

void PriorityPolicy::Order(std::span<const RequestView> queue, const OrderContext&, std::vector<int32_t>* order) {
  FcfsOrder(queue.size(), order);
  std::stable_sort(order->begin(), order->end(), [&](int32_t a, int32_t b) {
    int64_t ka = Key(queue[a]), kb = Key(queue[b]);
    if (ka != kb) return ka < kb;
    return queue[a].arrival_seq() < queue[b].arrival_seq();
  });
}

int32_t PriorityPolicy::ChooseQueueVictim(std::span<const RequestView> queue, RequestView incoming) const {
  // Least preferred: largest key, newest on ties.
  int32_t victim = -1;
  for (int32_t i = 0; i < static_cast<int32_t>(queue.size()); ++i) {
    if (victim < 0) { victim = i; continue; }
    const RequestView a = queue[i], v = queue[victim];
    if (Key(a) > Key(v) || (Key(a) == Key(v) && a.arrival_seq() > v.arrival_seq())) victim = i;
  }
  if (victim >= 0 && Key(incoming) < Key(queue[victim])) return victim;
  return -1;
}

bool PriorityPolicy::MayPreempt(RequestView incoming, RequestView running) const {
  if (!preemption_) return false;
  // Gap measured in importance units: positive when incoming is more important.
  __int128 gap = static_cast<__int128>(Key(running)) - Key(incoming);
  return gap > threshold_;
}

bool PriorityPolicy::PreemptBefore(RequestView a, RequestView b) const {
  // Least important first, newest first among equals.
  if (Key(a) != Key(b)) return Key(a) > Key(b);
  return a.arrival_seq() > b.arrival_seq();
}

Result<std::unique_ptr<SchedulePolicy>> MakePriorityPolicy(const Params& p) {
  return std::unique_ptr<SchedulePolicy>(
      new PriorityPolicy(p.GetBool("low_values_first"), p.GetBool("preemption"), p.GetInt("preemption_threshold")));
}

}  // namespace radixserve::sched
