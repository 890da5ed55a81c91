#include "plugins/policy/routing_key/routing_key_policy.h"

#include <algorithm>

namespace radixserve::sched {

void RoutingKeyPolicy::Order(std::span<const RequestView> queue, const OrderContext& ctx, std::vector<int32_t>* order) {
  FcfsOrder(queue.size(), order);
  ++orders_;
  running_keys_.clear();
  for (const RequestView r : ctx.running)
    if (!r.routing_key().empty()) ++running_keys_[r.routing_key()];
  if (running_keys_.empty()) return;
  count_.assign(queue.size(), 0);
  for (size_t i = 0; i < queue.size(); ++i) {
    const std::string_view key = queue[i].routing_key();
    if (key.empty()) continue;
    auto it = running_keys_.find(key);
    if (it != running_keys_.end()) {
      count_[i] = it->second;
      ++grouped_;
    }
  }
  std::stable_sort(order->begin(), order->end(), [&](int32_t a, int32_t b) {
    if ((count_[a] > 0) != (count_[b] > 0)) return count_[a] > 0;
    if (count_[a] == 0) return false;  // neither key runs: queue order
    if (count_[a] != count_[b]) return count_[a] > count_[b];
    return queue[a].routing_key() < queue[b].routing_key();
  });
}

std::string RoutingKeyPolicy::StatsJson() const {
  return "{\"orders\": " + std::to_string(orders_) + ", \"grouped\": " + std::to_string(grouped_) + "}";
}

Result<std::unique_ptr<SchedulePolicy>> MakeRoutingKeyPolicy(const Params&) {
  return std::unique_ptr<SchedulePolicy>(new RoutingKeyPolicy());
}

}  // namespace radixserve::sched
