// ChunkCache: the `chunk` cache (SCHEDULER_SPEC 6.8): no sharing, so it holds
// nothing: the CacheAdapter keeps a request's own KV across the chunks of a
// chunked prefill and frees it when the request ends. Locks and eviction are
// no-ops; nothing is evictable.
// Thread-safety: none needed (no state).
#pragma once

#include "core/scheduler/prefix_cache.h"

namespace radixserve::sched {

class ChunkCache final : public PrefixCache {
 public:
  std::string_view name() const override { return "chunk"; }
  bool shares_prefixes() const override { return false; }
  void Attach(const PrefixCacheContext&) override {}
  CacheNodeRef MatchPrefix(const CacheKey&, std::vector<int32_t>*) override { return nullptr; }
  int32_t Insert(const CacheKey&, std::span<const int32_t>, int64_t) override { return 0; }
  void IncLockRef(CacheNodeRef) override {}
  void DecLockRef(CacheNodeRef) override {}
  int64_t Evict(int64_t) override { return 0; }
  int64_t evictable_size() const override { return 0; }
  int64_t protected_size() const override { return 0; }
  Status Reset() override { return Status::Ok(); }
  int32_t PeekMatch(const CacheKey&, CacheNodeRef* node) const override {
    if (node) *node = nullptr;
    return 0;
  }
};

}  // namespace radixserve::sched
