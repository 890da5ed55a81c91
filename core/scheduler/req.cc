#include "core/scheduler/req.h"

namespace radixserve::sched {

void Req::ResetForRetract() {
  state = ReqState::kWaiting;
  req_pool_idx = -1;
  prefix_indices.clear();
  last_node = nullptr;
  cache_protected_len = 0;
  extend_begin = extend_end = 0;
  kv_len = 0;
  worker_synced_len = 0;
  inflight_chunks = 0;
  is_retracted = true;
  ++retraction_count;
  ++epoch;
}

}  // namespace radixserve::sched
