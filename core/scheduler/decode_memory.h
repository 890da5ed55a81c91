// DecodeMemory: the decode memory check and retraction of SCHEDULER_SPEC 4.1
// and 4.2. Check evicts from the cache first; Retract releases requests in
// the spec's victim order (fewest output tokens first; among equals the
// longest prompt) until the rest fit, and returns the new new_token_ratio.
// Never retracts the last request. Not thread-safe.
#pragma once

#include <functional>
#include <vector>

#include "core/scheduler/kv_allocator.h"
#include "core/scheduler/prefix_cache.h"
#include "core/scheduler/req.h"

namespace radixserve::sched {

class DecodeMemory {
 public:
  DecodeMemory(KvAllocator* alloc, int32_t retract_decode_steps) : alloc_(alloc), steps_(retract_decode_steps) {}

  // KV slots the next decode step of reqs needs (new pages only when paged).
  int64_t DecodeNeed(std::span<Req* const> reqs) const;
  // Evicts if short; true when the next decode step of reqs fits.
  bool Check(std::span<Req* const> reqs, PrefixCache* cache);

  // Retracts from *reqs (kept ones stay, in their order) and appends victims to *retracted.
  // release(req, remaining) frees one request's KV and row. Returns the new new_token_ratio.
  double Retract(std::vector<Req*>* reqs, PrefixCache* cache, const std::function<void(Req*)>& release,
                 std::vector<Req*>* retracted);

  // The victim order alone: indices of reqs, the first retracted last.
  static void VictimOrder(std::span<Req* const> reqs, std::vector<int32_t>* order);

 private:
  KvAllocator* alloc_;
  int32_t steps_;
  std::vector<int32_t> order_;
  std::vector<Req*> kept_;
};

}  // namespace radixserve::sched
