// Scheduler: SGLang's scheduling decisions (SCHEDULER_SPEC 1-4, 7) as a core
// that owns no worker and no thread. Next() applies staged plugin swaps (the
// iteration boundary), takes new requests and aborts, and decides the next
// forward step (prefill first, otherwise decode with retraction) as a Plan;
// Advance() takes the step's result back (append, finish, cache, stream) and
// Fail() its error. Plans go back in the order Next gave them out; several may
// be out at once (the overlap loop, pipeline stages). StepDriver runs the loop.
//
// Submit/Abort/Swap*/WorkerLost are thread-safe (they queue for the next
// iteration); everything else is called from one thread (the driver's).
#pragma once

#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/scheduler/batch_preparer.h"
#include "core/scheduler/cache_adapter.h"
#include "core/scheduler/decode_memory.h"
#include "core/scheduler/finish_checker.h"
#include "core/scheduler/new_token_ratio.h"
#include "core/scheduler/output_streamer.h"
#include "core/scheduler/plan.h"
#include "core/scheduler/policy.h"
#include "core/scheduler/policy_runner.h"
#include "core/scheduler/prefill_adder.h"
#include "core/scheduler/prefix_cache.h"
#include "core/scheduler/schedule_batch.h"
#include "core/scheduler/scheduler_config.h"
#include "core/scheduler/request_table.h"
#include "core/scheduler/swap_coordinator.h"
#include "core/scheduler/tokenized_request.h"
#include "core/scheduler/worker.h"

