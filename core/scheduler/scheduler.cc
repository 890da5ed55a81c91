// The loop. Each step of SCHEDULER_SPEC 1.2 / 1.3 / 1.4 is one call below; the
// steps' logic lives in PrefillAdder, DecodeMemory, BatchPreparer,
// FinishChecker, OutputStreamer and the policy / cache plugins.
#include "core/scheduler/scheduler.h"

#include "core/scheduler/paging.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

namespace radixserve::sched {
namespace {

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

PolicyPtr OwnPolicy(std::unique_ptr<SchedulePolicy> p) {
  return PolicyPtr(p.release(), [](SchedulePolicy* x) { delete x; });
}
CachePtr OwnCache(std::unique_ptr<PrefixCache> c) {
  return CachePtr(c.release(), [](PrefixCache* x) { delete x; });
}

Scheduler::Scheduler(const SchedulerConfig& config, Worker* worker, CachePtr cache, PolicyPtr policy,
                     OutputSink sink, DetokenizeFn detokenize)
    : config_(config),
      worker_(worker),
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
             config.new_token_ratio_decay_steps) {
  if (config_.per_req_token_overhead < 0) config_.per_req_token_overhead = config_.page_size;
  config_.max_total_tokens = alloc_->size();
  cache_->Attach({alloc_.get(), config_.page_size, cache_events_});
  pipeline_depth_ = std::max(1, worker_->pipeline_depth());
  if (pipeline_depth_ > 1 && config_.enable_mixed_chunk) {
    // A mixed batch would carry every running request, also those whose last step is still at a stage.
    LOG(WARNING) << "mixed chunks are off: the worker has " << pipeline_depth_ << " pipeline stages";
    config_.enable_mixed_chunk = false;
  }
  if (config_.overlap) async_ = std::make_unique<AsyncWorker>(worker_);
  now_ = MonotonicSeconds;
}

Scheduler::~Scheduler() {
  // Let in-flight batches finish before the state they point into goes away.
  if (async_)
    for (Inflight* f : inflight_) (void)async_->Wait(&f->job);
  async_.reset();
}

// ---- thread-safe inputs ------------------------------------------------------------

void Scheduler::Submit(TokenizedRequest req) {
  std::lock_guard<std::mutex> lock(inbox_mu_);
  inbox_.push_back(std::move(req));
}

void Scheduler::Abort(uint64_t rid) {
  std::lock_guard<std::mutex> lock(inbox_mu_);
  abort_inbox_.push_back(rid);
}

void Scheduler::SwapPolicy(PolicyPtr policy, SwapDoneFn done) {
  SwapDoneFn superseded;
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    staged_policy_ = std::move(policy);
    superseded = std::exchange(staged_policy_done_, std::move(done));
  }
  if (superseded) superseded(Status::Ok(), "superseded by a newer policy swap before it took effect");
}

void Scheduler::SwapCache(CachePtr cache, CacheSwapMode mode, SwapDoneFn done) {
  std::lock_guard<std::mutex> lock(inbox_mu_);
  staged_cache_ = std::move(cache);
  staged_mode_ = mode;
  staged_done_ = std::move(done);
}

void Scheduler::WorkerLost(CachePtr fresh, SwapDoneFn done) {
  std::lock_guard<std::mutex> lock(inbox_mu_);
  staged_cache_ = std::move(fresh);
  staged_mode_ = CacheSwapMode::kFlush;
  staged_done_ = std::move(done);
  staged_worker_lost_ = true;
}

// ---- the loop ------------------------------------------------------------------------

Status Scheduler::Step(bool* did_work) {
  bool work = false;
  Status s = config_.overlap ? StepOverlap(&work) : StepNormal(&work);
  if (did_work) *did_work = work;
  ++stats_.iterations;
  if (s.ok() && config_.check_invariants_every_iteration) s = CheckInvariants();
  return s;
}

// SCHEDULER_SPEC 1.2.
Status Scheduler::StepNormal(bool* did_work) {
  ApplyStagedSwaps();
  RecvRequests();
  ScheduleBatch* batch = nullptr;
  RS_RETURN_IF_ERROR(GetNextBatchToRun(&batch));
  if (batch != nullptr) {
    RS_RETURN_IF_ERROR(RunBatch(batch));
    RS_RETURN_IF_ERROR(PopAndProcess());
    *did_work = true;
    current_ = nullptr;
  } else {
    RS_RETURN_IF_ERROR(OnIdle());
    *did_work = !waiting_.empty() || draining_;
  }
  last_batch_ = batch;
  return Status::Ok();
}

