// BatchPreparer: turns a ScheduleBatch into a ForwardBatch (SCHEDULER_SPEC
// 5.3 prepare_for_extend / prepare_for_decode): allocates req_to_token rows
// and KV slots (evicting from the cache first when short), writes the rows,
// and appends to the ForwardBatch only what the worker's mirror lacks, and a
// request's state record (new_state, penalty history) at its first sampled step.
// Scratch vectors are reused. Not thread-safe.
#pragma once

#include <vector>

#include "core/scheduler/kv_allocator.h"
#include "core/scheduler/prefix_cache.h"
#include "core/scheduler/req_to_token_pool.h"
#include "core/scheduler/schedule_batch.h"
#include "core/scheduler/worker.h"
#include "core/util/status.h"

namespace radixserve::sched {

class BatchPreparer {
 public:
  BatchPreparer(ReqToTokenPool* pool, KvAllocator* allocator) : pool_(pool), alloc_(allocator) {}

  // Each request computes tokens [extend_begin, extend_end); new requests get a row and their
  // prefix_indices written into it. Appends to *fb.
  Status PrepareForExtend(std::span<Req* const> reqs, PrefixCache* cache, ForwardBatch* fb);
  // One new position (kv_len) per request. Appends to *fb.
  Status PrepareForDecode(std::span<Req* const> reqs, PrefixCache* cache, ForwardBatch* fb);

 private:
  void EnsureAvailable(int64_t need, PrefixCache* cache);
  void Emit(Req& r, int32_t prefix_len, int32_t extend_len, const int32_t* slots, bool sample, ForwardBatch* fb);

  ReqToTokenPool* pool_;
  KvAllocator* alloc_;
  std::vector<int32_t> prefix_lens_, seq_lens_, last_locs_, slots_;
};

}  // namespace radixserve::sched
