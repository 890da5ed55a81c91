// Plugin entry point of the `chunk` cache.
#include <cstdio>

#include "core/scheduler/params.h"
#include "core/scheduler/plugin_abi.h"
#include "plugins/cache/chunk/chunk_cache.h"

namespace {

void* Create(const void*, char*, size_t) {
  radixserve::sched::PrefixCache* cache = new radixserve::sched::ChunkCache();
  return cache;
}
void Destroy(void* p) { delete static_cast<radixserve::sched::PrefixCache*>(p); }

const RsPluginDescriptor kDescriptor = {RADIXSERVE_PLUGIN_ABI_VERSION, RS_PLUGIN_CACHE, "chunk",
                                        "no prefix sharing; frees KV when a request ends",
                                        nullptr, 0, &Create, &Destroy};

}  // namespace

RADIXSERVE_PLUGIN_EXPORT const RsPluginDescriptor* radixserve_plugin_descriptor(void) { return &kDescriptor; }
