#include "plugins/routing/shortest_queue/shortest_queue_policy.h"

namespace radixserve::router {
namespace {

class ShortestQueue final : public RoutingPolicy {
 public:
  std::string_view name() const override { return "shortest-queue"; }
  int32_t Route(const RouteKey&, std::span<const GroupLoad> groups, const GroupCacheView&) override {
    return ShortestHealthy(groups);
  }
};

}  // namespace

std::unique_ptr<RoutingPolicy> MakeShortestQueue() { return std::make_unique<ShortestQueue>(); }
Result<std::unique_ptr<RoutingPolicy>> MakeShortestQueuePolicy(const sched::Params&) { return MakeShortestQueue(); }

}  // namespace radixserve::router
