// The scheduler with a pipelined worker (Worker::pipeline_depth > 1, as with pipeline stages):
// it keeps one decode micro-batch per stage in flight, each a disjoint part of the running
// batch, so no batch ever waits on a token another batch in flight has not sampled yet; and the
// outputs are those of the one-batch-at-a-time loop. The worker here is the fake worker behind
// a Send/Receive front that records what was outstanding at once.
#include <gtest/gtest.h>

#include <deque>
#include <mutex>
#include <set>

#include "tests/scheduler/scheduler_harness.h"

namespace radixserve::sched {
namespace {

using testing::Harness;
using testing::Prompt;

// Batches are copied on Send and run on Receive, oldest first, as stages answer in order.
class PipelinedFake final : public Worker {
 public:
  PipelinedFake(FakeWorker* inner, int depth) : inner_(inner), depth_(depth) {}
  int pipeline_depth() const override { return depth_; }
  Status Forward(const ForwardBatch& batch, ForwardResult* result) override {
    RS_RETURN_IF_ERROR(Send(batch));
    return Receive(batch, result);
  }
  Status Send(const ForwardBatch& batch) override {
    std::lock_guard<std::mutex> l(mu_);
    for (int32_t t : batch.input_ids) future_tokens_ += t == kFutureToken ? 1 : 0;
    for (const ForwardReq& f : batch.reqs) {
      if (!f.sample) continue;
      if (sampling_.count(f.rid)) ++overlapping_samples_;  // a second sampled step before the first's token
      sampling_.insert(f.rid);
    }
    outstanding_.push_back(batch);
    max_outstanding_ = std::max(max_outstanding_, outstanding_.size());
    return Status::Ok();
  }
  Status Receive(const ForwardBatch& batch, ForwardResult* result) override {
    ForwardBatch b;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (outstanding_.empty() || outstanding_.front().batch_id != batch.batch_id)
        return Status::Internal("results asked for out of order");
      b = std::move(outstanding_.front());
      outstanding_.pop_front();
    }
    Status s = inner_->Forward(b, result);
    std::lock_guard<std::mutex> l(mu_);
    for (const ForwardReq& f : b.reqs)
      if (f.sample) sampling_.erase(f.rid);
    return s;
  }
  int32_t request_states() const override { return inner_->request_states(); }

  int64_t future_tokens() const { return future_tokens_; }
  int64_t overlapping_samples() const { return overlapping_samples_; }

 private:
  FakeWorker* inner_;
  const int depth_;
  std::mutex mu_;
  std::deque<ForwardBatch> outstanding_;
  std::multiset<uint64_t> sampling_;
  size_t max_outstanding_ = 0;
  int64_t future_tokens_ = 0;
  int64_t overlapping_samples_ = 0;
};

struct PipelineRun {
  std::map<uint64_t, std::vector<int32_t>> outputs;
  SchedulerStats stats;
  int64_t future_tokens = 0, overlapping_samples = 0;
};

PipelineRun RunWithDepth(int depth, SchedulerConfig cfg, int requests, int32_t max_new) {
  PipelinedFake* fake = nullptr;
  Harness::WrapFn wrap;
  if (depth > 1)
    wrap = [&](FakeWorker* w) {
      auto p = std::make_unique<PipelinedFake>(w, depth);
      fake = p.get();
      return std::unique_ptr<Worker>(std::move(p));
    };
  Harness h(cfg, true, {}, nullptr, wrap);
  std::map<uint64_t, std::vector<int32_t>> want;
  for (int i = 0; i < requests; ++i) {
    auto prompt = Prompt(100 + i, 20 + 7 * i);
    want[i + 1] = h.Expected(prompt, max_new, /*ignore_eos=*/true);
    h.Submit(i + 1, prompt, max_new, /*ignore_eos=*/true);
  }
  h.Run();
  PipelineRun r;
  for (const auto& [rid, c] : h.out) {
    EXPECT_TRUE(c.finished) << "rid " << rid;
    EXPECT_EQ(c.tokens, want[rid]) << "rid " << rid;
    r.outputs[rid] = c.tokens;
  }
  EXPECT_EQ(r.outputs.size(), static_cast<size_t>(requests));
  r.stats = h.sched->stats();
  if (fake) {
    r.future_tokens = fake->future_tokens();
    r.overlapping_samples = fake->overlapping_samples();
  }
  return r;
}

TEST(PipelineScheduling, TwoStagesKeepTwoDisjointMicroBatchesInFlight) {
  SchedulerConfig cfg;
  cfg.max_total_tokens = 4096;
  cfg.max_running_requests = 16;
  PipelineRun one = RunWithDepth(1, cfg, 8, 24);
  PipelineRun two = RunWithDepth(2, cfg, 8, 24);
  EXPECT_EQ(two.outputs, one.outputs);
  EXPECT_GE(two.stats.max_inflight, 2) << "the stages never had two batches at once";
  EXPECT_LE(two.stats.max_inflight, 3);  // one per stage, plus the one just launched
  EXPECT_EQ(two.future_tokens, 0) << "a batch waited on a token still being sampled";
  EXPECT_EQ(two.overlapping_samples, 0);
  // Each decode micro-batch holds about half the running requests, so there are about twice as many.
  EXPECT_GT(two.stats.decode_batches, one.stats.decode_batches * 3 / 2);
}

TEST(PipelineScheduling, FourStagesWithChunkedPrefillAndRetractionGiveTheSameOutputs) {
  SchedulerConfig cfg;
  cfg.max_total_tokens = 640;  // tight: decode retracts
  cfg.max_running_requests = 12;
  cfg.chunked_prefill_size = 64;
  cfg.page_size = 1;
  PipelineRun one = RunWithDepth(1, cfg, 12, 40);
  PipelineRun four = RunWithDepth(4, cfg, 12, 40);
  EXPECT_EQ(four.outputs, one.outputs);
  EXPECT_GE(four.stats.max_inflight, 3);
  EXPECT_LE(four.stats.max_inflight, 5);
  EXPECT_EQ(four.future_tokens, 0);
  EXPECT_EQ(four.overlapping_samples, 0);
}

TEST(PipelineScheduling, MixedChunksAreTurnedOffForAPipelinedWorker) {
  SchedulerConfig cfg;
  cfg.max_total_tokens = 4096;
  cfg.chunked_prefill_size = 32;
  cfg.enable_mixed_chunk = true;
  PipelineRun two = RunWithDepth(2, cfg, 6, 16);
  EXPECT_EQ(two.stats.mixed_batches, 0);
  EXPECT_EQ(two.future_tokens, 0);
}

}  // namespace
}  // namespace radixserve::sched
