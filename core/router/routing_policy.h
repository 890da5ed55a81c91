// RoutingPolicy: how a data-parallel router picks the group (a scheduler with
// its own prefix cache and workers) that serves a request (issue #16). A
// policy sees the request's key, each group's load and the router's exact
// view of each group's cache (GroupCacheView), and returns a group index.
// Instances are used by one thread at a time.
//  - round-robin: groups in turn.
//  - shortest-queue: the group with the fewest requests waiting and running.
//  - cache-aware (SGLang router's rule, with an exact view): when the load is
//    unbalanced (max - min > balance_abs and max > balance_rel * min) the
//    shortest queue; otherwise the group caching (or about to cache: a prompt
//    in flight there) the longest prefix of the request if it covers more
//    than cache_threshold of it, else the group caching the fewest tokens (the
//    most room; the shorter queue among equals).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/router/group_cache_view.h"
#include "core/util/status.h"

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

struct CacheAwareOptions {
  double cache_threshold = 0.5;   // SGLang router defaults
  int64_t balance_abs = 32;
  double balance_rel = 1.0001;
};

std::unique_ptr<RoutingPolicy> MakeRoundRobin();
std::unique_ptr<RoutingPolicy> MakeShortestQueue();
std::unique_ptr<RoutingPolicy> MakeCacheAware(const CacheAwareOptions& options = {});
// The policies MakeRoutingPolicy knows, by name.
const std::vector<std::string>& RoutingPolicyNames();
// By name: round-robin, shortest-queue, cache-aware.
Result<std::unique_ptr<RoutingPolicy>> MakeRoutingPolicy(std::string_view name);

}  // namespace radixserve::router
