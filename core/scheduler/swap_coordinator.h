// SwapCoordinator: plugin swaps at iteration boundaries. Policy and cache swaps,
// and a worker loss (a flush into a fresh cache that also forgets every worker
// state), are staged from any thread; the loop takes them at the next boundary.
// A cache swap then drains (admission stops until no request runs) or flushes
// (the scheduler retracts every running request at once; a flush waits until
// no plan is out); when the drain is complete the scheduler resets the old
// cache and attaches the new one. A swap staged over another that has not
// taken effect ends the older one with "superseded".
//
// Stage* are thread-safe; everything else is called from the loop's thread.
// Nothing staged costs the loop one relaxed atomic load per iteration.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "core/scheduler/policy.h"
#include "core/scheduler/prefix_cache.h"
#include "core/util/status.h"

namespace radixserve::sched {

// How a cache swap gets rid of the KV the old cache and running requests hold.
enum class CacheSwapMode {
  kDrain,  // stop admitting, let running requests finish, then swap
  kFlush,  // retract every running request now (they resume by recompute), then swap
};
using SwapDoneFn = std::function<void(const Status&, const std::string& report)>;

class SwapCoordinator {
 public:
  // ---- any thread ----
  void StagePolicy(PolicyPtr policy, SwapDoneFn done);
  void StageCache(CachePtr cache, CacheSwapMode mode, SwapDoneFn done, bool worker_lost);

  // ---- the loop's thread ----
  // What one iteration boundary applies.
  struct Boundary {
    PolicyPtr policy;         // the new policy (null: keep the current one)
    SwapDoneFn policy_done;   // call once the new policy is in place
    bool flush = false;       // a flush began: retract every running request now
    bool worker_lost = false; // the flush is a worker loss: every worker state is gone too
    bool wait_for_pipeline = false;  // a flush is staged but plans are out: empty the pipeline first
  };
  Boundary Take(bool plans_out, int64_t iteration);
  // A cache swap is under way: admission is stopped until it completes.
  bool draining() const { return draining_; }
  // The flush retracted this many requests (for its report).
  void set_flush_retracted(int64_t n) { flush_retracted_ = n; }
  // The drain is complete and the old cache was reset with `reset` (it held `evicted` cached
  // tokens): returns the new cache (null when the reset failed) and answers the swap.
  CachePtr Complete(const Status& reset, int64_t evicted, int64_t iteration);

 private:
  std::atomic<bool> staged_{false};  // anything below is staged
  std::mutex mu_;
  PolicyPtr staged_policy_;
  SwapDoneFn staged_policy_done_;
  CachePtr staged_cache_;
  CacheSwapMode staged_mode_ = CacheSwapMode::kDrain;
  SwapDoneFn staged_cache_done_;
  bool staged_worker_lost_ = false;

  // The cache swap under way (loop thread).
  bool draining_ = false;
  CachePtr drain_cache_;
  SwapDoneFn drain_done_;
  int64_t drain_started_ = 0;
  int64_t flush_retracted_ = -1;  // >= 0 once a flush retracted
};

}  // namespace radixserve::sched
