// The `cache-aware` routing policy (SGLang router's rule, with an exact view):
// when the load is unbalanced (max - min > balance_abs and max > balance_rel *
// min) the shortest queue; otherwise the group caching (or about to cache: a
// prompt in flight there) the longest prefix of the request if it covers more
// than cache_threshold of it, else the group caching the fewest tokens (the
// most room; the shorter queue among equals).
#pragma once

#include <memory>

#include "core/router/routing_policy.h"
#include "core/scheduler/params.h"
#include "core/scheduler/plugin_abi.h"

namespace radixserve::router {

struct CacheAwareOptions {
  double cache_threshold = 0.5;   // SGLang router defaults
  int64_t balance_abs = 32;
  double balance_rel = 1.0001;
};

extern const RsParamSpec kCacheAwareParams[];
extern const uint32_t kNumCacheAwareParams;

std::unique_ptr<RoutingPolicy> MakeCacheAware(const CacheAwareOptions& options = {});
Result<std::unique_ptr<RoutingPolicy>> MakeCacheAwarePolicy(const sched::Params& params);

}  // namespace radixserve::router