namespace radixserve::sched {




struct SchedulerStats {
  int64_t iterations = 0;
  int64_t prefill_batches = 0;
  int64_t decode_batches = 0;
  int64_t mixed_batches = 0;
  int64_t retractions = 0;       // requests retracted
  int64_t preemptions = 0;
  int64_t finished = 0;
  int64_t aborted = 0;
  int64_t failed_batches = 0;    // forward steps the worker could not run
  int64_t cached_prompt_tokens = 0;
  int64_t computed_prompt_tokens = 0;
  int32_t max_running = 0;
  int64_t policy_faults = 0;      // policy Order() threw or returned no permutation: FCFS used instead
  int64_t waiting_timeouts = 0;   // requests ended by waiting_timeout_s
  int64_t running_timeouts = 0;   // requests aborted by running_timeout_s
  int64_t chunk_caps = 0;         // chunk continuations capped (policy limit or fair prefill)
  int64_t fair_skips = 0;         // waiters passed over by fair prefill (a chunk was busy), later ones admitted
  int32_t max_inflight = 0;       // most plans given out and not yet given back at once
};


class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, CachePtr cache, PolicyPtr policy, OutputSink sink,
            DetokenizeFn detokenize = nullptr);
  ~Scheduler();

  void Submit(TokenizedRequest req);
  void Abort(uint64_t rid);
  // `done` (optional) runs on the loop thread once the policy orders the queue (the next iteration
  // boundary), or when a newer swap replaced it before that.
  void SwapPolicy(PolicyPtr policy, SwapDoneFn done = nullptr);
  void SwapCache(CachePtr cache, CacheSwapMode mode, SwapDoneFn done = nullptr);
  // The worker was replaced (it died): its KV and request states are gone. At the next iteration
  // boundary the cache is flushed into `fresh` (running requests recompute) and every request
  // sends its state record again; releases of states the old worker held are dropped.
  void WorkerLost(CachePtr fresh, SwapDoneFn done = nullptr);

  // The next step to run, into *plan (cleared first). kRun: run plan->batch, then give the plan
  // back with Advance or Fail. A plan that releases_only() carries only request-state releases
  // (the scheduler is otherwise idle). kEmptyPipeline: give back every plan out, then call again.
  Status Next(Plan* plan, Decision* decision);
  // The worker's result for the oldest plan out. Rows whose request was retracted or aborted
  // meanwhile are dropped; a result of the wrong size fails the plan's requests.
  Status Advance(const Plan& plan, const ForwardResult& result);
  // The oldest plan out could not run: each of its requests ends with an abort carrying `error`.
  Status Fail(const Plan& plan, const Status& error);
  // The end of one loop iteration (counted; invariants checked when configured).
  Status EndIteration();
  // Plans given out and not yet given back.
  int64_t plans_out() const { return plans_out_; }
  // Requests wait for admission or a cache swap drains: the loop has work even with nothing to run.
  bool has_pending_work() const { return !waiting_.empty() || swaps_.draining(); }

  // Memory and bookkeeping invariants; the idle ones too when nothing is in the system.
  Status CheckInvariants() const;
  // Nothing waits, runs or is in flight, and every finished request was recycled and its release
  // sent to the worker.
  bool idle() const;
  // No request waits, runs or is in flight (finished ones may still await recycling and release).
  bool no_requests() const;
  // Requests received (or submitted) that have not finished; finished ones whose last step is still
  // in flight do not count. Call from the loop's thread.
  int64_t num_unfinished() const;
  const SchedulerStats& stats() const { return stats_; }
  // Per cache salt, for the first kMaxTrackedSalts salts seen; later ones add to kOtherSalts.
  static constexpr size_t kMaxTrackedSalts = RequestTable::kMaxTrackedSalts;
  static constexpr const char* kOtherSalts = RequestTable::kOtherSalts;
  const std::map<std::string, SaltStats, std::less<>>& salt_stats() const { return requests_.salt_stats(); }
  double new_token_ratio() const { return ratio_.value(); }
  const PrefixCache& cache() const { return *cache_; }
  const SchedulePolicy& policy() const { return policy_.policy(); }
  const KvAllocator& allocator() const { return *alloc_; }
  const ReqToTokenPool& req_pool() const { return *pool_; }
  size_t num_waiting() const { return waiting_.size(); }
  size_t num_running() const { return running_.size(); }
  // Request states the worker holds by this scheduler's account (created, release not yet sent).
  int64_t worker_states() const { return requests_.worker_states(); }
  // The clock of wait_entry_time and the timeouts (seconds, monotonic); tests substitute their own.
  void set_clock_for_testing(std::function<double()> now) { now_ = std::move(now); }
  const SchedulerConfig& config() const { return config_; }
  // Where the prefix cache reports what it stores and evicts (a data-parallel router's view);
  // nullptr: nowhere. Before the first Next: the (still empty) cache is attached again to report.
  void set_cache_events(CacheEventSink* sink);
  // Fair chunked prefill's chunk (SchedulerConfig::fair_prefill_chunk), from the next pass on.
  void set_fair_prefill_chunk(int32_t tokens) { config_.fair_prefill_chunk = tokens > 0 ? tokens : 0; }

 private:
  // ---- scheduler.cc: the frame of Next() and what the steps share ----
  // Applies staged swaps; false when a staged flush must wait for the plans out to come back.
  bool ApplyStagedSwaps();
  bool DrainComplete() const;
  void RecvRequests();
  void AddNewRequest(TokenizedRequest&& g);
  Status GetNextBatchToRun(Plan* plan, ScheduleBatch** batch);
  void IssuePlan(Plan* plan);
  OrderContext MakeOrderContext() const;
  void StashChunkedReq();
  void MergeLastBatch();
  void RecordEntries(std::span<Req* const> reqs, bool decode, Plan* plan);
  void ReleaseFinished(Req* req);
  void ReleaseForRetract(Req* req);
  // ---- scheduler_aborts.cc ----
  void FinishWithoutRunning(Req* req, FinishReason reason);
  void AbortRequest(uint64_t rid);
  void ProcessPendingChunkedAbort();
  void AbortOnTimeouts();
  // ---- scheduler_prefill.cc ----
  Status GetNewBatchPrefill(Plan* plan, ScheduleBatch** out);
  bool ShortPrefillWaiting() const;
  void InitNextRoundInput(Req* req);
  bool PreemptToSchedule(Req* req, PrefillAdder* adder);
  // ---- scheduler_decode.cc ----
  Status UpdateRunningBatch(Plan* plan, ScheduleBatch** out);
  Status PipelineDecodeBatch(Plan* plan, ScheduleBatch** out);
  // ---- scheduler_results.cc ----
  Status TakeBack(const Plan& plan);
  void ProcessBatchResult(const Plan& plan, const ForwardResult& result);
  void FailRows(const Plan& plan, const Status& error);

  SchedulerConfig config_;
  std::unique_ptr<KvAllocator> alloc_;
  std::unique_ptr<ReqToTokenPool> pool_;
  CachePtr cache_;
  PolicyRunner policy_;
  OutputSink sink_;
  FinishChecker checker_;
  OutputStreamer streamer_;
  BatchPreparer preparer_;
  CacheAdapter cache_adapter_;
  DecodeMemory decode_mem_;
  NewTokenRatio ratio_;
  SwapCoordinator swaps_;

  // Inbox (thread-safe side).
  mutable std::mutex inbox_mu_;
  std::vector<TokenizedRequest> inbox_;
  std::vector<uint64_t> abort_inbox_;
  std::vector<TokenizedRequest> recv_scratch_;
  std::vector<uint64_t> abort_scratch_;

  // Scheduling state (scheduler thread).
  RequestTable requests_;
  std::vector<Req*> waiting_;
  ScheduleBatch running_;
  ScheduleBatch prefill_;
  ScheduleBatch micro_batch_;  // a pipelined worker's decode micro-batch (a part of running_)
  ScheduleBatch* last_batch_ = nullptr;
  Req* chunked_req_ = nullptr;
  bool pending_chunked_abort_ = false;
  int64_t processed_prefill_tokens_ = 0;  // prefill tokens launched (HRRN's clock, OrderContext)
  CacheEventSink* cache_events_ = nullptr;  // given to every cache attached
  uint64_t batch_id_ = 0;    // the last plan given out
  uint64_t retired_id_ = 0;  // the last plan given back
  int64_t plans_out_ = 0;
  SchedulerStats stats_;
  std::function<double()> now_;

  // Reused scratch.
  std::vector<Req*> can_run_;
  std::vector<Req*> retracted_;
  std::vector<Req*> preempted_;
};

}  // namespace radixserve::sched
