#include "core/router/routing_policy.h"

#include "core/scheduler/plugin_host.h"

namespace radixserve::router {

RoutingPolicyPtr OwnRoutingPolicy(std::unique_ptr<RoutingPolicy> policy) {
  return RoutingPolicyPtr(policy.release(), [](RoutingPolicy* p) { delete p; });
}

Result<RoutingPolicyPtr> CreateRoutingPolicy(sched::PluginHost& host, const std::string& name,
                                             const std::map<std::string, std::string>& params) {
  RS_ASSIGN_OR_RETURN(sched::PluginHost::PluginObject made, host.CreateObject(RS_PLUGIN_ROUTING, name, params));
  auto destroy = std::move(made.destroy);
  return RoutingPolicyPtr(static_cast<RoutingPolicy*>(made.object), [destroy](RoutingPolicy* p) { destroy(p); });
}

int32_t ShortestHealthy(std::span<const GroupLoad> groups) {
  int32_t best = -1;
  for (int32_t g = 0; g < static_cast<int32_t>(groups.size()); ++g)
    if (groups[g].healthy && (best < 0 || groups[g].load() < groups[best].load())) best = g;
  return best;
}

}  // namespace radixserve::router
