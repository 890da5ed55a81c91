// The decision core's frame: inputs, Next() (SCHEDULER_SPEC 1.4 in step
// order), the iteration boundary's swaps and the pieces the steps share. The
// steps themselves live in scheduler_prefill.cc (6), scheduler_decode.cc (7),
// scheduler_results.cc (7.3) and scheduler_aborts.cc (1, 2, 7.6), their logic
// in PrefillAdder, DecodeMemory, BatchPreparer, FinishChecker, OutputStreamer,
// RequestTable, SwapCoordinator, PolicyRunner and the plugins.
#include "core/scheduler/scheduler.h"

#include "core/scheduler/paging.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <utility>

namespace radixserve::sched {
namespace {

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace


Scheduler::Scheduler(const SchedulerConfig& config, CachePtr cache, PolicyPtr policy, OutputSink sink,
                     DetokenizeFn detokenize)
    : config_(config),
      alloc_(MakeKvAllocator(config.page_size, config.max_total_tokens)),
      pool_(std::make_unique<ReqToTokenPool>(config.max_running_requests, config.max_req_len + 2)),
      cache_(std::move(cache)),
      policy_(std::move(policy)),
      sink_(std::move(sink)),
      checker_(config.eos_token_ids, config.vocab_size, std::move(detokenize)),
      streamer_(config.stream_interval, config.force_stream_interval, &checker_),
      preparer_(pool_.get(), alloc_.get()),
      cache_adapter_(alloc_.get(), pool_.get(), config.page_size),
      decode_mem_(alloc_.get(), config.retract_decode_steps),
      ratio_(config.init_new_token_ratio, config.schedule_conservativeness, config.min_new_token_ratio_factor,
             config.new_token_ratio_decay_steps),
      requests_(&config_) {
  if (config_.per_req_token_overhead < 0) config_.per_req_token_overhead = config_.page_size;
  config_.max_total_tokens = alloc_->size();
  config_.pipeline_depth = std::max(1, config_.pipeline_depth);
  cache_->Attach(CacheContextOf(alloc_.get(), config_.page_size, cache_events_));
  if (config_.pipeline_depth > 1 && config_.enable_mixed_chunk) {
    // A mixed batch would carry every running request, also those whose last step is still at a stage.
    LOG(WARNING) << "mixed chunks are off: the worker has " << config_.pipeline_depth << " pipeline stages";
    config_.enable_mixed_chunk = false;
  }
  now_ = MonotonicSeconds;
}

Scheduler::~Scheduler() = default;

// ---- thread-safe inputs ------------------------------------------------------------

void Scheduler::Submit(TokenizedRequest req) {
  std::lock_guard<std::mutex> lock(inbox_mu_);
  inbox_.push_back(std::move(req));
}

void Scheduler::Abort(uint64_t rid) {
  std::lock_guard<std::mutex> lock(inbox_mu_);
  abort_inbox_.push_back(rid);
}

void Scheduler::SwapPolicy(PolicyPtr policy, SwapDoneFn done) { swaps_.StagePolicy(std::move(policy), std::move(done)); }

void Scheduler::SwapCache(CachePtr cache, CacheSwapMode mode, SwapDoneFn done) {
  swaps_.StageCache(std::move(cache), mode, std::move(done), /*worker_lost=*/false);
}

void Scheduler::WorkerLost(CachePtr fresh, SwapDoneFn done) {
  swaps_.StageCache(std::move(fresh), CacheSwapMode::kFlush, std::move(done), /*worker_lost=*/true);
}

// ---- deciding and advancing ----------------------------------------------------------------

Status Scheduler::Next(Plan* plan, Decision* decision) {
  plan->Clear();
  if (!ApplyStagedSwaps()) {
    *decision = Decision::kEmptyPipeline;
    return Status::Ok();
  }
  RecvRequests();
  ScheduleBatch* batch = nullptr;
  RS_RETURN_IF_ERROR(GetNextBatchToRun(plan, &batch));
  last_batch_ = batch;
  *decision = Decision::kRun;
  if (batch != nullptr) {
    plan->batch.mode = batch->mode;
    IssuePlan(plan);
    return Status::Ok();
  }
  if (plans_out_ > 0) {  // the driver retires what is in flight; idle work waits for an empty pipeline
    *decision = Decision::kNothing;
    return Status::Ok();
  }
  ratio_.Reset();
  if (no_requests()) {
    requests_.Reap();
    if (requests_.releases_pending()) {  // idle with releases not yet sent: a plan without requests carries them
      plan->batch.mode = ForwardMode::kIdle;
      IssuePlan(plan);
      return Status::Ok();
    }
    RS_RETURN_IF_ERROR(CheckInvariants());
  }
  *decision = Decision::kNothing;
  return Status::Ok();
}

// SCHEDULER_SPEC 1.4, in step order.
Status Scheduler::GetNextBatchToRun(Plan* plan, ScheduleBatch** batch) {
  *batch = nullptr;
  ProcessPendingChunkedAbort();  // 1
  AbortOnTimeouts();             // 2
  StashChunkedReq();             // 3
  MergeLastBatch();              // 4
  requests_.Reap();
  RS_RETURN_IF_ERROR(GetNewBatchPrefill(plan, batch));  // 6
  if (*batch != nullptr) return Status::Ok();           // 7: prefill has priority
  return UpdateRunningBatch(plan, batch);
}

void Scheduler::IssuePlan(Plan* plan) {
  plan->batch.batch_id = ++batch_id_;
  // Requests recycled before this batch was built, so none of them is in it; at most one row's
  // worth per batch (max_running_requests), the bound the batch message is sized for.
  requests_.TakeReleases(static_cast<size_t>(config_.max_running_requests), &plan->batch.released_rids);
  switch (plan->batch.mode) {
    case ForwardMode::kExtend: ++stats_.prefill_batches; break;
    case ForwardMode::kDecode: ++stats_.decode_batches; break;
    case ForwardMode::kMixed: ++stats_.mixed_batches; break;
    case ForwardMode::kIdle: break;
  }
  stats_.max_running = std::max<int32_t>(stats_.max_running, static_cast<int32_t>(plan->entries.size()));
  ++plans_out_;
  stats_.max_inflight = std::max<int32_t>(stats_.max_inflight, static_cast<int32_t>(plans_out_));
}

Status Scheduler::EndIteration() {
  ++stats_.iterations;
  return config_.check_invariants_every_iteration ? CheckInvariants() : Status::Ok();
}

int64_t Scheduler::num_unfinished() const {
  int64_t n = 0;
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    n += static_cast<int64_t>(inbox_.size());
  }
  return n + requests_.unfinished();
}

// ---- iteration boundary: plugin swaps ------------------------------------------------

bool Scheduler::ApplyStagedSwaps() {
  SwapCoordinator::Boundary b = swaps_.Take(plans_out_ > 0, stats_.iterations);
  if (b.policy) policy_.Replace(std::move(b.policy));  // the old one is destroyed here, between iterations
  if (b.policy_done) b.policy_done(Status::Ok(), "");
  if (b.flush) {
    if (b.worker_lost) {  // the new worker holds nothing: every request sends its state record again
      requests_.ForgetWorkerStates();
    }
    MergeLastBatch();
    last_batch_ = nullptr;
    int64_t n = 0;
    auto retract = [&](Req* r) {
      if (r->finished()) return;
      ReleaseForRetract(r);
      waiting_.push_back(r);
      ++n;
    };
    for (Req* r : running_.reqs) retract(r);
    running_.Clear();
    if (chunked_req_) retract(chunked_req_);
    chunked_req_ = nullptr;
    stats_.retractions += n;
    swaps_.set_flush_retracted(n);
  }
  if (swaps_.draining() && DrainComplete()) {
    const int64_t evicted = cache_->evictable_size();
    CachePtr next = swaps_.Complete(cache_->Reset(), evicted, stats_.iterations);
    if (next) {
      cache_ = std::move(next);
      cache_->Attach(CacheContextOf(alloc_.get(), config_.page_size, cache_events_));
    }
  }
  return !b.wait_for_pipeline;
}

bool Scheduler::DrainComplete() const {
  return running_.empty() && chunked_req_ == nullptr && plans_out_ == 0 &&
         (last_batch_ == nullptr || last_batch_->empty() || last_batch_ == &running_);
}

// ---- inputs ------------------------------------------------------------------------------

void Scheduler::RecvRequests() {
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    recv_scratch_.swap(inbox_);
    abort_scratch_.swap(abort_inbox_);
  }
  for (auto& g : recv_scratch_) AddNewRequest(std::move(g));
  for (uint64_t rid : abort_scratch_) AbortRequest(rid);
  recv_scratch_.clear();
  abort_scratch_.clear();
}