// SCHEDULER_SPEC 1.3: launch batch N+1, then process batch N while it runs.
Status Scheduler::StepOverlap(bool* did_work) {
  ApplyStagedSwaps();
  RecvRequests();
  ScheduleBatch* batch = nullptr;
  RS_RETURN_IF_ERROR(GetNextBatchToRun(&batch));
  const bool no_overlap = config_.disable_consecutive_prefill_overlap && batch != nullptr && batch->is_extend() &&
                          last_batch_ != nullptr && last_batch_->is_extend();
  if (no_overlap) RS_RETURN_IF_ERROR(PopAndProcess());
  if (batch != nullptr) RS_RETURN_IF_ERROR(RunBatch(batch));
  if (pipeline_depth_ > 1) {
    // Pipeline stages: up to one micro-batch per stage at the worker, plus the one just launched;
    // the oldest result is awaited once that many are out, or when nothing else could be launched.
    const bool full = inflight_.size() > static_cast<size_t>(pipeline_depth_);
    if (!inflight_.empty() && (full || batch == nullptr)) {
      RS_RETURN_IF_ERROR(PopAndProcess());
    } else if (batch == nullptr) {
      RS_RETURN_IF_ERROR(OnIdle());
    }
  } else if (!inflight_.empty() && inflight_.front() != current_) {
    RS_RETURN_IF_ERROR(PopAndProcess());
  } else if (batch == nullptr) {
    RS_RETURN_IF_ERROR(OnIdle());
  }
  *did_work = batch != nullptr || !inflight_.empty() || !waiting_.empty() || draining_;
  last_batch_ = batch;
  current_ = nullptr;
  return Status::Ok();
}

Status Scheduler::RunUntilIdle(int64_t max_iterations) {
  for (int64_t i = 0; i < max_iterations; ++i) {
    bool work = false;
    RS_RETURN_IF_ERROR(Step(&work));
    if (!work && idle()) return Status::Ok();
  }
  return Status::FailedPrecondition("scheduler not idle after " + std::to_string(max_iterations) + " iterations");
}

// SCHEDULER_SPEC 1.4, in step order.
Status Scheduler::GetNextBatchToRun(ScheduleBatch** batch) {
  *batch = nullptr;
  ProcessPendingChunkedAbort();  // 1
  AbortOnTimeouts();             // 2
  StashChunkedReq();             // 3
  MergeLastBatch();              // 4
  Reap();
  RS_RETURN_IF_ERROR(GetNewBatchPrefill(batch));  // 6
  if (*batch != nullptr) return Status::Ok();     // 7: prefill has priority
  return UpdateRunningBatch(batch);
}

Status Scheduler::RunBatch(ScheduleBatch* batch) {
  Inflight* f = current_;
  f->fb.batch_id = ++batch_id_;
  f->fb.mode = batch->mode;
  TakeReleases(&f->fb.released_rids);
  switch (batch->mode) {
    case ForwardMode::kExtend: ++stats_.prefill_batches; break;
    case ForwardMode::kDecode: ++stats_.decode_batches; break;
    case ForwardMode::kMixed: ++stats_.mixed_batches; break;
    case ForwardMode::kIdle: break;
  }
  stats_.max_running = std::max<int32_t>(stats_.max_running, static_cast<int32_t>(batch->size()));
  inflight_.push_back(f);
  stats_.max_inflight = std::max<int32_t>(stats_.max_inflight, static_cast<int32_t>(inflight_.size()));
  f->job.batch = &f->fb;
  f->job.result = &f->result;
  if (async_) {
    async_->Submit(&f->job);
  } else {
    f->job.status = worker_->Forward(f->fb, &f->result);
    f->job.done = true;
  }
  return Status::Ok();
}

Status Scheduler::PopAndProcess() {
  if (inflight_.empty()) return Status::Ok();
  Inflight* f = inflight_.front();
  inflight_.pop_front();
  Status s = async_ ? async_->Wait(&f->job) : f->job.status;
  if (s.ok() && f->result.next_token_ids.size() != f->entries.size())
    s = Status::Internal("worker returned " + std::to_string(f->result.next_token_ids.size()) + " tokens for " +
                         std::to_string(f->entries.size()) + " requests");
  if (s.ok()) {
    s = ProcessBatchResult(f);
  } else {
    FailBatch(f, s);  // every request of the batch ends with the error; the loop goes on
    s = Status::Ok();
  }
  free_inflight_.push_back(f);
  return s;
}

