// Scheduler::CheckInvariants: the memory and bookkeeping invariants, apart from
// the decisions they check. Every KV slot is free, cached (evictable or
// locked) or held by exactly one request; every req_to_token row in use
// belongs to a request; at idle nothing is locked and nothing is held.
#include "core/scheduler/paging.h"
#include "core/scheduler/scheduler.h"

#include <string>

namespace radixserve::sched {

Status Scheduler::CheckInvariants() const {
  RS_RETURN_IF_ERROR(cache_->SelfCheck());
  const int64_t P = config_.page_size;
  int64_t held = 0, rows = 0;
  for (const auto& [rid, r] : requests_.live()) {
    if (r->req_pool_idx < 0) continue;
    ++rows;
    held += PageCeil(r->kv_len, P) - r->cache_protected_len;
  }
  const int64_t total = alloc_->available_size() + cache_->evictable_size() + cache_->protected_size() + held;
  if (total != alloc_->size())
    return Status::Internal("KV accounting: free " + std::to_string(alloc_->available_size()) + " + evictable " +
                            std::to_string(cache_->evictable_size()) + " + protected " +
                            std::to_string(cache_->protected_size()) + " + held by requests " +
                            std::to_string(held) + " != total " + std::to_string(alloc_->size()));
  if (pool_->size() - pool_->available_size() != rows)
    return Status::Internal("req_to_token rows in use " + std::to_string(pool_->size() - pool_->available_size()) +
                            " but " + std::to_string(rows) + " requests hold one");
  if (idle()) {
    if (cache_->protected_size() != 0)
      return Status::Internal("token_to_kv_pool_allocator memory leak detected! protected " +
                              std::to_string(cache_->protected_size()) + " tokens while idle");
    if (alloc_->available_size() + cache_->evictable_size() != alloc_->size()) {
      std::string who;
      for (const auto& [rid, r] : requests_.live())
        if (r->req_pool_idx >= 0)
          who += " rid " + std::to_string(rid) + " (state " + std::to_string(static_cast<int>(r->state)) +
                 ", kv_len " + std::to_string(r->kv_len) + ", finished " + std::to_string(r->finished()) +
                 ", inflight " + std::to_string(r->inflight_batches) + ")";
      return Status::Internal("token_to_kv_pool_allocator memory leak detected! free + evictable != total;" +
                              (who.empty() ? std::string(" no request holds a row") : " still holding a row:" + who));
    }
    if (pool_->available_size() != pool_->size()) return Status::Internal("req_to_token_pool leak while idle");
  }
  return Status::Ok();
}

}  // namespace radixserve::sched