void Scheduler::AddNewRequest(TokenizedRequest&& g) {
  FinishReason refusal;
  Req* r = requests_.Create(std::move(g), now_(), processed_prefill_tokens_, &refusal);
  if (refusal.finished()) {
    FinishWithoutRunning(r, std::move(refusal));
    return;
  }
  if (static_cast<int64_t>(waiting_.size()) >= config_.max_queued_requests) {
    const int32_t victim = policy_.ChooseQueueVictim(waiting_, *r);
    if (victim < 0) {
      FinishWithoutRunning(r, FinishReason::Abort("waiting queue is full", 503));
      return;
    }
    Req* v = waiting_[victim];
    waiting_.erase(waiting_.begin() + victim);
    FinishWithoutRunning(v, FinishReason::Abort("evicted from a full queue by a more important request", 503));
  }
  waiting_.push_back(r);
}

// ---- pieces the steps share ------------------------------------------------------------------

void Scheduler::set_cache_events(CacheEventSink* sink) {
  cache_events_ = sink;
  cache_->Attach(CacheContextOf(alloc_.get(), config_.page_size, cache_events_));
}

OrderContext Scheduler::MakeOrderContext() const {
  OrderContext ctx{*cache_, now_()};
  ctx.processed_prefill_tokens = processed_prefill_tokens_;
  ctx.page_size = config_.page_size;
  return ctx;
}