// A forward step failed (worker error, timeout, lost worker): its requests cannot continue, since
// their KV for this step may not exist. Each ends with an abort carrying the worker's message.
void Scheduler::FailBatch(Inflight* f, const Status& error) {
  LOG(ERROR) << "forward batch " << f->fb.batch_id << " failed, aborting its requests: " << error.ToString();
  ++stats_.failed_batches;
  alloc_->FreeGroupBegin();
  for (const Entry& e : f->entries) {
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
  f->entries.clear();
}

// SCHEDULER_SPEC 7.3.
Status Scheduler::ProcessBatchResult(Inflight* f) {
  alloc_->FreeGroupBegin();
  for (size_t i = 0; i < f->entries.size(); ++i) {
    const Entry& e = f->entries[i];
    Req* r = e.req;
    --r->inflight_batches;
    if (r->epoch != e.epoch || r->finished()) continue;  // retracted/aborted meanwhile, or overlap leftover
    if (e.kind == Entry::kChunk) {
      --r->inflight_chunks;
      continue;
    }
    r->tokens.push_back(f->result.next_token_ids[i]);
    if (r->return_logprob && i < f->result.logprobs.size()) r->output_logprobs.push_back(f->result.logprobs[i]);
    if (r->top_logprobs_num > 0) {  // exactly top_logprobs_num entries per token, padded with id -1
      const int32_t n = f->result.top_n;
      for (int32_t k = 0; k < r->top_logprobs_num; ++k) {
        const bool have = k < n && (i * n + k) < f->result.top_ids.size();
        r->output_top_ids.push_back(have ? f->result.top_ids[i * n + k] : -1);
        r->output_top_logprobs.push_back(have ? f->result.top_logprobs[i * n + k] : 0.0f);
      }
    }
    r->state = ReqState::kRunning;
    checker_.Check(*r);
    if (r->finished()) {
      ReleaseFinished(r);
    } else if (e.kind == Entry::kPrefill) {
      cache_adapter_.CacheUnfinishedReq(*cache_, *r);
    }
    streamer_.Consider(*r);
  }
  alloc_->FreeGroupEnd();
  streamer_.Flush(sink_);
  f->entries.clear();
  return Status::Ok();
}

Status Scheduler::OnIdle() {
  ratio_.Reset();
  if (!no_requests()) return Status::Ok();
  Reap();
  while (!pending_release_.empty()) RS_RETURN_IF_ERROR(SendReleases());
  return CheckInvariants();
}

// Requests recycled before this batch was built, so none of them is in it; at most one row's worth
// per batch (max_running_requests), the bound the batch message is sized for.
void Scheduler::TakeReleases(std::vector<uint64_t>* out) {
  const size_t cap = static_cast<size_t>(config_.max_running_requests);
  if (pending_release_.size() <= cap) {
    out->swap(pending_release_);
    pending_release_.clear();
    return;
  }
  out->assign(pending_release_.begin(), pending_release_.begin() + static_cast<std::ptrdiff_t>(cap));
  pending_release_.erase(pending_release_.begin(), pending_release_.begin() + static_cast<std::ptrdiff_t>(cap));
}

Status Scheduler::SendReleases() {
  AcquireInflight();
  release_batch_.mode = ForwardMode::kIdle;
  RS_RETURN_IF_ERROR(RunBatch(&release_batch_));
  RS_RETURN_IF_ERROR(PopAndProcess());
  current_ = nullptr;
  return Status::Ok();
}

int64_t Scheduler::num_unfinished() const {
  int64_t n = 0;
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    n += static_cast<int64_t>(inbox_.size());
  }
  for (const auto& [rid, r] : reqs_) n += r->finished() ? 0 : 1;
  return n;
}

int64_t Scheduler::worker_states() const {
  int64_t n = static_cast<int64_t>(pending_release_.size());
  for (const auto& [rid, r] : reqs_) n += r->worker_state ? 1 : 0;
  return n;
}

// ---- iteration boundary: plugin swaps ------------------------------------------------

