// Taking a plan back (SCHEDULER_SPEC 7.3): tokens appended, finish checked,
// KV cached or released, outputs streamed; or, for a plan that could not run,
// each of its requests ended with the error.
#include "core/scheduler/scheduler.h"

#include <glog/logging.h>

#include <algorithm>
#include <string>

#include "core/scheduler/paging.h"

namespace radixserve::sched {

Status Scheduler::TakeBack(const Plan& plan) {
  if (plans_out_ == 0 || plan.batch.batch_id != retired_id_ + 1)
    return Status::Internal("plan " + std::to_string(plan.batch.batch_id) + " given back out of order (expected " +
                            std::to_string(retired_id_ + 1) + ", " + std::to_string(plans_out_) + " out)");
  ++retired_id_;
  --plans_out_;
  return Status::Ok();
}

Status Scheduler::Advance(const Plan& plan, const ForwardResult& result) {
  RS_RETURN_IF_ERROR(TakeBack(plan));
  if (result.next_token_ids.size() != plan.entries.size()) {
    FailRows(plan, Status::Internal("worker returned " + std::to_string(result.next_token_ids.size()) +
                                    " tokens for " + std::to_string(plan.entries.size()) + " requests"));
    return Status::Ok();
  }
  ProcessBatchResult(plan, result);
  return Status::Ok();
}

Status Scheduler::Fail(const Plan& plan, const Status& error) {
  RS_RETURN_IF_ERROR(TakeBack(plan));
  FailRows(plan, error);
  return Status::Ok();
}

// A forward step failed (worker error, timeout, lost worker): its requests cannot continue, since
// their KV for this step may not exist. Each ends with an abort carrying the worker's message.
void Scheduler::FailRows(const Plan& plan, const Status& error) {
  LOG(ERROR) << "forward batch " << plan.batch.batch_id << " failed, aborting its requests: " << error.ToString();
  ++stats_.failed_batches;
  alloc_->FreeGroupBegin();
  for (const PlanEntry& e : plan.entries) {
    Req* r = e.req;
    --r->inflight_batches;
    if (r->epoch != e.epoch || r->finished()) continue;
    if (r == chunked_req_) chunked_req_ = nullptr;
    r->finish = FinishReason::Abort("the model worker failed: " + error.message(), 500);
    ReleaseFinished(r);
    streamer_.Consider(*r);
  }
  alloc_->FreeGroupEnd();
  streamer_.Flush(sink_);
}

// SCHEDULER_SPEC 7.3.
void Scheduler::ProcessBatchResult(const Plan& plan, const ForwardResult& result) {
  alloc_->FreeGroupBegin();
  for (size_t i = 0; i < plan.entries.size(); ++i) {
    const PlanEntry& e = plan.entries[i];
    Req* r = e.req;
    --r->inflight_batches;
    if (r->epoch != e.epoch || r->finished()) continue;  // retracted/aborted meanwhile, or overlap leftover
    if (e.kind == PlanEntry::kChunk) {
      --r->inflight_chunks;
      continue;
    }
    r->tokens.push_back(result.next_token_ids[i]);
    if (r->spec.return_logprob && i < result.logprobs.size()) r->output_logprobs.push_back(result.logprobs[i]);
    if (r->spec.top_logprobs_num > 0) {  // exactly top_logprobs_num entries per token, padded with id -1
      const int32_t n = result.top_n;
      for (int32_t k = 0; k < r->spec.top_logprobs_num; ++k) {
        const bool have = k < n && (i * n + k) < result.top_ids.size();
        r->output_top_ids.push_back(have ? result.top_ids[i * n + k] : -1);
        r->output_top_logprobs.push_back(have ? result.top_logprobs[i * n + k] : 0.0f);
      }
    }
    r->state = ReqState::kRunning;
    checker_.Check(*r);
    if (r->finished()) {
      ReleaseFinished(r);
    } else if (e.kind == PlanEntry::kPrefill) {
      cache_adapter_.CacheUnfinishedReq(*cache_, *r);
    }
    streamer_.Consider(*r);
  }
  alloc_->FreeGroupEnd();
  streamer_.Flush(sink_);
}

}  // namespace radixserve::sched
