// The decode step (SCHEDULER_SPEC 1.4 step 7, 4): the memory check and
// retraction, then one decode plan for the running batch, or for a pipelined
// worker one micro-batch of it.
#include "core/scheduler/scheduler.h"

#include <glog/logging.h>

#include <algorithm>
#include <string>

#include "core/scheduler/paging.h"

namespace radixserve::sched {

// The decode step (SCHEDULER_SPEC 1.4 step 7, 4).
Status Scheduler::UpdateRunningBatch(Plan* plan, ScheduleBatch** out) {
  if (running_.Filter() || running_.empty()) running_.batch_is_full = false;
  if (running_.empty()) return Status::Ok();
  const size_t before = running_.size();
  if (!decode_mem_.Check(running_.reqs, cache_.get())) {
    retracted_.clear();
    const double old_ratio = ratio_.value();
    const double new_ratio =
        decode_mem_.Retract(&running_.reqs, cache_.get(), [&](Req* r) { ReleaseForRetract(r); }, &retracted_);
    ratio_.Set(new_ratio);
    LOG(INFO) << "KV cache pool is full. Retract requests. #retracted_reqs: " << retracted_.size()
              << ", #new_token_ratio: " << old_ratio << " -> " << new_ratio;
    stats_.retractions += static_cast<int64_t>(retracted_.size());
    for (Req* r : retracted_) waiting_.push_back(r);
    if (!decode_mem_.Check(running_.reqs, cache_.get())) {
      // Only one request is left and even it cannot grow: it can never finish.
      for (Req* r : running_.reqs) {
        ReleaseForRetract(r);
        r->is_retracted = false;
        FinishWithoutRunning(r, FinishReason::Abort("KV cache too small to keep decoding this request", 500));
      }
      running_.Clear();
      running_.batch_is_full = false;
      return Status::Ok();
    }
  } else {
    ratio_.DecayStep();
  }
  if (running_.size() != before) running_.batch_is_full = false;
  if (config_.pipeline_depth > 1) return PipelineDecodeBatch(plan, out);
  running_.mode = ForwardMode::kDecode;
  RS_RETURN_IF_ERROR(preparer_.PrepareForDecode(running_.reqs, cache_.get(), &plan->batch));
  RecordEntries(running_.reqs, /*decode=*/true, plan);
  *out = &running_;
  return Status::Ok();
}

// A decode micro-batch for a pipelined worker: running requests with no step in flight (their
// last token is known, so no stage waits for another), at most a 1/depth share of the running
// batch, so that the stages work on disjoint micro-batches at once.
Status Scheduler::PipelineDecodeBatch(Plan* plan, ScheduleBatch** out) {
  const size_t depth = static_cast<size_t>(config_.pipeline_depth);
  const size_t share = (running_.size() + depth - 1) / depth;
  micro_batch_.Clear();
  for (Req* r : running_.reqs) {
    if (micro_batch_.size() == share) break;
    if (r->inflight_batches == 0 && !r->finished()) micro_batch_.reqs.push_back(r);
  }
  if (micro_batch_.empty()) return Status::Ok();  // every running request has a step at a stage
  micro_batch_.mode = ForwardMode::kDecode;
  RS_RETURN_IF_ERROR(preparer_.PrepareForDecode(micro_batch_.reqs, cache_.get(), &plan->batch));
  RecordEntries(micro_batch_.reqs, /*decode=*/true, plan);
  *out = &micro_batch_;
  return Status::Ok();
}

}  // namespace radixserve::sched
