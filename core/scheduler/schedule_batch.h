// ScheduleBatch: a set of requests scheduled together (SCHEDULER_SPEC 1.4):
// running_batch (decode), a new prefill batch, or a mixed batch. Holds
// borrowed Req pointers; the scheduler owns the requests. Not thread-safe.
#pragma once

#include <algorithm>
#include <vector>

#include "core/scheduler/req.h"
#include "core/scheduler/worker.h"

namespace radixserve::sched {

struct ScheduleBatch {
  ForwardMode mode = ForwardMode::kIdle;
  std::vector<Req*> reqs;
  std::vector<Req*> decoding_reqs;  // decode members of a mixed batch
  bool batch_is_full = false;

  bool empty() const { return reqs.empty(); }
  size_t size() const { return reqs.size(); }
  bool is_extend() const { return mode == ForwardMode::kExtend || mode == ForwardMode::kMixed; }
  // Drops finished requests and the excluded ones; true when anything was dropped.
  bool Filter(const Req* exclude_a = nullptr, const Req* exclude_b = nullptr) {
    size_t before = reqs.size();
    reqs.erase(std::remove_if(reqs.begin(), reqs.end(),
                              [&](Req* r) { return r->finished() || r == exclude_a || r == exclude_b; }),
               reqs.end());
    return reqs.size() != before;
  }
  void Merge(const ScheduleBatch& other) { reqs.insert(reqs.end(), other.reqs.begin(), other.reqs.end()); }
  void Clear() {
    reqs.clear();
    decoding_reqs.clear();
    mode = ForwardMode::kIdle;
  }
};

}  // namespace radixserve::sched
