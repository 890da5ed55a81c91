// StepDriver: the loop around a Scheduler (SCHEDULER_SPEC 1.2, 1.3). Each Step
// asks the scheduler for the next plan, hands its batch to the worker and gives
// results back in order. The three loops differ only here:
//   normal:   run the plan, give it back, then decide again;
//   overlap:  launch plan N+1 on the worker's thread, then give back plan N;
//   pipeline: keep up to one plan per worker stage (Worker::pipeline_depth)
//             out, giving back the oldest when the stages are full.
// The driver owns the plans in flight and the worker's thread (AsyncWorker);
// the scheduler owns every decision. A staged cache flush empties the pipeline
// here before the scheduler applies it.
//
// Not thread-safe: one thread calls Step. The scheduler and the worker outlive
// the driver; destroying it waits for the steps still at the worker.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "core/scheduler/async_worker.h"
#include "core/scheduler/plan.h"
#include "core/scheduler/scheduler.h"
#include "core/scheduler/worker.h"

namespace radixserve::sched {

class StepDriver {
 public:
  // The loop is the scheduler's config().overlap; its pipeline_depth must be the worker's.
  StepDriver(Scheduler* scheduler, Worker* worker);
  ~StepDriver();
  StepDriver(const StepDriver&) = delete;
  StepDriver& operator=(const StepDriver&) = delete;

  // One loop iteration. *did_work is false when there was nothing to do.
  Status Step(bool* did_work = nullptr);
  // Steps until nothing is waiting, running or in flight.
  Status RunUntilIdle(int64_t max_iterations = INT64_MAX);
  // Plans at the worker now.
  size_t in_flight() const { return inflight_.size(); }
  // Prefill plans launched only after the previous prefill's result was given back
  // (SchedulerConfig::disable_consecutive_prefill_overlap).
  int64_t serialized_prefills() const { return serialized_prefills_; }

 private:
  struct Inflight {
    Plan plan;
    ForwardResult result;
    AsyncWorker::Job job;
  };

  Status StepNormal(bool* did_work);
  Status StepOverlap(bool* did_work);
  // The scheduler's next plan (nullptr: nothing to run), emptying the pipeline first when it asks.
  Status Decide(Inflight** out);
  void Launch(Inflight* f);
  // Waits for the oldest plan at the worker and gives it back to the scheduler.
  Status Retire();
  Inflight* Acquire();

  Scheduler* scheduler_;
  Worker* worker_;
  const bool overlap_;
  const bool no_consecutive_prefill_overlap_;
  const size_t depth_;
  std::unique_ptr<AsyncWorker> async_;  // overlap loops only
  std::deque<Inflight*> inflight_;      // launched, oldest first
  std::vector<std::unique_ptr<Inflight>> storage_;
  std::vector<Inflight*> free_;
  bool last_was_extend_ = false;  // the previous iteration launched a prefill (or mixed) plan
  int64_t serialized_prefills_ = 0;
};

}  // namespace radixserve::sched
