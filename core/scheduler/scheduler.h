// Scheduler: the SGLang-style event loop (SCHEDULER_SPEC 1-4, 7) in one
// process, against an abstract Worker. Each iteration: apply staged plugin
// swaps (the iteration boundary), receive requests, get the next batch
// (prefill first, otherwise decode with retraction), run it, process its
// result (append, finish, cache, stream). The overlap loop launches batch N+1
// on a worker thread before processing batch N's result. With a pipelined
// worker (pipeline stages) it keeps one micro-batch per stage in flight, each
// decode micro-batch a disjoint part of the running batch.
//
// Submit/Abort/Swap* are thread-safe (they queue for the next iteration);
// Step/RunUntilIdle and the queries must be called from one thread.
#pragma once

#include <deque>
#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/scheduler/async_worker.h"
#include "core/scheduler/batch_preparer.h"
#include "core/scheduler/cache_adapter.h"
#include "core/scheduler/decode_memory.h"
#include "core/scheduler/finish_checker.h"
#include "core/scheduler/new_token_ratio.h"
#include "core/scheduler/output_streamer.h"
#include "core/scheduler/policy.h"
#include "core/scheduler/prefill_adder.h"
#include "core/scheduler/prefix_cache.h"
#include "core/scheduler/schedule_batch.h"
#include "core/scheduler/scheduler_config.h"
#include "core/scheduler/worker.h"

namespace radixserve::sched {

// One request as the scheduler receives it: one choice of an api::GenerateRequest, tokenized
// (the wire form is transport::TokenizedRequestMsg).
struct TokenizedRequest {
  uint64_t rid = 0;
  std::vector<int32_t> input_ids;
  SamplingParams sampling;
  std::vector<int32_t> stop_token_ids;
  std::vector<std::string> stop_strs;
  bool stream = false;
  bool return_logprob = false;
  int32_t top_logprobs_num = 0;
  std::optional<int64_t> priority;
  std::string routing_key;  // "" when none
  std::string cache_salt;   // "" when none
  grammar::GrammarSpec grammar;  // structured output; kind kNone when unconstrained
};

using PolicyPtr = std::unique_ptr<SchedulePolicy, std::function<void(SchedulePolicy*)>>;
using CachePtr = std::unique_ptr<PrefixCache, std::function<void(PrefixCache*)>>;
PolicyPtr OwnPolicy(std::unique_ptr<SchedulePolicy> p);
CachePtr OwnCache(std::unique_ptr<PrefixCache> c);

// How a cache swap gets rid of the KV the old cache and running requests hold.
enum class CacheSwapMode {
  kDrain,  // stop admitting, let running requests finish, then swap
  kFlush,  // retract every running request now (they resume by recompute), then swap
};
using SwapDoneFn = std::function<void(const Status&, const std::string& report)>;

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
  int32_t max_inflight = 0;       // most batches launched and not yet processed at once
};

// Prompt tokens of one cache salt: served from its cache namespace, and computed.
struct SaltStats {
  int64_t cached_prompt_tokens = 0;
  int64_t computed_prompt_tokens = 0;
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& config, Worker* worker, CachePtr cache, PolicyPtr policy, OutputSink sink,
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

  // One loop iteration. *did_work is false when the scheduler was idle.
  Status Step(bool* did_work = nullptr);
  // Steps until nothing is waiting, running or in flight.
  Status RunUntilIdle(int64_t max_iterations = INT64_MAX);

  // Memory and bookkeeping invariants; the idle ones too when nothing is in the system.
  Status CheckInvariants() const;
  // Nothing waits, runs or is in flight, and every finished request was recycled and its release
  // sent to the worker.
  bool idle() const;
  // No request waits, runs or is in flight (finished ones may still await recycling and release).
  bool no_requests() const;
  // Requests received (or submitted) that have not finished; finished ones whose last step is still
  // in flight do not count. Thread-compatible with Step (call from the loop's thread).
  int64_t num_unfinished() const;
  const SchedulerStats& stats() const { return stats_; }
  // Per cache salt, for the first kMaxTrackedSalts salts seen; later ones add to kOtherSalts.
  static constexpr size_t kMaxTrackedSalts = 32;
  static constexpr const char* kOtherSalts = "";
  const std::map<std::string, SaltStats, std::less<>>& salt_stats() const { return salt_stats_; }
  double new_token_ratio() const { return ratio_.value(); }
  const PrefixCache& cache() const { return *cache_; }
  const SchedulePolicy& policy() const { return *policy_; }
  const KvAllocator& allocator() const { return *alloc_; }
  const ReqToTokenPool& req_pool() const { return *pool_; }
  size_t num_waiting() const { return waiting_.size(); }
  size_t num_running() const { return running_.size(); }
  // Request states the worker holds by this scheduler's account (created, release not yet sent).
  int64_t worker_states() const;
  // The clock of wait_entry_time and the timeouts (seconds, monotonic); tests substitute their own.
  void set_clock_for_testing(std::function<double()> now) { now_ = std::move(now); }
  const SchedulerConfig& config() const { return config_; }
  // Where the prefix cache reports what it stores and evicts (a data-parallel router's view);
  // nullptr: nowhere. Before the first Step: the (still empty) cache is attached again to report.
  void set_cache_events(CacheEventSink* sink);
  // Fair chunked prefill's chunk (SchedulerConfig::fair_prefill_chunk), from the next pass on.
  void set_fair_prefill_chunk(int32_t tokens) { config_.fair_prefill_chunk = tokens > 0 ? tokens : 0; }

