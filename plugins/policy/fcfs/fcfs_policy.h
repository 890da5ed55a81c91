// `fcfs`: admission in queue (arrival) order. Thread-compatible.
#pragma once

#include <memory>

#include "core/scheduler/params.h"
#include "core/scheduler/policy.h"

namespace radixserve::sched {

class FcfsPolicy final : public SchedulePolicy {
 public:
  std::string_view name() const override { return "fcfs"; }
  void Order(std::span<const RequestView> queue, const OrderContext&, std::vector<int32_t>* order) override {
    FcfsOrder(queue.size(), order);
    ++orders_;
  }
  std::string StatsJson() const override { return "{\"orders\": " + std::to_string(orders_) + "}"; }

 private:
  uint64_t orders_ = 0;  // scheduling passes this instance ordered
};

inline Result<std::unique_ptr<SchedulePolicy>> MakeFcfsPolicy(const Params&) {
  return std::unique_ptr<SchedulePolicy>(new FcfsPolicy());
}

}  // namespace radixserve::sched
