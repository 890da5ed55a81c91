#include "plugins/routing/round_robin/round_robin_policy.h"

namespace radixserve::router {
namespace {

class RoundRobin final : public RoutingPolicy {
 public:
  std::string_view name() const override { return "round-robin"; }
  int32_t Route(const RouteKey&, std::span<const GroupLoad> groups, const GroupCacheView&) override {
    const int32_t n = static_cast<int32_t>(groups.size());
    for (int32_t k = 0; k < n; ++k) {
      const int32_t g = static_cast<int32_t>((next_ + k) % n);
      if (groups[g].healthy) {
        next_ = g + 1;
        return g;
      }
    }
    return -1;
  }

 private:
  uint64_t next_ = 0;
};

}  // namespace

std::unique_ptr<RoutingPolicy> MakeRoundRobin() { return std::make_unique<RoundRobin>(); }
Result<std::unique_ptr<RoutingPolicy>> MakeRoundRobinPolicy(const sched::Params&) { return MakeRoundRobin(); }

}  // namespace radixserve::router
