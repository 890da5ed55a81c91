// Plugin entry point of the `cache-aware` routing policy.
#include "core/scheduler/plugin_entry.h"
#include "plugins/routing/cache_aware/cache_aware_policy.h"

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_ROUTING, radixserve::router::RoutingPolicy, "cache-aware",
                         "the data-parallel group caching the longest prefix, balanced against load",
                         radixserve::router::kCacheAwareParams, radixserve::router::kNumCacheAwareParams,
                         radixserve::router::MakeCacheAwarePolicy)
