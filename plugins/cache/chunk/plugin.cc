// Plugin entry point of the `chunk` cache.
#include "core/scheduler/plugin_entry.h"
#include "plugins/cache/chunk/chunk_cache.h"

namespace {
radixserve::Result<std::unique_ptr<radixserve::sched::PrefixCache>> MakeChunkCache(const radixserve::sched::Params&) {
  return std::unique_ptr<radixserve::sched::PrefixCache>(new radixserve::sched::ChunkCache());
}
}  // namespace

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_CACHE, radixserve::sched::PrefixCache, "chunk",
                         "no prefix sharing; frees KV when a request ends", nullptr, 0, MakeChunkCache)
