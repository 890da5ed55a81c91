// `fcfs`: admission in queue (arrival) order. Thread-compatible.
#pragma once

#include <memory>

#include "core/scheduler/params.h"
#include "core/scheduler/policy.h"

namespace radixserve::sched {

class FcfsPolicy final : public SchedulePolicy {
 public:
  std::string_view name() const override { return "fcfs"; }
  void Order(std::span<const Req* const> queue, const PrefixCache&, std::vector<int32_t>* order) override {
    FcfsOrder(queue.size(), order);
  }
};

inline Result<std::unique_ptr<SchedulePolicy>> MakeFcfsPolicy(const Params&) {
  return std::unique_ptr<SchedulePolicy>(new FcfsPolicy());
}

}  // namespace radixserve::sched
