#include "core/scheduler/step_driver.h"

#include <glog/logging.h>

#include <algorithm>
#include <string>

namespace radixserve::sched {

StepDriver::StepDriver(Scheduler* scheduler, Worker* worker)
    : scheduler_(scheduler),
      worker_(worker),
      overlap_(scheduler->config().overlap),
      no_consecutive_prefill_overlap_(scheduler->config().disable_consecutive_prefill_overlap),
      depth_(static_cast<size_t>(scheduler->config().pipeline_depth)) {
  // The scheduler's decode micro-batches are cut for this many stages.
  CHECK_EQ(scheduler->config().pipeline_depth, std::max(1, worker->pipeline_depth()))
      << "the scheduler was configured for another pipeline depth than the worker has";
  if (overlap_) async_ = std::make_unique<AsyncWorker>(worker_);
}

StepDriver::~StepDriver() {
  // Let steps at the worker finish before the plans they read go away.
  if (async_)
    for (Inflight* f : inflight_) (void)async_->Wait(&f->job);
  async_.reset();
}

Status StepDriver::Step(bool* did_work) {
  bool work = false;
  Status s = overlap_ ? StepOverlap(&work) : StepNormal(&work);
  if (did_work) *did_work = work;
  Status end = scheduler_->EndIteration();
  return s.ok() ? end : s;
}

Status StepDriver::RunUntilIdle(int64_t max_iterations) {
  for (int64_t i = 0; i < max_iterations; ++i) {
    bool work = false;
    RS_RETURN_IF_ERROR(Step(&work));
    if (!work && scheduler_->idle()) return Status::Ok();
  }
  return Status::FailedPrecondition("scheduler not idle after " + std::to_string(max_iterations) + " iterations");
}

// SCHEDULER_SPEC 1.2.
Status StepDriver::StepNormal(bool* did_work) {
  Inflight* f = nullptr;
  RS_RETURN_IF_ERROR(Decide(&f));
  if (f == nullptr) {
    *did_work = scheduler_->has_pending_work();
    return Status::Ok();
  }
  Launch(f);
  *did_work = true;
  return Retire();
}

// SCHEDULER_SPEC 1.3: launch plan N+1, then give back plan N while N+1 runs.
Status StepDriver::StepOverlap(bool* did_work) {
  Inflight* f = nullptr;
  RS_RETURN_IF_ERROR(Decide(&f));
  if (f != nullptr && f->plan.releases_only()) {  // only when nothing else is out: run it through
    Launch(f);
    *did_work = true;
    last_was_extend_ = false;
    return Retire();
  }
  const bool launched = f != nullptr;
  const bool extend = launched && f->plan.is_extend();
  if (no_consecutive_prefill_overlap_ && extend && last_was_extend_ && !inflight_.empty()) {
    ++serialized_prefills_;
    RS_RETURN_IF_ERROR(Retire());  // the previous prefill's result first
  }
  if (launched) Launch(f);
  if (depth_ > 1) {
    // Up to one plan per stage at the worker, plus the one just launched; the oldest is given back
    // once that many are out, or when nothing else could be launched.
    const bool full = inflight_.size() > depth_;
    if (!inflight_.empty() && (full || !launched)) RS_RETURN_IF_ERROR(Retire());
  } else if (inflight_.size() > (launched ? 1u : 0u)) {
    RS_RETURN_IF_ERROR(Retire());
  }
  *did_work = launched || !inflight_.empty() || scheduler_->has_pending_work();
  last_was_extend_ = extend;
  return Status::Ok();
}

Status StepDriver::Decide(Inflight** out) {
  *out = nullptr;
  Inflight* f = Acquire();
  Decision decision = Decision::kNothing;
  for (;;) {
    Status s = scheduler_->Next(&f->plan, &decision);
    if (!s.ok()) {
      free_.push_back(f);
      return s;
    }
    if (decision != Decision::kEmptyPipeline) break;
    while (!inflight_.empty()) RS_RETURN_IF_ERROR(Retire());
  }
  if (decision == Decision::kRun) {
    *out = f;
  } else {
    free_.push_back(f);
  }
  return Status::Ok();
}

void StepDriver::Launch(Inflight* f) {
  inflight_.push_back(f);
  f->job.batch = &f->plan.batch;
  f->job.result = &f->result;
  if (async_) {
    async_->Submit(&f->job);
  } else {
    f->job.status = worker_->Forward(f->plan.batch, &f->result);
    f->job.done = true;
  }
}

Status StepDriver::Retire() {
  Inflight* f = inflight_.front();
  inflight_.pop_front();
  const Status ran = async_ ? async_->Wait(&f->job) : f->job.status;
  // A failed step ends its requests with the error; the loop goes on.
  Status s = ran.ok() ? scheduler_->Advance(f->plan, f->result) : scheduler_->Fail(f->plan, ran);
  free_.push_back(f);
  return s;
}

StepDriver::Inflight* StepDriver::Acquire() {
  if (free_.empty()) return storage_.emplace_back(std::make_unique<Inflight>()).get();
  Inflight* f = free_.back();
  free_.pop_back();
  return f;
}

}  // namespace radixserve::sched