void Scheduler::ApplyStagedSwaps() {
  PolicyPtr policy;
  SwapDoneFn policy_done;
  CachePtr cache;
  CacheSwapMode mode;
  SwapDoneFn done;
  bool worker_lost;
  {
    std::lock_guard<std::mutex> lock(inbox_mu_);
    policy = std::move(staged_policy_);
    policy_done = std::move(staged_policy_done_);
    cache = std::move(staged_cache_);
    mode = staged_mode_;
    done = std::move(staged_done_);
    worker_lost = std::exchange(staged_worker_lost_, false);
  }
  if (policy) policy_ = std::move(policy);  // the old one is destroyed here, between iterations
  if (policy_done) policy_done(Status::Ok(), "");
  if (cache) {
    if (draining_ && drain_done_) drain_done_(Status::FailedPrecondition("superseded by a newer cache swap"), "");
    drain_cache_ = std::move(cache);
    drain_done_ = std::move(done);
    drain_started_ = stats_.iterations;
    draining_ = true;
    flush_retracted_ = -1;
    if (mode == CacheSwapMode::kFlush) {
      while (!inflight_.empty()) (void)PopAndProcess();
      if (worker_lost) {  // the new worker holds nothing: every request sends its state record again
        for (auto& [rid, r] : reqs_) r->worker_state = false;
        pending_release_.clear();
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
      flush_retracted_ = n;
    }
  }
  if (draining_ && DrainComplete()) {
    const int64_t evicted = cache_->evictable_size();
    Status s = cache_->Reset();
    std::string report;
    if (s.ok()) {
      cache_ = std::move(drain_cache_);
      cache_->Attach({alloc_.get(), config_.page_size, cache_events_});
      report = flush_retracted_ >= 0
                   ? "flushed: retracted " + std::to_string(flush_retracted_) + " running requests, dropped " +
                         std::to_string(evicted) + " cached tokens"
                   : "drained: waited " + std::to_string(stats_.iterations - drain_started_) +
                         " iterations for running requests, dropped " + std::to_string(evicted) + " cached tokens";
    }
    draining_ = false;
    drain_cache_.reset();
    if (drain_done_) drain_done_(s, report);
    drain_done_ = nullptr;
  }
}

bool Scheduler::DrainComplete() const {
  return running_.empty() && chunked_req_ == nullptr && inflight_.empty() &&
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

Req* Scheduler::NewReq() {
  if (free_reqs_.empty()) {
    req_storage_.push_back(std::make_unique<Req>());
    return req_storage_.back().get();
  }
  Req* r = free_reqs_.back();
  free_reqs_.pop_back();
  std::vector<int32_t> tokens = std::move(r->tokens);
  std::vector<int32_t> prefix = std::move(r->prefix_indices);
  *r = Req();
  r->tokens = std::move(tokens);
  r->tokens.clear();
  r->prefix_indices = std::move(prefix);
  r->prefix_indices.clear();
  return r;
}

// Validation and max_new_tokens clipping at arrival (SCHEDULER_SPEC 4.3, 7.1).
void Scheduler::AddNewRequest(TokenizedRequest&& g) {
  Req* r = NewReq();
  r->rid = g.rid;
  r->tokens = std::move(g.input_ids);
  r->input_len = static_cast<int32_t>(r->tokens.size());
  r->sampling = g.sampling;
  r->stop_token_ids = std::move(g.stop_token_ids);
  r->stop_strs = std::move(g.stop_strs);
  for (const auto& s : r->stop_strs) r->stop_str_max_len = std::max<int32_t>(r->stop_str_max_len, s.size());
  r->stream = g.stream;
  r->return_logprob = g.return_logprob;
  r->top_logprobs_num = r->return_logprob ? std::clamp(g.top_logprobs_num, 0, 20) : 0;
  r->has_priority = g.priority.has_value();
  r->priority = g.priority.value_or(0);
  r->arrival_seq = ++arrival_seq_;
  r->wait_entry_time = now_();
  r->arrival_processed_tokens = processed_prefill_tokens_;
  r->routing_key = std::move(g.routing_key);
  r->cache_salt = std::move(g.cache_salt);
  r->grammar = std::move(g.grammar);
  if (reqs_.count(r->rid)) {
    r->rid = g.rid;
    FinishWithoutRunning(r, FinishReason::Abort("duplicate request id " + std::to_string(g.rid), 400));
    return;
  }
  reqs_[r->rid] = r;

  const int64_t P = config_.page_size;
  const int64_t in = r->input_len;
  const int64_t ceil_in = PageCeil(in, P);
  const int64_t limit = std::min<int64_t>(config_.max_req_len - in - 1, config_.max_total_tokens - ceil_in - P - 1);
  if (in == 0) {
    FinishWithoutRunning(r, FinishReason::Abort("empty prompt", 400));
    return;
  }
  for (int64_t i = 0; i < in; ++i) {
    const int32_t t = r->tokens[static_cast<size_t>(i)];
    if (t < 0 || t >= config_.vocab_size) {  // the worker could not embed it: refuse this request alone
      FinishWithoutRunning(r, FinishReason::Abort("token id " + std::to_string(t) + " at position " +
                                                      std::to_string(i) + " is outside the vocabulary [0, " +
                                                      std::to_string(config_.vocab_size) + ")",
                                                  400));
      return;
    }
  }
  if (limit < 1) {
    std::string why = in >= config_.max_req_len - 1
                          ? "prompt of " + std::to_string(in) + " tokens leaves no room for output in the context of " +
                                std::to_string(config_.max_req_len - 1) + " tokens"
                          : "prompt of " + std::to_string(in) + " tokens can never fit: the KV pool holds " +
                                std::to_string(config_.max_total_tokens) + " tokens";
    FinishWithoutRunning(r, FinishReason::Abort(why, 400));
    return;
  }
  r->sampling.max_new_tokens = static_cast<int32_t>(std::min<int64_t>(r->sampling.max_new_tokens, limit));
  r->sampling.min_new_tokens = std::min(r->sampling.min_new_tokens, r->sampling.max_new_tokens);

  if (static_cast<int64_t>(waiting_.size()) >= config_.max_queued_requests) {
    queue_view_.assign(waiting_.begin(), waiting_.end());
    int32_t victim = policy_->ChooseQueueVictim(queue_view_, *r);
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

void Scheduler::FinishWithoutRunning(Req* r, FinishReason reason) {
  r->finish = std::move(reason);
  r->state = ReqState::kFinished;
  ++stats_.aborted;
  streamer_.Consider(*r);
  streamer_.Flush(sink_);
  graveyard_.push_back(r);
}

// SCHEDULER_SPEC 7.6.
void Scheduler::AbortRequest(uint64_t rid) {
  auto it = reqs_.find(rid);
  if (it == reqs_.end()) return;
  Req* r = it->second;
  if (r->finished()) return;
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

// ---- GetNextBatchToRun pieces ------------------------------------------------------------

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

void Scheduler::set_cache_events(CacheEventSink* sink) {
  cache_events_ = sink;
  cache_->Attach({alloc_.get(), config_.page_size, cache_events_});
}

SaltStats& Scheduler::StatsOfSalt(const std::string& salt) {
  auto it = salt_stats_.find(salt);
  if (it != salt_stats_.end()) return it->second;
  // Tenants can be many; the table is bounded (one entry sums the rest).
  if (salt_stats_.size() >= kMaxTrackedSalts) return salt_stats_[kOtherSalts];
  return salt_stats_[salt];
}

// Fair prefill shares a pass only while a short request (one fair_prefill_chunk holds) waits
// behind a longer one; otherwise long prompts take whole chunks, as without it.
bool Scheduler::ShortPrefillWaiting() const {
  constexpr size_t kScan = 128;  // bounds the matching cost of a long queue
  const size_t n = std::min(waiting_.size(), kScan);
  bool short_one = false, long_one = chunked_req_ != nullptr;
  for (size_t i = 0; i < n && !(short_one && long_one); ++i) {
    const Req& r = *waiting_[i];
    const int32_t match = cache_->shares_prefixes() ? cache_->PeekMatchLength(MatchKeyOf(r)) : 0;
    if (UncachedPrefillWork(r, match) <= config_.fair_prefill_chunk) short_one = true; else long_one = true;
  }
  return short_one && long_one;
}

OrderContext Scheduler::MakeOrderContext() const {
  OrderContext ctx{*cache_, now_()};
  ctx.processed_prefill_tokens = processed_prefill_tokens_;
  ctx.running = std::span<const Req* const>(running_.reqs.data(), running_.reqs.size());
  ctx.page_size = config_.page_size;
  return ctx;
}

void Scheduler::OrderWaitingQueue() {
  queue_view_.assign(waiting_.begin(), waiting_.end());
  const size_t n = waiting_.size();
  const char* fault = nullptr;
  std::string what;
  try {
    policy_->Order(queue_view_, MakeOrderContext(), &order_);
  } catch (const std::exception& e) {
    fault = "threw";
    what = e.what();
  } catch (...) {
    fault = "threw";
    what = "a non-standard exception";
  }
  if (fault == nullptr) {
    // A permutation of [0, n): right size, every index in range and seen once.
    if (order_.size() != n) {
      fault = "returned a wrong-sized order";
      what = std::to_string(order_.size()) + " entries for " + std::to_string(n) + " waiting requests";
    } else {
      order_seen_.assign(n, 0);
      for (int32_t i : order_) {
        if (i < 0 || static_cast<size_t>(i) >= n || order_seen_[i]) {
          fault = "returned an order that is not a permutation";
          what = "index " + std::to_string(i) + (i < 0 || static_cast<size_t>(i) >= n ? " out of range" : " repeated");
          break;
        }
        order_seen_[i] = 1;
      }
    }
  }
  if (fault == nullptr) {
    // A cache-aware pass matched every waiting request; in SGLang that match refreshes LRU order.
    if (policy_->matched_prefixes()) {
      for (const Req* r : queue_view_) cache_->TouchPrefix(CacheKey(r->tokens, r->cache_salt));
    }
    return;
  }
  ++stats_.policy_faults;
  // One line per fault would flood the log when a broken plugin faults every iteration.
  LOG_EVERY_N(WARNING, 1000) << "policy '" << policy_->name() << "' " << fault << " (" << what
                             << "); FCFS used for this iteration (" << stats_.policy_faults << " faults so far)";
  FcfsOrder(n, &order_);
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

void Scheduler::Reap() {
  size_t w = 0;
  for (Req* r : graveyard_) {
    if (r->inflight_batches > 0) {
      graveyard_[w++] = r;
      continue;
    }
    auto it = reqs_.find(r->rid);
    if (it != reqs_.end() && it->second == r) reqs_.erase(it);
    if (r->worker_state) pending_release_.push_back(r->rid);  // rides on the next batch
    free_reqs_.push_back(r);
  }
  graveyard_.resize(w);
}

void Scheduler::InitNextRoundInput(Req* r) {
  r->InitNextRoundInput();
  r->prefix_indices.clear();
  // At least one token is recomputed so the forward produces logits.
  r->last_node = cache_->MatchPrefix(CacheKey(std::span<const int32_t>(r->tokens.data(), r->extend_end - 1), r->cache_salt),
                                     &r->prefix_indices);
  r->num_matched_prefix_tokens = static_cast<int32_t>(r->prefix_indices.size());
}

Status Scheduler::GetNewBatchPrefill(ScheduleBatch** out) {
  if (policy_->preemption_enabled()) running_.batch_is_full = false;
  if ((running_.batch_is_full || waiting_.empty() || draining_) && chunked_req_ == nullptr) return Status::Ok();
  const int32_t running_bs = static_cast<int32_t>(running_.size());
  auto allocatable = [&] {
    return std::min(config_.max_running_requests - running_bs, pool_->available_size());
  };
  if (allocatable() <= 0 && chunked_req_ == nullptr && !policy_->preemption_enabled()) {
    running_.batch_is_full = true;
    return Status::Ok();
  }

  // Order the waiting queue (the policy sees a read-only view and a const cache).
  if (!draining_ && !waiting_.empty()) {
    OrderWaitingQueue();
    sorted_.clear();
    for (int32_t i : order_) sorted_.push_back(waiting_[i]);
    waiting_.swap(sorted_);
  }

  PrefillAdderOptions opt;
  opt.page_size = config_.page_size;
  opt.max_prefill_tokens = config_.max_prefill_tokens;
  opt.chunked_prefill_size = config_.chunked_prefill_size;
  const bool mixed = config_.enable_mixed_chunk && config_.chunked_prefill_size > 0;
  opt.mixed_decode_tokens = mixed ? running_bs : 0;
  opt.clip_max_new_tokens = config_.clip_max_new_tokens;
  opt.per_req_token_overhead = config_.per_req_token_overhead;
  opt.new_token_ratio = ratio_.value();
  const bool waiters = !draining_ && !waiting_.empty();
  if (config_.fair_prefill_chunk > 0 && waiters && ShortPrefillWaiting()) {
    opt.per_req_chunk_cap = config_.fair_prefill_chunk;
    opt.skip_when_chunk_busy = true;
  }
  const bool chunking = config_.chunked_prefill_size > 0;
  if (chunked_req_ != nullptr && chunking && waiters) {
    const int64_t budget = config_.chunked_prefill_size - opt.mixed_decode_tokens;
    queue_view_.assign(waiting_.begin(), waiting_.end());
    opt.chunked_req_limit = policy_->ChunkedReqLimit(*chunked_req_, queue_view_, MakeOrderContext(), budget);
  }
  PrefillAdder adder(opt, cache_.get(), alloc_.get(), running_.reqs, &can_run_);
  preempted_.clear();

  if (chunked_req_ != nullptr) {
    chunked_req_->InitNextRoundInput();
    chunked_req_ = adder.AddChunkedReq(chunked_req_);
    if (adder.chunk_capped()) ++stats_.chunk_caps;
  }
  if (!draining_) {
    for (Req* r : waiting_) {
      if (static_cast<int32_t>(can_run_.size()) >= allocatable()) running_.batch_is_full = true;
      InitNextRoundInput(r);
      if (running_.batch_is_full) {
        if (!(policy_->preemption_enabled() && PreemptToSchedule(r, &adder))) break;
      }
      AddReqResult res = adder.AddOneReq(r);
      if (res == AddReqResult::kSkip) {  // fair prefill: a chunk is busy, shorter ones behind may fit
        ++stats_.fair_skips;
        continue;
      }
      if (res != AddReqResult::kContinue) {
        if (res == AddReqResult::kNoToken) running_.batch_is_full = true;
        break;
      }
    }
  }
  if (can_run_.empty()) {
    for (Req* p : preempted_) waiting_.push_back(p);
    return Status::Ok();
  }
  // The admitted ones leave the queue (fair prefill may have passed over some, so they need not be
  // a prefix of it); everything else in it is waiting.
  const bool timeouts_on = config_.running_timeout_s > 0;
  const double now = timeouts_on ? now_() : 0;
  for (Req* r : can_run_)
    if (r->req_pool_idx < 0) r->state = ReqState::kPrefill;
  waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(),
                                [](const Req* r) { return r->state != ReqState::kWaiting; }),
                 waiting_.end());
  for (Req* p : preempted_) waiting_.push_back(p);
  if (adder.new_chunked_req() != nullptr) chunked_req_ = adder.new_chunked_req();
  for (Req* r : can_run_) {
    if (r->start_time == 0) r->start_time = timeouts_on ? now : 1;  // nonzero: has run
    SaltStats* salt = r->cache_salt.empty() ? nullptr : &StatsOfSalt(r->cache_salt);
    if (r->req_pool_idx < 0) {
      r->cache_protected_len = static_cast<int32_t>(r->prefix_indices.size());
      r->cached_tokens = std::max(r->cached_tokens, r->cache_protected_len);
      stats_.cached_prompt_tokens += r->cache_protected_len;
      if (salt) salt->cached_prompt_tokens += r->cache_protected_len;
      r->is_retracted = false;
      r->state = ReqState::kPrefill;
    }
    stats_.computed_prompt_tokens += r->extend_len();
    if (salt) salt->computed_prompt_tokens += r->extend_len();
    processed_prefill_tokens_ += r->extend_len();
  }

  AcquireInflight();
  prefill_.Clear();
  prefill_.reqs.assign(can_run_.begin(), can_run_.end());
  prefill_.mode = ForwardMode::kExtend;
  RS_RETURN_IF_ERROR(preparer_.PrepareForExtend(prefill_.reqs, cache_.get(), &current_->fb));
  RecordEntries(prefill_.reqs, /*decode=*/false);

  // Mixed chunked prefill (SCHEDULER_SPEC 1.5): running requests decode inside this batch.
  bool logprobs = false;
  for (Req* r : prefill_.reqs) logprobs |= r->return_logprob;
  for (Req* r : running_.reqs) logprobs |= r->return_logprob;
  if (mixed && !running_.empty() && !logprobs) {
    running_.Filter();
    if (!running_.empty() && decode_mem_.Check(running_.reqs, cache_.get())) {
      RS_RETURN_IF_ERROR(preparer_.PrepareForDecode(running_.reqs, cache_.get(), &current_->fb));
      RecordEntries(running_.reqs, /*decode=*/true);
      prefill_.decoding_reqs.assign(running_.reqs.begin(), running_.reqs.end());
      prefill_.reqs.insert(prefill_.reqs.end(), running_.reqs.begin(), running_.reqs.end());
      prefill_.mode = ForwardMode::kMixed;
      running_.Clear();
    }
  }
  *out = &prefill_;
  return Status::Ok();
}

void Scheduler::AcquireInflight() {
  if (free_inflight_.empty()) {
    current_ = inflight_storage_.emplace_back(std::make_unique<Inflight>()).get();
  } else {
    current_ = free_inflight_.back();
    free_inflight_.pop_back();
  }
  current_->fb.Clear();
  current_->entries.clear();
}

void Scheduler::RecordEntries(std::span<Req* const> reqs, bool decode) {
  for (Req* r : reqs) {
    Entry e{r, r->epoch, Entry::kDecode};
    if (!decode) {
      e.kind = r->extend_end < r->seq_len() ? Entry::kChunk : Entry::kPrefill;
      if (e.kind == Entry::kChunk) ++r->inflight_chunks;
    }
    ++r->inflight_batches;
    current_->entries.push_back(e);
  }
}

// SCHEDULER_SPEC 2.4 preempt_to_schedule.
bool Scheduler::PreemptToSchedule(Req* req, PrefillAdder* adder) {
  victims_.clear();
  for (Req* rr : running_.reqs)
    if (!rr->finished()) victims_.push_back(rr);
  std::stable_sort(victims_.begin(), victims_.end(),
                   [&](const Req* a, const Req* b) { return policy_->PreemptBefore(*a, *b); });
  const int64_t clip = adder->clip();
  double need = static_cast<double>(req->extend_end - static_cast<int64_t>(req->prefix_indices.size()) +
                                    std::min<int64_t>(req->max_new_tokens(), clip)) -
                static_cast<double>(adder->rem_total_tokens());
  size_t picked = 0;
  for (Req* rr : victims_) {
    if (!policy_->MayPreempt(*req, *rr)) break;
    ++picked;
    need -= static_cast<double>(std::min<int64_t>(rr->max_new_tokens() - rr->output_len(), clip)) *
            adder->new_token_ratio();
    need -= static_cast<double>(rr->kv_len - rr->cache_protected_len);  // its private KV comes back
    if (need <= 0) break;
  }
  if (picked == 0 || need > 0) return false;
  for (size_t i = 0; i < picked; ++i) {
    Req* rr = victims_[i];
    adder->ReleaseRunningReservation(*rr);
    ReleaseForRetract(rr);
    preempted_.push_back(rr);
    running_.reqs.erase(std::find(running_.reqs.begin(), running_.reqs.end(), rr));
  }
  stats_.preemptions += static_cast<int64_t>(picked);
  running_.batch_is_full = false;
  return true;
}

// The decode step (SCHEDULER_SPEC 1.4 step 7, 4).
Status Scheduler::UpdateRunningBatch(ScheduleBatch** out) {
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
  if (pipeline_depth_ > 1) return PipelineDecodeBatch(out);
  AcquireInflight();
  running_.mode = ForwardMode::kDecode;
  RS_RETURN_IF_ERROR(preparer_.PrepareForDecode(running_.reqs, cache_.get(), &current_->fb));
  RecordEntries(running_.reqs, /*decode=*/true);
  *out = &running_;
  return Status::Ok();
}

// A decode micro-batch for a pipelined worker: running requests with no step in flight (their
// last token is known, so no stage waits for another), at most a 1/depth share of the running
// batch, so that the stages work on disjoint micro-batches at once.
Status Scheduler::PipelineDecodeBatch(ScheduleBatch** out) {
  const size_t share = (running_.size() + static_cast<size_t>(pipeline_depth_) - 1) / static_cast<size_t>(pipeline_depth_);
  micro_batch_.Clear();
  for (Req* r : running_.reqs) {
    if (micro_batch_.size() == share) break;
    if (r->inflight_batches == 0 && !r->finished()) micro_batch_.reqs.push_back(r);
  }
  if (micro_batch_.empty()) return Status::Ok();  // every running request has a step at a stage
  AcquireInflight();
  micro_batch_.mode = ForwardMode::kDecode;
  RS_RETURN_IF_ERROR(preparer_.PrepareForDecode(micro_batch_.reqs, cache_.get(), &current_->fb));
  RecordEntries(micro_batch_.reqs, /*decode=*/true);
  *out = &micro_batch_;
  return Status::Ok();
}

// ---- releasing -----------------------------------------------------------------------------

void Scheduler::ReleaseFinished(Req* r) {
  const bool publish = r->finish.kind != FinishKind::kAbort;
  cache_adapter_.CacheFinishedReq(*cache_, *r, publish);
  pool_->Free(r->req_pool_idx);
  r->req_pool_idx = -1;
  r->state = ReqState::kFinished;
  if (r->finish.kind == FinishKind::kAbort) ++stats_.aborted; else ++stats_.finished;
  graveyard_.push_back(r);
}

void Scheduler::ReleaseForRetract(Req* r) {
  cache_adapter_.CacheFinishedReq(*cache_, *r, /*insert=*/false);
  pool_->Free(r->req_pool_idx);
  r->ResetForRetract();
}

// ---- checks ----------------------------------------------------------------------------------

bool Scheduler::idle() const { return no_requests() && graveyard_.empty() && pending_release_.empty(); }

bool Scheduler::no_requests() const {
  return waiting_.empty() && running_.empty() && chunked_req_ == nullptr && inflight_.empty() &&
         (last_batch_ == nullptr || last_batch_->empty() || last_batch_ == &running_) && !draining_;
}

Status Scheduler::CheckInvariants() const {
  RS_RETURN_IF_ERROR(cache_->SelfCheck());
  const int64_t P = config_.page_size;
  int64_t held = 0, rows = 0;
  for (const auto& [rid, r] : reqs_) {
    if (r->req_pool_idx < 0) continue;
    ++rows;
    held += PageCeil(r->kv_len, P) - r->cache_protected_len;
  }
  const int64_t total = alloc_->available_size() + cache_->evictable_size() + cache_->protected_size() + held;
  if (total != alloc_->size())
    return Status::Internal("KV accounting: free " + std::to_string(alloc_->available_size()) + " + evictable " +
                            std::to_string(cache_->evictable_size()) + " + protected " +
                            std::to_string(cache_->protected_size()) + " + held by requests " +
                            std::to_string(held) + " != total " + std::to_string(alloc_->size()));
  if (pool_->size() - pool_->available_size() != rows)
    return Status::Internal("req_to_token rows in use " + std::to_string(pool_->size() - pool_->available_size()) +
                            " but " + std::to_string(rows) + " requests hold one");
  if (idle()) {
    if (cache_->protected_size() != 0)
      return Status::Internal("token_to_kv_pool_allocator memory leak detected! protected " +
                              std::to_string(cache_->protected_size()) + " tokens while idle");
    if (alloc_->available_size() + cache_->evictable_size() != alloc_->size()) {
      std::string who;
      for (const auto& [rid, r] : reqs_)
        if (r->req_pool_idx >= 0)
          who += " rid " + std::to_string(rid) + " (state " + std::to_string(static_cast<int>(r->state)) +
                 ", kv_len " + std::to_string(r->kv_len) + ", finished " + std::to_string(r->finished()) +
                 ", inflight " + std::to_string(r->inflight_batches) + ")";
      return Status::Internal("token_to_kv_pool_allocator memory leak detected! free + evictable != total;" +
                              (who.empty() ? std::string(" no request holds a row") : " still holding a row:" + who));
    }
    if (pool_->available_size() != pool_->size()) return Status::Internal("req_to_token_pool leak while idle");
  }
  return Status::Ok();
}

}  // namespace radixserve::sched
