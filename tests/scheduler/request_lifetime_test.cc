// Request lifetime in the worker contract (core/scheduler/worker.h): the
// scheduler tells the worker when to create a request's state (new_state, with
// its penalty history) and when to drop it (released_rids), once each, and
// never names a released request again. The fake worker fails the step on any
// breach; at idle it holds no state and the scheduler's account agrees.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "tests/scheduler/scheduler_harness.h"

namespace radixserve::sched {
namespace {

using testing::Harness;
using testing::Prompt;
using V = std::vector<int32_t>;

struct LifetimeParam {
  const char* name;
  bool overlap;
  bool mixed;  // mixed chunked prefill, and no overlap of consecutive prefills: batches built
               // before the previous one's result still hold requests that result finishes
};

class RequestLifetime : public ::testing::TestWithParam<LifetimeParam> {};

SchedulerConfig LifetimeConfig(const LifetimeParam& p) {
  SchedulerConfig c;
  c.max_total_tokens = 1024;     // small, and admission optimistic: decoding retracts
  c.init_new_token_ratio = 0.05;
  c.max_running_requests = 24;
  c.max_req_len = 512;
  c.chunked_prefill_size = 16;
  c.max_prefill_tokens = 64;
  c.overlap = p.overlap;
  c.enable_mixed_chunk = p.mixed;
  c.disable_consecutive_prefill_overlap = p.mixed;
  c.check_invariants_every_iteration = true;
  return c;
}

// Finishing by length, by EOS, by abort while waiting and while running, after retraction, and
// after a prefix hit: each request's state is created once and released once.
TEST_P(RequestLifetime, EveryStateIsCreatedOnceAndReleasedOnce) {
  FakeWorkerOptions w;
  w.eos_one_in = 23;
  Harness h(LifetimeConfig(GetParam()), /*radix=*/true, w);
  constexpr uint64_t kRequests = 60;
  for (uint64_t i = 0; i < kRequests; ++i)
    h.Submit(i, Prompt(i % 6, 8 + static_cast<int32_t>((i * 13) % 90)), 1 + static_cast<int32_t>((i * 37) % 200),
             /*ignore_eos=*/i % 3 != 0, /*stream=*/i % 2 == 0);
  for (int step = 0; step < 6; ++step) ASSERT_TRUE(h.driver->Step().ok());
  for (uint64_t i = 0; i < kRequests; i += 9) h.sched->Abort(i);  // some wait, some run
  h.Run();
  for (uint64_t i = 0; i < kRequests; ++i) EXPECT_TRUE(h.out[i].finished) << "request " << i << " never ended";
  EXPECT_GT(h.sched->stats().retractions, 0) << "the pool should be small enough to retract";
  EXPECT_GT(h.worker->states_created(), static_cast<int64_t>(kRequests) / 2);
  // Run() checked: no breach (no failed batch), nothing left, created == released.
}

// In the loop without overlap nothing is in flight between steps, so the scheduler's account of
// the worker's states equals what the worker holds after every step, not only at idle.
TEST(RequestLifetimeAccount, SchedulerAccountEqualsWorkerAfterEveryStep) {
  LifetimeParam p{"normal", false, false};
  Harness h(LifetimeConfig(p));
  for (uint64_t i = 0; i < 30; ++i) h.Submit(i, Prompt(i % 4, 10 + static_cast<int32_t>(i * 5)), 5 + static_cast<int32_t>(i % 11), true);
  for (int step = 0; step < 100000 && !h.sched->idle(); ++step) {
    ASSERT_TRUE(h.driver->Step().ok());
    ASSERT_EQ(h.sched->worker_states(), static_cast<int64_t>(h.worker->live_states())) << "after step " << step;
  }
  ASSERT_TRUE(h.sched->idle());
  h.ExpectNoRequestStateLeft();
}

INSTANTIATE_TEST_SUITE_P(Loops, RequestLifetime,
                         ::testing::Values(LifetimeParam{"normal", false, false},
                                           LifetimeParam{"overlap", true, false},
                                           LifetimeParam{"overlap_mixed", true, true}),
                         [](const auto& info) { return std::string(info.param.name); });

// Records what the scheduler sends, and forwards to the fake worker (or to a replacement).
class RecordingWorker final : public Worker {
 public:
  explicit RecordingWorker(Worker* inner) : inner_(inner) {}
  Status Forward(const ForwardBatch& batch, ForwardResult* result) override {
    for (const ForwardReq& f : batch.reqs)
      if (f.new_state)
        records[f.rid].emplace_back(batch.history_ids.begin() + f.history_offset,
                                    batch.history_ids.begin() + f.history_offset + f.history_len);
    return inner_->Forward(batch, result);
  }
  void Replace(Worker* inner) { inner_ = inner; }
  std::map<uint64_t, std::vector<V>> records;  // rid -> the histories of its new_state records

