// Test harness: a Scheduler with the FakeWorker, collecting every streamed output per request.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "tests/scheduler/fake_worker.h"
#include "core/scheduler/scheduler.h"
#include "core/scheduler/step_driver.h"
#include "plugins/cache/chunk/chunk_cache.h"
#include "plugins/cache/radix/radix_cache.h"
#include "plugins/policy/fcfs/fcfs_policy.h"

namespace radixserve::sched::testing {

struct Collected {
  std::vector<int32_t> tokens;
  bool finished = false;
  FinishReason finish;
  int messages = 0;
  int finished_messages = 0;
  int32_t cached_tokens = 0;
};

inline std::string Detok(std::span<const int32_t> ids) {
  std::string s;
  for (int32_t t : ids) s.push_back(static_cast<char>('a' + t % 26));
  return s;
}

class Harness {
 public:
  // `wrap`: what the scheduler talks to, in front of the fake worker (none: the fake itself).
  using WrapFn = std::function<std::unique_ptr<Worker>(FakeWorker*)>;
  Harness(SchedulerConfig cfg, bool radix = true, FakeWorkerOptions wopt = {},
          std::unique_ptr<SchedulePolicy> policy = nullptr, WrapFn wrap = nullptr) {
    wopt = FakeWorkerFor(cfg, wopt);
    if (cfg.eos_token_ids.empty()) cfg.eos_token_ids = {wopt.eos_id};
    worker = std::make_unique<FakeWorker>(wopt);
    if (wrap) front = wrap(worker.get());
    std::unique_ptr<PrefixCache> cache;
    if (radix) cache = std::make_unique<RadixCache>(); else cache = std::make_unique<ChunkCache>();
    if (!policy) policy = std::make_unique<FcfsPolicy>();
    Worker* w = front ? front.get() : worker.get();
    cfg.pipeline_depth = std::max(1, w->pipeline_depth());
    sched = std::make_unique<Scheduler>(
        cfg, OwnCache(std::move(cache)), OwnPolicy(std::move(policy)),
        [this](const BatchTokenIdOut& m) {
          ++messages;
          for (const auto& o : m.outputs) {
            Collected& c = out[o.rid];
            EXPECT_FALSE(c.finished) << "output after the final message for rid " << o.rid;
            c.tokens.insert(c.tokens.end(), o.output_ids.begin(), o.output_ids.end());
            ++c.messages;
            c.cached_tokens = o.cached_tokens;
            if (o.finished) {
              c.finished = true;
              c.finish = o.finish;
              ++c.finished_messages;
            }
          }
        },
        Detok);
    driver = std::make_unique<StepDriver>(sched.get(), w);
  }
  void Submit(uint64_t rid, std::vector<int32_t> prompt, int32_t max_new, bool ignore_eos = false,
              bool stream = false) {
    TokenizedRequest g;
    g.rid = rid;
    g.input_ids = std::move(prompt);
    g.spec.sampling.max_new_tokens = max_new;
    g.spec.sampling.ignore_eos = ignore_eos;
    g.spec.stream = stream;
    sched->Submit(std::move(g));
  }
  void Run() {
    Status s = driver->RunUntilIdle(1000000);
    ASSERT_TRUE(s.ok()) << s.ToString();
    Status inv = sched->CheckInvariants();
    ASSERT_TRUE(inv.ok()) << inv.ToString();
    ExpectNoRequestStateLeft();
  }
  // Request lifetime (worker.h): at idle the worker holds no request state, every state it was
  // told to create was released once, and the scheduler's account agrees. The fake worker fails
  // the step (so Run() fails) on a state created twice, used after release or released twice.
  void ExpectNoRequestStateLeft() const {
    EXPECT_EQ(worker->live_states(), 0u) << "request states left in the worker at idle";
    EXPECT_EQ(worker->states_created(), worker->states_released());
    EXPECT_EQ(sched->worker_states(), 0);
    EXPECT_EQ(sched->stats().failed_batches, 0);
  }
  std::vector<int32_t> Expected(const std::vector<int32_t>& prompt, int32_t max_new, bool ignore_eos = false) const {
    return worker->ReferenceGenerate(prompt, max_new, ignore_eos);
  }

  std::unique_ptr<FakeWorker> worker;
  std::unique_ptr<Worker> front;
  std::unique_ptr<Scheduler> sched;
  std::unique_ptr<StepDriver> driver;  // after sched: destroyed first
  std::map<uint64_t, Collected> out;
  int messages = 0;
};

inline std::vector<int32_t> Prompt(uint64_t seed, int32_t n, int32_t vocab = 1000) {
  std::vector<int32_t> v;
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (int32_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v.push_back(3 + static_cast<int32_t>(x % static_cast<uint64_t>(vocab - 3)));
  }
  return v;
}

}  // namespace radixserve::sched::testing
