// `routing-key` (SCHEDULER_SPEC 13.3): requests may carry a routing key (a
// session, an adapter, a tenant); waiting requests whose key is already in
// the running batch go first, the key with the most running requests first
// (ties by key), keeping queue order within a key. Cache-agnostic: no
// fallback, no dedup. With nothing keyed running, the queue order stands.
// Departure from SGLang, decided: requests whose key is not running keep
// their queue order (SGLang sorts them by key string, so they are not FCFS).
// Holds scratch state: one instance per scheduler thread.
#pragma once

#include <memory>
#include <string_view>
#include <unordered_map>

#include "core/scheduler/params.h"
#include "core/scheduler/policy.h"

namespace radixserve::sched {

class RoutingKeyPolicy final : public SchedulePolicy {
 public:
  std::string_view name() const override { return "routing-key"; }
  void Order(std::span<const RequestView> queue, const OrderContext& ctx, std::vector<int32_t>* order) override;
  std::string StatsJson() const override;

 private:
  uint64_t orders_ = 0, grouped_ = 0;  // passes; waiting requests moved forward by a running key
  std::unordered_map<std::string_view, int32_t> running_keys_;
  std::vector<int32_t> count_;
};

Result<std::unique_ptr<SchedulePolicy>> MakeRoutingKeyPolicy(const Params& params);

}  // namespace radixserve::sched
