// CacheAdapter: the request side of prefix caching (SCHEDULER_SPEC 6.3, 6.4),
// the same for every cache plugin: which of a request's KV slots are published
// to the cache and which are freed, where the request's lock sits, and when
// its req_to_token row is repointed at the cache's copies of tokens it
// computed twice. A cache plugin is only a key -> KV-slot index with locks
// (PrefixCache); the SGLang semantics of caching requests live here, once.
// Not thread-safe: scheduler thread only.
#pragma once

#include <cstdint>
#include <vector>

#include "core/scheduler/kv_allocator.h"
#include "core/scheduler/prefix_cache.h"
#include "core/scheduler/req.h"
#include "core/scheduler/req_to_token_pool.h"

namespace radixserve::sched {

// A cache's context bound to `alloc`: its evictions free slots there.
inline PrefixCacheContext CacheContextOf(KvAllocator* alloc, int32_t page_size, CacheEventSink* events = nullptr) {
  PrefixCacheContext ctx;
  ctx.slots.free = [alloc](std::span<const int32_t> slots) { alloc->Free(slots); };
  ctx.slots.is_free = [alloc](int32_t slot) { return alloc->IsSlotFree(slot); };
  ctx.page_size = page_size;
  ctx.events = events;
  return ctx;
}

class CacheAdapter {
 public:
  CacheAdapter(KvAllocator* allocator, ReqToTokenPool* req_to_token, int32_t page_size)
      : alloc_(allocator), pool_(req_to_token), page_(page_size) {}

  // A request ends (insert = true: publish its KV) or is aborted/retracted (insert = false):
  // frees the slots the cache does not keep and unlocks last_node. The row is the caller's to free.
  void CacheFinishedReq(PrefixCache& cache, Req& req, bool insert);
  // After a prefill (or a chunk): publishes the computed fill ids, moves the lock down to the new
  // last node, sets prefix_indices / cache_protected_len, and repoints the row at shared slots.
  void CacheUnfinishedReq(PrefixCache& cache, Req& req);

 private:
  void Free(std::span<const int32_t> slots) {
    if (!slots.empty()) alloc_->Free(slots);
  }

  KvAllocator* alloc_;
  ReqToTokenPool* pool_;
  int32_t page_;
  std::vector<int32_t> match_scratch_;
};

}  // namespace radixserve::sched