 private:
  Worker* inner_;
};

// A request with penalties that hits a cached prefix sends the prefix it will not recompute as its
// history, once, with its first sampled step; a request without penalties sends none.
TEST(RequestLifetimeRecord, PenaltyHistoryIsTheCachedPrefixSentOnce) {
  SchedulerConfig c = LifetimeConfig({"normal", false, false});
  c.chunked_prefill_size = 16;  // the second request's uncached part takes several chunks
  const FakeWorkerOptions wopt = FakeWorkerFor(c);
  c.eos_token_ids = {wopt.eos_id};
  FakeWorker fake(wopt);
  RecordingWorker rec(&fake);
  Scheduler s(c, OwnCache(std::make_unique<RadixCache>()), OwnPolicy(std::make_unique<FcfsPolicy>()), nullptr,
              testing::Detok);
  StepDriver driver(&s, &rec);
  const V prompt = Prompt(7, 60);
  V longer = prompt;
  const V tail = Prompt(8, 40);
  longer.insert(longer.end(), tail.begin(), tail.end());
  TokenizedRequest a;
  a.rid = 1;
  a.input_ids = prompt;
  a.spec.sampling.max_new_tokens = 4;
  a.spec.sampling.ignore_eos = true;
  s.Submit(a);
  ASSERT_TRUE(driver.RunUntilIdle(10000).ok());
  TokenizedRequest b = a;
  b.rid = 2;
  b.input_ids = longer;
  b.spec.sampling.repetition_penalty = 1.3f;
  s.Submit(b);
  ASSERT_TRUE(driver.RunUntilIdle(10000).ok());

  ASSERT_EQ(rec.records[1].size(), 1u);
  EXPECT_TRUE(rec.records[1][0].empty()) << "no penalties: no history";
  ASSERT_EQ(rec.records[2].size(), 1u) << "one record per lifetime";
  const V& history = rec.records[2][0];
  // Its last chunk starts after the cached prefix and the earlier chunks: all of those are history.
  ASSERT_GE(history.size(), prompt.size() - 1);
  ASSERT_LT(history.size(), longer.size());
  EXPECT_EQ(history, V(longer.begin(), longer.begin() + static_cast<std::ptrdiff_t>(history.size())));
  EXPECT_EQ(fake.live_states(), 0u);
  EXPECT_EQ(s.worker_states(), 0);
}

// A constrained request's grammar rides with its first sampled step, once, with the position
// where its output starts; a prefill batch admits new constrained requests only while their
// grammars fit kMaxBatchGrammarBytes (the first always), so the batch message stays bounded.
TEST(RequestLifetimeRecord, GrammarsTravelOnceAndABatchCarriesABoundedAmount) {
  SchedulerConfig c = LifetimeConfig({"normal", false, false});
  c.chunked_prefill_size = 256;  // room for several 20-token prompts in one prefill batch
  c.max_prefill_tokens = 256;
  const FakeWorkerOptions wopt = FakeWorkerFor(c);
  c.eos_token_ids = {wopt.eos_id};
  FakeWorker fake(wopt);
  struct GrammarRecorder final : public Worker {
    Worker* inner;
    std::map<uint64_t, std::vector<std::pair<std::string, int32_t>>> grammars;  // rid -> (text, output_begin)
    size_t largest_batch = 0;
    Status Forward(const ForwardBatch& batch, ForwardResult* result) override {
      largest_batch = std::max(largest_batch, batch.grammar_text.size());
      for (const ForwardReq& f : batch.reqs)
        if (f.new_state && f.grammar_kind != grammar::GrammarKind::kNone)
          grammars[f.rid].emplace_back(std::string(batch.grammar_text.data() + f.grammar_offset, f.grammar_len),
                                       f.output_begin);
      return inner->Forward(batch, result);
    }
  } rec;
  rec.inner = &fake;
  Scheduler s(c, OwnCache(std::make_unique<RadixCache>()), OwnPolicy(std::make_unique<FcfsPolicy>()), nullptr,
              testing::Detok);
  StepDriver driver(&s, &rec);
  const size_t kText = kMaxBatchGrammarBytes * 2 / 5;  // two fit a batch, the third does not
  for (uint64_t rid = 1; rid <= 5; ++rid) {
    TokenizedRequest r;
    r.rid = rid;
    r.input_ids = Prompt(static_cast<int>(rid), 20);
    r.spec.sampling.max_new_tokens = 3;
    r.spec.sampling.ignore_eos = true;
    r.spec.grammar = {grammar::GrammarKind::kRegex, std::string(kText, static_cast<char>('a' + rid))};
    s.Submit(r);
  }
  ASSERT_TRUE(driver.RunUntilIdle(10000).ok());
  for (uint64_t rid = 1; rid <= 5; ++rid) {
    ASSERT_EQ(rec.grammars[rid].size(), 1u) << rid;
    EXPECT_EQ(rec.grammars[rid][0].first, std::string(kText, static_cast<char>('a' + rid))) << rid;
    EXPECT_EQ(rec.grammars[rid][0].second, 20) << rid;  // the output starts after the 20-token prompt
  }
  EXPECT_LE(rec.largest_batch, kMaxBatchGrammarBytes);
  EXPECT_GE(rec.largest_batch, 2 * kText);  // two did share a batch
}

// New requests that share a long cached prefix each carry it to the worker (the slots their row
// lacks): a prefill batch admits them only while those prefixes fit kMaxBatchPrefixIds (the first
// always), so the batch message is bounded by that, not by max_running_requests full contexts.
TEST(RequestLifetimeRecord, CachedPrefixesABatchCarriesAreBounded) {
  SchedulerConfig c = LifetimeConfig({"normal", false, false});
  constexpr int kPrefix = 25000;  // two fit the cap (50,000 ids), a third does not (75,000)
  c.max_total_tokens = 4 * kPrefix;
  c.max_req_len = kPrefix + 64;
  c.chunked_prefill_size = 4096;
  c.max_prefill_tokens = 4096;
  const FakeWorkerOptions wopt = FakeWorkerFor(c);
  c.eos_token_ids = {wopt.eos_id};
  FakeWorker fake(wopt);
  struct PrefixRecorder final : public Worker {
    Worker* inner;
    size_t largest_batch = 0;  // prefix slots and history ids of one batch
    Status Forward(const ForwardBatch& batch, ForwardResult* result) override {
      largest_batch = std::max(largest_batch, batch.prefix_slots.size() + batch.history_ids.size());
      return inner->Forward(batch, result);
    }
  } rec;
  rec.inner = &fake;
  Scheduler s(c, OwnCache(std::make_unique<RadixCache>()), OwnPolicy(std::make_unique<FcfsPolicy>()), nullptr,
              testing::Detok);
  StepDriver driver(&s, &rec);
  const std::vector<int32_t> shared = Prompt(1, kPrefix);
  TokenizedRequest warm;
  warm.rid = 1;
  warm.input_ids = shared;
  warm.spec.sampling.max_new_tokens = 1;
  warm.spec.sampling.ignore_eos = true;
  s.Submit(warm);
  ASSERT_TRUE(driver.RunUntilIdle(100000).ok());
  for (uint64_t rid = 2; rid <= 5; ++rid) {
    TokenizedRequest r = warm;
    r.rid = rid;
    const std::vector<int32_t> tail = Prompt(static_cast<int>(rid), 8);
    r.input_ids.insert(r.input_ids.end(), tail.begin(), tail.end());
    s.Submit(r);
  }
  ASSERT_TRUE(driver.RunUntilIdle(100000).ok());
  EXPECT_LE(rec.largest_batch, static_cast<size_t>(kMaxBatchPrefixIds));
  EXPECT_GE(rec.largest_batch, static_cast<size_t>(2 * (kPrefix - 64)));  // two did share a batch
  EXPECT_EQ(fake.live_states(), 0u);
}

// The worker dies mid-run and a new one takes over: requests recompute on it and send their state
// records again; the new worker never sees a release for a state the old one held.
TEST(RequestLifetimeRecord, ANewWorkerGetsEveryRecordAgain) {
  SchedulerConfig c = LifetimeConfig({"normal", false, false});
  c.max_total_tokens = 4096;
  const FakeWorkerOptions wopt = FakeWorkerFor(c);
  c.eos_token_ids = {wopt.eos_id};
  FakeWorker first(wopt), second(wopt);
  RecordingWorker rec(&first);
  std::map<uint64_t, testing::Collected> out;
  Scheduler s(c, OwnCache(std::make_unique<RadixCache>()), OwnPolicy(std::make_unique<FcfsPolicy>()),
              [&out](const BatchTokenIdOut& m) {
                for (const auto& o : m.outputs) {
                  auto& col = out[o.rid];
                  col.tokens.insert(col.tokens.end(), o.output_ids.begin(), o.output_ids.end());
                  col.finished |= o.finished;
                }
              },
              testing::Detok);
  StepDriver driver(&s, &rec);
  for (uint64_t i = 0; i < 12; ++i) {
    TokenizedRequest g;
    g.rid = i;
    g.input_ids = Prompt(i, 20 + static_cast<int32_t>(i));
    g.spec.sampling.max_new_tokens = 30;
    g.spec.sampling.ignore_eos = true;
    s.Submit(std::move(g));
  }
  for (int step = 0; step < 15; ++step) ASSERT_TRUE(driver.Step().ok());
  ASSERT_GT(first.live_states(), 0u);
  int finished_before = 0;
  for (auto& [rid, col] : out) finished_before += col.finished;
  ASSERT_LT(finished_before, 12) << "the loss should interrupt running requests";
  rec.Replace(&second);
  s.WorkerLost(OwnCache(std::make_unique<RadixCache>()));
  ASSERT_TRUE(driver.RunUntilIdle(100000).ok());
  EXPECT_EQ(s.stats().failed_batches, 0) << "the new worker saw a request without its record";
  for (uint64_t i = 0; i < 12; ++i) {
    ASSERT_TRUE(out[i].finished) << i;
    EXPECT_EQ(out[i].tokens, first.ReferenceGenerate(Prompt(i, 20 + static_cast<int32_t>(i)), 30, true)) << i;
  }
  EXPECT_EQ(second.live_states(), 0u);
  EXPECT_EQ(second.states_created(), second.states_released());
  EXPECT_EQ(s.worker_states(), 0);
}

}  // namespace
}  // namespace radixserve::sched