void Scheduler::StashChunkedReq() {
  if (chunked_req_ == nullptr) return;
  // Only KV that exists is published: a chunk that got no budget has extend_end == prefix.
  if (chunked_req_->extend_end > static_cast<int32_t>(chunked_req_->prefix_indices.size()) &&
      chunked_req_->kv_len >= chunked_req_->extend_end)
    cache_adapter_.CacheUnfinishedReq(*cache_, *chunked_req_);
}

void Scheduler::MergeLastBatch() {
  if (last_batch_ == nullptr || last_batch_ == &running_) {
    if (running_.Filter()) running_.batch_is_full = false;
    return;
  }
  if (last_batch_->is_extend()) {
    if (last_batch_->Filter(chunked_req_)) running_.batch_is_full = false;
    running_.Merge(*last_batch_);
    last_batch_->Clear();
  }
  // Finished requests leave the running batch now, so they can be reaped.
  if (running_.Filter()) running_.batch_is_full = false;
  last_batch_ = nullptr;
}

void Scheduler::RecordEntries(std::span<Req* const> reqs, bool decode, Plan* plan) {
  for (Req* r : reqs) {
    PlanEntry e{r, r->epoch, PlanEntry::kDecode};
    if (!decode) {
      e.kind = r->extend_end < r->seq_len() ? PlanEntry::kChunk : PlanEntry::kPrefill;
      if (e.kind == PlanEntry::kChunk) ++r->inflight_chunks;
    }
    ++r->inflight_batches;
    plan->entries.push_back(e);
  }
}

// ---- releasing -----------------------------------------------------------------------------

void Scheduler::ReleaseFinished(Req* r) {
  const bool publish = r->finish.kind != FinishKind::kAbort;
  cache_adapter_.CacheFinishedReq(*cache_, *r, publish);
  pool_->Free(r->req_pool_idx);
  r->req_pool_idx = -1;
  r->state = ReqState::kFinished;
  if (r->finish.kind == FinishKind::kAbort) ++stats_.aborted; else ++stats_.finished;
  requests_.Bury(r);
}

void Scheduler::ReleaseForRetract(Req* r) {
  cache_adapter_.CacheFinishedReq(*cache_, *r, /*insert=*/false);
  pool_->Free(r->req_pool_idx);
  r->ResetForRetract();
}

// ---- checks ----------------------------------------------------------------------------------

bool Scheduler::idle() const { return no_requests() && requests_.all_recycled(); }

bool Scheduler::no_requests() const {
  return waiting_.empty() && running_.empty() && chunked_req_ == nullptr && plans_out_ == 0 &&
         (last_batch_ == nullptr || last_batch_->empty() || last_batch_ == &running_) && !swaps_.draining();
}

}  // namespace radixserve::sched
