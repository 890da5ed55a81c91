// Plugin entry point of the `radix` cache.
#include "core/scheduler/plugin_entry.h"
#include "plugins/cache/radix/radix_cache.h"

namespace {

const RsParamSpec kParams[] = {
    {"eviction_policy", RS_PARAM_STRING, "lru", 0, 0, "lru, lfu, fifo, mru, filo, priority or slru"},
};

radixserve::Result<std::unique_ptr<radixserve::sched::PrefixCache>> MakeRadixCache(
    const radixserve::sched::Params& params) {
  radixserve::sched::EvictionOrder order;
  RS_RETURN_IF_ERROR(radixserve::sched::ParseEvictionOrder(params.GetString("eviction_policy"), &order));
  return std::unique_ptr<radixserve::sched::PrefixCache>(new radixserve::sched::RadixCache(order));
}

}  // namespace

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_CACHE, radixserve::sched::PrefixCache, "radix",
                         "radix-tree prefix cache with unlocked-leaf eviction", kParams,
                         sizeof(kParams) / sizeof(kParams[0]), MakeRadixCache)
