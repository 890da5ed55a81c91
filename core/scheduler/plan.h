// Plan: one forward step the scheduler decided on, as a value. Scheduler::Next
// fills it; the StepDriver hands its batch to the worker and gives it back with
// the result (Scheduler::Advance) or the error (Scheduler::Fail). The entries
// say, row by row, which request and epoch a result token belongs to, so that
// a request retracted or aborted while its step ran ignores it. Plans are
// reused (their vectors keep their capacity); not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "core/scheduler/req.h"
#include "core/scheduler/worker.h"

namespace radixserve::sched {

// One row of a plan.
struct PlanEntry {
  enum Kind : uint8_t {
    kPrefill,  // the prompt's last chunk: the row's token is the first output
    kChunk,    // a chunk before the last: its token is dropped
    kDecode,   // one decode step
  };
  Req* req;
  uint32_t epoch;  // the request's epoch when planned; a mismatch at Advance drops the row
  Kind kind;
};

struct Plan {
  ForwardBatch batch;              // what the worker runs
  std::vector<PlanEntry> entries;  // one per request of batch, in its order

  bool is_extend() const { return batch.mode == ForwardMode::kExtend || batch.mode == ForwardMode::kMixed; }
  // Carries only releases of request states (no request): run and advanced at once.
  bool releases_only() const { return batch.mode == ForwardMode::kIdle; }
  void Clear() {
    batch.Clear();
    entries.clear();
  }
};

// What Scheduler::Next decided.
enum class Decision : uint8_t {
  kRun,            // the plan holds a step to run
  kNothing,        // nothing to run now
  kEmptyPipeline,  // a cache flush is staged: advance every plan in flight, then ask again
};

}  // namespace radixserve::sched