 private:
  struct Entry {
    Req* req;
    uint32_t epoch;
    enum Kind : uint8_t { kPrefill, kChunk, kDecode } kind;
  };
  struct Inflight {
    ForwardBatch fb;
    ForwardResult result;
    std::vector<Entry> entries;
    AsyncWorker::Job job;
  };

  // ---- the steps of one iteration ----
  void ApplyStagedSwaps();
  void RecvRequests();
  Status GetNextBatchToRun(ScheduleBatch** batch);
  Status RunBatch(ScheduleBatch* batch);
  Status ProcessBatchResult(Inflight* inflight);
  Status OnIdle();
  Status StepNormal(bool* did_work);
  Status StepOverlap(bool* did_work);
  Status PopAndProcess();
  void FailBatch(Inflight* inflight, const Status& error);
  // Idle with releases not yet sent: one batch without requests carries them.
  Status SendReleases();
  void TakeReleases(std::vector<uint64_t>* out);

  // ---- pieces of GetNextBatchToRun ----
  void ProcessPendingChunkedAbort();
  void AbortOnTimeouts();
  // Runs the policy; a throw or an order that is not a permutation falls back to FCFS (counted).
  void OrderWaitingQueue();
  OrderContext MakeOrderContext() const;
  bool ShortPrefillWaiting() const;
  void StashChunkedReq();
  void MergeLastBatch();
  Status GetNewBatchPrefill(ScheduleBatch** out);
  Status UpdateRunningBatch(ScheduleBatch** out);
  Status PipelineDecodeBatch(ScheduleBatch** out);
  bool PreemptToSchedule(Req* req, PrefillAdder* adder);

  // ---- request bookkeeping ----
  void AddNewRequest(TokenizedRequest&& g);
  void AbortRequest(uint64_t rid);
  void InitNextRoundInput(Req* req);
  void ReleaseFinished(Req* req);
  void ReleaseForRetract(Req* req);
  void FinishWithoutRunning(Req* req, FinishReason reason);
  void Reap();
  Req* NewReq();
  void RecordEntries(std::span<Req* const> reqs, bool decode);
  void AcquireInflight();
  bool DrainComplete() const;

  SchedulerConfig config_;
  Worker* worker_;
  std::unique_ptr<AsyncWorker> async_;
  std::unique_ptr<KvAllocator> alloc_;
  std::unique_ptr<ReqToTokenPool> pool_;
  CachePtr cache_;
  PolicyPtr policy_;
  OutputSink sink_;
  FinishChecker checker_;
  OutputStreamer streamer_;
  BatchPreparer preparer_;
  CacheAdapter cache_adapter_;
  DecodeMemory decode_mem_;
  NewTokenRatio ratio_;

  // Inbox (thread-safe side).
  mutable std::mutex inbox_mu_;
  std::vector<TokenizedRequest> inbox_;
  std::vector<uint64_t> abort_inbox_;
  PolicyPtr staged_policy_;
  SwapDoneFn staged_policy_done_;
  CachePtr staged_cache_;
  CacheSwapMode staged_mode_ = CacheSwapMode::kDrain;
  SwapDoneFn staged_done_;
  bool staged_worker_lost_ = false;
  std::vector<TokenizedRequest> recv_scratch_;
  std::vector<uint64_t> abort_scratch_;

  // Scheduling state (scheduler thread).
  std::unordered_map<uint64_t, Req*> reqs_;
  std::vector<std::unique_ptr<Req>> req_storage_;
  std::vector<Req*> free_reqs_;
  std::vector<Req*> graveyard_;
  std::vector<uint64_t> pending_release_;  // recycled requests the worker still holds state for
  ScheduleBatch release_batch_;            // the empty batch SendReleases runs
  std::vector<Req*> waiting_;
  ScheduleBatch running_;
  ScheduleBatch prefill_;
  ScheduleBatch micro_batch_;  // a pipelined worker's decode micro-batch (a part of running_)
  int pipeline_depth_ = 1;     // the worker's (Worker::pipeline_depth)
  ScheduleBatch* last_batch_ = nullptr;
  Req* chunked_req_ = nullptr;
  bool pending_chunked_abort_ = false;
  bool draining_ = false;
  CachePtr drain_cache_;
  SwapDoneFn drain_done_;
  int64_t drain_started_ = 0;
  int64_t flush_retracted_ = -1;  // >= 0 while a flush swap is pending
  uint64_t arrival_seq_ = 0;
  int64_t processed_prefill_tokens_ = 0;
  CacheEventSink* cache_events_ = nullptr;  // given to every cache attached
  std::map<std::string, SaltStats, std::less<>> salt_stats_;
  SaltStats& StatsOfSalt(const std::string& salt);  // prefill tokens launched (HRRN's clock, OrderContext)
  uint64_t batch_id_ = 0;
  std::deque<Inflight*> inflight_;
  std::vector<std::unique_ptr<Inflight>> inflight_storage_;
  std::vector<Inflight*> free_inflight_;
  Inflight* current_ = nullptr;
  SchedulerStats stats_;
  std::function<double()> now_;

  // Reused scratch.
  std::vector<const Req*> queue_view_;
  std::vector<int32_t> order_;
  std::vector<uint8_t> order_seen_;
  std::vector<Req*> sorted_;
  std::vector<Req*> can_run_;
  std::vector<Req*> retracted_;
  std::vector<Req*> preempted_;
  std::vector<Req*> victims_;
};

}  // namespace radixserve::sched
