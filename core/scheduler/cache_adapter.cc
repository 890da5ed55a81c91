#include "core/scheduler/cache_adapter.h"

#include <glog/logging.h>

#include <algorithm>

#include "core/scheduler/paging.h"

namespace radixserve::sched {

void CacheAdapter::CacheFinishedReq(PrefixCache& cache, Req& req, bool insert) {
  std::span<int32_t> row = pool_->Row(req.req_pool_idx);
  if (cache.shares_prefixes()) {
    // The last sampled token has no KV yet; what the cache may own is page-aligned.
    const int32_t committed = std::max(0, std::min(req.kv_len, req.seq_len() - 1));
    const int32_t aligned = static_cast<int32_t>(PageFloor(committed, page_));
    const int32_t prot = std::min(req.cache_protected_len, aligned);
    if (insert) {
      // The cache takes the slots of tokens it did not have; ours of those it had are duplicates.
      // A request without a priority inserts at 0 (a cache node's default priority).
      const CacheKey key(std::span<const int32_t>(req.tokens.data(), aligned), req.spec.cache_salt);
      const int32_t had = cache.Insert(key, row.first(aligned), req.spec.priority.value_or(0));
      if (had > prot) Free(row.subspan(prot, had - prot));
    } else if (aligned > prot) {
      Free(row.subspan(prot, aligned - prot));
    }
    // The tail the cache does not own: the unaligned remainder and over-allocation (overlap mode).
    const int32_t owned_end = std::max(aligned, req.cache_protected_len);
    if (req.kv_len > owned_end) Free(row.subspan(owned_end, req.kv_len - owned_end));
    if (req.last_node != nullptr) cache.DecLockRef(req.last_node);
  } else if (req.kv_len > 0) {
    Free(row.first(req.kv_len));  // a cache that keeps nothing: every slot goes back
  }
  req.last_node = nullptr;
  req.kv_len = 0;
  req.cache_protected_len = 0;
  req.prefix_indices.clear();
}

void CacheAdapter::CacheUnfinishedReq(PrefixCache& cache, Req& req) {
  std::span<int32_t> row = pool_->Row(req.req_pool_idx);
  const int32_t fill = req.extend_end;
  if (!cache.shares_prefixes()) {
    req.prefix_indices.assign(row.begin(), row.begin() + fill);
    return;
  }
  const int32_t aligned = static_cast<int32_t>(PageFloor(fill, page_));
  const int32_t prot = req.cache_protected_len;
  const CacheKey keys(std::span<const int32_t>(req.tokens.data(), aligned), req.spec.cache_salt);
  const int32_t had = cache.Insert(keys, row.first(aligned), req.spec.priority.value_or(0));
  if (had > prot) Free(row.subspan(prot, had - prot));
  match_scratch_.clear();
  CacheNodeRef new_last = cache.MatchPrefix(keys, &match_scratch_);
  CHECK_EQ(static_cast<int32_t>(match_scratch_.size()), aligned) << cache.name() << " lost what was just inserted";
  if (had > prot) {
    // Point the row at the cache's copies of the tokens just found duplicated; the worker's mirror
    // of the row is stale from there.
    std::copy(match_scratch_.begin() + prot, match_scratch_.begin() + had, row.begin() + prot);
    req.worker_synced_len = std::min(req.worker_synced_len, prot);
  }
  req.cache_protected_len = aligned;
  cache.IncLockRef(new_last);
  if (req.last_node != nullptr) cache.DecLockRef(req.last_node);
  req.last_node = new_last;
  req.prefix_indices.assign(row.begin(), row.begin() + fill);
}

}  // namespace radixserve::sched
