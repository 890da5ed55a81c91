// Requests that end before they finish (SCHEDULER_SPEC 1.4 steps 1-2, 7.6):
// refusals, aborts of waiting, running and chunked requests, and the waiting
// and running timeouts.
#include "core/scheduler/scheduler.h"

#include <glog/logging.h>

#include <algorithm>
#include <string>

#include "core/scheduler/paging.h"

namespace radixserve::sched {

void Scheduler::FinishWithoutRunning(Req* r, FinishReason reason) {
  r->finish = std::move(reason);
  r->state = ReqState::kFinished;
  ++stats_.aborted;
  streamer_.Consider(*r);
  streamer_.Flush(sink_);
  requests_.Bury(r);
}

// SCHEDULER_SPEC 7.6.
void Scheduler::AbortRequest(uint64_t rid) {
  Req* r = requests_.Find(rid);
  if (r == nullptr || r->finished()) return;
  if (r == chunked_req_) {
    pending_chunked_abort_ = true;  // handled at the top of the next GetNextBatchToRun
    return;
  }
  auto w = std::find(waiting_.begin(), waiting_.end(), r);
  if (w != waiting_.end()) {
    waiting_.erase(w);
    ++r->epoch;
    FinishWithoutRunning(r, FinishReason::Abort("aborted", 400));
    return;
  }
  r->to_abort = true;  // running: finishes when its next token is processed
}

// SCHEDULER_SPEC 1.4 step 2: waiting requests past waiting_timeout_s end now (503); running ones
// past running_timeout_s get to_abort and finish when their next token is processed.
void Scheduler::AbortOnTimeouts() {
  const bool waiting_on = config_.waiting_timeout_s > 0 && !waiting_.empty();
  const bool running_on = config_.running_timeout_s > 0 && !running_.empty();
  if (!waiting_on && !running_on) return;
  const double now = now_();
  if (waiting_on) {
    auto expired = [&](Req* r) { return r->start_time == 0 && now - r->wait_entry_time > config_.waiting_timeout_s; };
    if (std::any_of(waiting_.begin(), waiting_.end(), expired)) {
      size_t kept = 0;
      for (Req* r : waiting_) {
        if (!expired(r)) {
          waiting_[kept++] = r;
          continue;
        }
        ++r->epoch;
        ++stats_.waiting_timeouts;
        FinishWithoutRunning(r, FinishReason::Abort("request waited longer than the waiting timeout of " +
                                                        std::to_string(config_.waiting_timeout_s) + " s",
                                                    503));
      }
      waiting_.resize(kept);
    }
  }
  if (running_on) {
    for (Req* r : running_.reqs) {
      if (r->finished() || r->to_abort || r->start_time == 0) continue;
      if (now - r->start_time > config_.running_timeout_s) {
        r->to_abort = true;
        r->abort_status = 503;
        r->abort_message = "request ran longer than the running timeout of " +
                           std::to_string(config_.running_timeout_s) + " s";
        ++stats_.running_timeouts;
      }
    }
  }
}

void Scheduler::ProcessPendingChunkedAbort() {
  if (!pending_chunked_abort_) return;
  pending_chunked_abort_ = false;
  if (chunked_req_ == nullptr) return;
  Req* r = chunked_req_;
  chunked_req_ = nullptr;
  cache_adapter_.CacheFinishedReq(*cache_, *r, /*insert=*/false);
  pool_->Free(r->req_pool_idx);
  r->req_pool_idx = -1;
  ++r->epoch;
  FinishWithoutRunning(r, FinishReason::Abort("aborted", 400));
}

}  // namespace radixserve::sched
