#include "core/scheduler/swap_coordinator.h"

#include <utility>

namespace radixserve::sched {

void SwapCoordinator::StagePolicy(PolicyPtr policy, SwapDoneFn done) {
  SwapDoneFn superseded;
  {
    std::lock_guard<std::mutex> lock(mu_);
    staged_policy_ = std::move(policy);
    superseded = std::exchange(staged_policy_done_, std::move(done));
    staged_.store(true, std::memory_order_release);
  }
  if (superseded) superseded(Status::Ok(), "superseded by a newer policy swap before it took effect");
}

void SwapCoordinator::StageCache(CachePtr cache, CacheSwapMode mode, SwapDoneFn done, bool worker_lost) {
  SwapDoneFn superseded;
  {
    std::lock_guard<std::mutex> lock(mu_);
    staged_cache_ = std::move(cache);
    staged_mode_ = mode;
    superseded = std::exchange(staged_cache_done_, std::move(done));
    staged_worker_lost_ = staged_worker_lost_ || worker_lost;  // a loss stays a loss when a swap follows
    if (staged_worker_lost_) staged_mode_ = CacheSwapMode::kFlush;
    staged_.store(true, std::memory_order_release);
  }
  if (superseded) superseded(Status::FailedPrecondition("superseded by a newer cache swap before it took effect"), "");
}

SwapCoordinator::Boundary SwapCoordinator::Take(bool plans_out, int64_t iteration) {
  Boundary b;
  if (!staged_.load(std::memory_order_acquire)) return b;
  CachePtr cache;
  SwapDoneFn done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    b.policy = std::move(staged_policy_);
    b.policy_done = std::move(staged_policy_done_);
    // A flush retracts every running request: no step of theirs may still be out.
    b.wait_for_pipeline = staged_cache_ && staged_mode_ == CacheSwapMode::kFlush && plans_out;
    if (!b.wait_for_pipeline && staged_cache_) {
      cache = std::move(staged_cache_);
      done = std::move(staged_cache_done_);
      b.flush = staged_mode_ == CacheSwapMode::kFlush;
      b.worker_lost = std::exchange(staged_worker_lost_, false);
    }
    staged_.store(staged_cache_ != nullptr, std::memory_order_relaxed);
  }
  if (cache) {
    if (draining_ && drain_done_) drain_done_(Status::FailedPrecondition("superseded by a newer cache swap"), "");
    drain_cache_ = std::move(cache);
    drain_done_ = std::move(done);
    drain_started_ = iteration;
    draining_ = true;
    flush_retracted_ = -1;
  }
  return b;
}

CachePtr SwapCoordinator::Complete(const Status& reset, int64_t evicted, int64_t iteration) {
  CachePtr next;
  std::string report;
  if (reset.ok()) {
    next = std::move(drain_cache_);
    report = flush_retracted_ >= 0
                 ? "flushed: retracted " + std::to_string(flush_retracted_) + " running requests, dropped " +
                       std::to_string(evicted) + " cached tokens"
                 : "drained: waited " + std::to_string(iteration - drain_started_) +
                       " iterations for running requests, dropped " + std::to_string(evicted) + " cached tokens";
  }
  draining_ = false;
  drain_cache_.reset();
  SwapDoneFn done = std::move(drain_done_);
  drain_done_ = nullptr;
  if (done) done(reset, report);
  return next;
}

}  // namespace radixserve::sched
