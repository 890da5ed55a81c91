// A worker that fails forward steps: every request of a failed batch ends with an abort that
// carries the worker's message, the others finish normally, and no KV slot or row leaks.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "tests/scheduler/fake_worker.h"
#include "core/scheduler/scheduler.h"
#include "core/scheduler/step_driver.h"
#include "plugins/cache/radix/radix_cache.h"
#include "plugins/policy/fcfs/fcfs_policy.h"
#include "tests/scheduler/scheduler_harness.h"

namespace radixserve::sched {
namespace {

// Loses the answers of the forward steps whose call numbers are listed (the step ran, the reply
// never came: a timeout), otherwise delegates.
class FlakyWorker final : public Worker {
 public:
  FlakyWorker(Worker* inner, std::vector<int> fail_calls) : inner_(inner), fail_calls_(std::move(fail_calls)) {}
  Status Forward(const ForwardBatch& batch, ForwardResult* result) override {
    ++calls_;
    if (std::find(fail_calls_.begin(), fail_calls_.end(), calls_) != fail_calls_.end()) {
      ++failures_;
      (void)inner_->Forward(batch, result);
      return Status::Unavailable("worker did not answer batch " + std::to_string(batch.batch_id));
    }
    return inner_->Forward(batch, result);
  }
  int failures() const { return failures_; }

 private:
  Worker* inner_;
  std::vector<int> fail_calls_;
  int calls_ = 0;
  int failures_ = 0;
};

class WorkerFailure : public ::testing::TestWithParam<bool> {};

TEST_P(WorkerFailure, FailedBatchesAbortTheirRequestsAndNothingLeaks) {
  SchedulerConfig c;
  c.max_total_tokens = 2048;
  c.max_running_requests = 16;
  c.max_req_len = 512;
  c.chunked_prefill_size = 64;
  c.overlap = GetParam();
  c.check_invariants_every_iteration = true;
  const FakeWorkerOptions wopt = FakeWorkerFor(c);
  c.eos_token_ids = {wopt.eos_id};
  FakeWorker fake(wopt);
  FlakyWorker flaky(&fake, {3, 9});
  std::map<uint64_t, testing::Collected> out;
  Scheduler s(c, OwnCache(std::make_unique<RadixCache>()), OwnPolicy(std::make_unique<FcfsPolicy>()),
              [&out](const BatchTokenIdOut& m) {
                for (const auto& o : m.outputs) {
                  auto& col = out[o.rid];
                  col.tokens.insert(col.tokens.end(), o.output_ids.begin(), o.output_ids.end());
                  if (o.finished) {
                    EXPECT_FALSE(col.finished) << "two final outputs for rid " << o.rid;
                    col.finished = true;
                    col.finish = o.finish;
                  }
                }
              },
              testing::Detok);
  StepDriver driver(&s, &flaky);
  constexpr int kRequests = 40;
  for (uint64_t i = 0; i < kRequests; ++i) {
    TokenizedRequest g;
    g.rid = i;
    g.input_ids = testing::Prompt(i % 4, 30 + static_cast<int32_t>(i * 3));  // shared prefixes, some chunked
    g.spec.sampling.max_new_tokens = 20;
    g.spec.sampling.ignore_eos = true;
    s.Submit(std::move(g));
  }
  Status run = driver.RunUntilIdle(100000);
  ASSERT_TRUE(run.ok()) << run.ToString();
  ASSERT_TRUE(s.CheckInvariants().ok());
  EXPECT_GT(flaky.failures(), 0);
  // In overlap mode the step after a failed one already holds some of its requests; the fake worker
  // refuses to read their missing KV, so that step fails too and is handled the same way.
  EXPECT_GE(s.stats().failed_batches, flaky.failures());
  int aborted = 0, completed = 0;
  for (uint64_t i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(out[i].finished) << "request " << i << " never ended";
    if (out[i].finish.kind == FinishKind::kAbort) {
      ++aborted;
      EXPECT_EQ(out[i].finish.status_code, 500);
      EXPECT_EQ(out[i].finish.message.rfind("the model worker failed: ", 0), 0u) << out[i].finish.message;
    } else {
      ++completed;
      EXPECT_EQ(out[i].tokens.size(), 20u) << i;
      EXPECT_EQ(out[i].tokens, fake.ReferenceGenerate(testing::Prompt(i % 4, 30 + static_cast<int32_t>(i * 3)), 20, true));
    }
  }
  EXPECT_GT(aborted, 0);
  EXPECT_GT(completed, 0);
  EXPECT_EQ(s.allocator().available_size() + s.cache().evictable_size(), s.allocator().size());
  EXPECT_EQ(s.cache().protected_size(), 0);
  // Failed batches end their requests, and those requests' states are released like any other.
  EXPECT_EQ(fake.live_states(), 0u);
  EXPECT_EQ(fake.states_created(), fake.states_released());
  EXPECT_EQ(s.worker_states(), 0);
}

INSTANTIATE_TEST_SUITE_P(Loops, WorkerFailure, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "overlap" : "normal"; });

}  // namespace
}  // namespace radixserve::sched
