#include "plugins/cache/chunk/chunk_cache.h"

namespace radixserve::sched {

void ChunkCache::CacheFinishedReq(Req& req, bool) {
  std::span<int32_t> row = ctx_.req_to_token->Row(req.req_pool_idx);
  if (req.kv_len > 0) ctx_.allocator->Free(row.first(req.kv_len));
  req.kv_len = 0;
  req.cache_protected_len = 0;
  req.prefix_indices.clear();
  req.last_node = nullptr;
}

void ChunkCache::CacheUnfinishedReq(Req& req) {
  std::span<int32_t> row = ctx_.req_to_token->Row(req.req_pool_idx);
  req.prefix_indices.assign(row.begin(), row.begin() + req.extend_end);
}

}  // namespace radixserve::sched
