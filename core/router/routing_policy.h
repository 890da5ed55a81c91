// RoutingPolicy: how a data-parallel router picks the group (a scheduler with
// its own prefix cache and workers) that serves a request (issue #16). A
// policy sees the request's key, each group's load and the router's exact
// view of each group's cache (GroupCacheView), and returns a group index.
// Policies are plugins (kind RS_PLUGIN_ROUTING, plugins/routing/): round-robin,
// shortest-queue and cache-aware ship with radixserve; CreateRoutingPolicy
// loads one by name. Instances are used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/router/group_cache_view.h"
#include "core/util/status.h"

namespace radixserve::sched {
class PluginHost;
}

namespace radixserve::router {

struct GroupLoad {
  int64_t waiting = 0;
  int64_t running = 0;
  bool healthy = true;  // an unhealthy group is never chosen
  // The longest prefix of the request shared with a prompt in flight there (not cached yet, but
  // about to be): a burst sharing a prefix follows its first request.
  int32_t in_flight_match = 0;
  int64_t load() const { return waiting + running; }
};

struct RouteKey {
  std::span<const int32_t> tokens;
  std::string_view cache_salt;
};

class RoutingPolicy {
 public:
  virtual ~RoutingPolicy() = default;
  virtual std::string_view name() const = 0;
  // The group for `key`, or -1 when no group is healthy.
  virtual int32_t Route(const RouteKey& key, std::span<const GroupLoad> groups, const GroupCacheView& view) = 0;
  virtual std::string StatsJson() const { return "{}"; }
};

// A policy with the deleter of the plugin that made it.
using RoutingPolicyPtr = std::unique_ptr<RoutingPolicy, std::function<void(RoutingPolicy*)>>;
RoutingPolicyPtr OwnRoutingPolicy(std::unique_ptr<RoutingPolicy> policy);
// The routing plugin `name` (libradixserve_routing_NAME.so) with its parameters checked.
Result<RoutingPolicyPtr> CreateRoutingPolicy(sched::PluginHost& host, const std::string& name,
                                             const std::map<std::string, std::string>& params = {});

// The healthy group with the least load (the first of equals), or -1.
int32_t ShortestHealthy(std::span<const GroupLoad> groups);

}  // namespace radixserve::router
