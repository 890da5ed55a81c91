// `lof`: longest output (max_new_tokens) first; stable. Thread-compatible.
#pragma once

#include <algorithm>
#include <memory>

#include "core/scheduler/params.h"
#include "core/scheduler/policy.h"

namespace radixserve::sched {

class LofPolicy final : public SchedulePolicy {
 public:
  std::string_view name() const override { return "lof"; }
  void Order(std::span<const RequestView> queue, const OrderContext&, std::vector<int32_t>* order) override {
    FcfsOrder(queue.size(), order);
    std::stable_sort(order->begin(), order->end(), [&](int32_t a, int32_t b) {
      return queue[a].max_new_tokens() > queue[b].max_new_tokens();
    });
  }
};

inline Result<std::unique_ptr<SchedulePolicy>> MakeLofPolicy(const Params&) {
  return std::unique_ptr<SchedulePolicy>(new LofPolicy());
}

}  // namespace radixserve::sched
