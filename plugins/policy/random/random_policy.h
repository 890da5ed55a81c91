// `random`: a seeded shuffle of the queue. Holds its generator: one instance per thread.
#pragma once

#include <algorithm>
#include <memory>
#include <random>

#include "core/scheduler/params.h"
#include "core/scheduler/policy.h"

namespace radixserve::sched {

inline const RsParamSpec kRandomParams[] = {
    {"seed", RS_PARAM_INT, "0", 0, 9.2e18, "shuffle seed"},
};

class RandomPolicy final : public SchedulePolicy {
 public:
  explicit RandomPolicy(uint64_t seed) : rng_(seed) {}
  std::string_view name() const override { return "random"; }
  void Order(std::span<const RequestView> queue, const OrderContext&, std::vector<int32_t>* order) override {
    FcfsOrder(queue.size(), order);
    std::shuffle(order->begin(), order->end(), rng_);
  }

 private:
  std::mt19937_64 rng_;
};

inline Result<std::unique_ptr<SchedulePolicy>> MakeRandomPolicy(const Params& p) {
  return std::unique_ptr<SchedulePolicy>(new RandomPolicy(static_cast<uint64_t>(p.GetInt("seed"))));
}

}  // namespace radixserve::sched
