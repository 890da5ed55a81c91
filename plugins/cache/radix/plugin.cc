// Plugin entry point of the `radix` cache.
#include <cstdio>

#include "core/scheduler/params.h"
#include "core/scheduler/plugin_abi.h"
#include "plugins/cache/radix/radix_cache.h"

namespace {

using radixserve::sched::EvictionOrder;

const RsParamSpec kParams[] = {
    {"eviction_policy", RS_PARAM_STRING, "lru", 0, 0, "lru, lfu, fifo, mru, filo, priority or slru"},
};

void* Create(const void* p, char* err, size_t err_len) {
  const auto& params = *static_cast<const radixserve::sched::Params*>(p);
  EvictionOrder order;
  radixserve::Status s = radixserve::sched::ParseEvictionOrder(params.GetString("eviction_policy"), &order);
  if (!s.ok()) {
    std::snprintf(err, err_len, "%s", s.message().c_str());
    return nullptr;
  }
  radixserve::sched::PrefixCache* cache = new radixserve::sched::RadixCache(order);
  return cache;
}
void Destroy(void* p) { delete static_cast<radixserve::sched::PrefixCache*>(p); }

const RsPluginDescriptor kDescriptor = {RADIXSERVE_PLUGIN_ABI_VERSION, RS_PLUGIN_CACHE, "radix",
                                        "radix-tree prefix cache with unlocked-leaf eviction",
                                        kParams, sizeof(kParams) / sizeof(kParams[0]), &Create, &Destroy};

}  // namespace

RADIXSERVE_PLUGIN_EXPORT const RsPluginDescriptor* radixserve_plugin_descriptor(void) { return &kDescriptor; }
