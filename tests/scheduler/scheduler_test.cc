// The scheduler loop with the fake worker: greedy outputs equal the reference whatever the
// scheduling (alone, concurrent, prefix hits, chunked, retracted, overlap, mixed), finish
// conditions, streaming, arrival clipping and aborts.
#include <gtest/gtest.h>

#include "tests/scheduler/scheduler_harness.h"

namespace radixserve::sched {
namespace {

using testing::Harness;
using testing::Prompt;
using V = std::vector<int32_t>;

SchedulerConfig SmallConfig(int32_t page = 1, bool overlap = false) {
  SchedulerConfig c;
  c.page_size = page;
  c.max_total_tokens = 4096;
  c.max_running_requests = 32;
  c.max_req_len = 1024;
  c.chunked_prefill_size = 256;
  c.max_prefill_tokens = 1024;
  c.overlap = overlap;
  c.check_invariants_every_iteration = true;
  return c;
}

struct LoopParam {
  int32_t page;
  bool overlap;
};
class LoopTest : public ::testing::TestWithParam<LoopParam> {};

TEST_P(LoopTest, SingleRequestMatchesReference) {
  Harness h(SmallConfig(GetParam().page, GetParam().overlap));
  V p = Prompt(1, 37);
  h.Submit(1, p, 20, /*ignore_eos=*/true);
  h.Run();
  EXPECT_EQ(h.out[1].tokens, h.Expected(p, 20, true));
  EXPECT_EQ(h.out[1].finish.kind, FinishKind::kLength);
  EXPECT_EQ(h.out[1].finished_messages, 1);
}

TEST_P(LoopTest, ConcurrentSharedPrefixesMatchReferenceAndHitTheCache) {
  Harness h(SmallConfig(GetParam().page, GetParam().overlap));
  V system = Prompt(99, 64);
  std::map<uint64_t, V> prompts;
  for (uint64_t i = 0; i < 12; ++i) {
    V p = system;
    V q = Prompt(i + 10, 5 + static_cast<int32_t>(i));
    p.insert(p.end(), q.begin(), q.end());
    prompts[i] = p;
    h.Submit(i, p, 10 + static_cast<int32_t>(i % 4), true);
  }
  h.Run();
  for (auto& [rid, p] : prompts) EXPECT_EQ(h.out[rid].tokens, h.Expected(p, 10 + rid % 4, true)) << rid;
  // A second wave hits the cached system prompt.
  for (uint64_t i = 100; i < 104; ++i) {
    V p = prompts[i - 100];
    h.Submit(i, p, 5, true);
  }
  h.Run();
  for (uint64_t i = 100; i < 104; ++i) {
    EXPECT_EQ(h.out[i].tokens, h.Expected(prompts[i - 100], 5, true));
    EXPECT_GE(h.out[i].cached_tokens, 64 / GetParam().page * GetParam().page);
  }
}

TEST_P(LoopTest, ChunkedPrefillMatchesReference) {
  SchedulerConfig c = SmallConfig(GetParam().page, GetParam().overlap);
  c.chunked_prefill_size = 32;
  Harness h(c);
  V p = Prompt(5, 150);
  h.Submit(1, p, 8, true);
  V q = Prompt(6, 20);
  h.Submit(2, q, 8, true);
  h.Run();
  EXPECT_EQ(h.out[1].tokens, h.Expected(p, 8, true));
  EXPECT_EQ(h.out[2].tokens, h.Expected(q, 8, true));
  EXPECT_GE(h.sched->stats().prefill_batches, 5);
}

TEST_P(LoopTest, RetractionUnderMemoryPressureKeepsOutputs) {
  SchedulerConfig c = SmallConfig(GetParam().page, GetParam().overlap);
  c.max_total_tokens = 640;
  c.clip_max_new_tokens = 4;  // reserve almost nothing for outputs: over-admit on purpose
  Harness h(c);
  std::map<uint64_t, V> prompts;
  for (uint64_t i = 0; i < 10; ++i) {
    prompts[i] = Prompt(i + 200, 30);
    h.Submit(i, prompts[i], 60, true);
  }
  h.Run();
  EXPECT_GT(h.sched->stats().retractions, 0);
  for (auto& [rid, p] : prompts) EXPECT_EQ(h.out[rid].tokens, h.Expected(p, 60, true)) << rid;
}

INSTANTIATE_TEST_SUITE_P(Loops, LoopTest,
                         ::testing::Values(LoopParam{1, false}, LoopParam{1, true}, LoopParam{16, false},
                                           LoopParam{16, true}),
                         [](const auto& info) {
                           return "page" + std::to_string(info.param.page) + (info.param.overlap ? "_overlap" : "_normal");
                         });

TEST(Scheduler, OverlapAndNormalGiveIdenticalTokensWithEos) {
  FakeWorkerOptions w;
  w.eos_one_in = 17;
  std::map<uint64_t, V> outs[2];
  for (int overlap = 0; overlap < 2; ++overlap) {
    Harness h(SmallConfig(1, overlap), true, w);
    for (uint64_t i = 0; i < 20; ++i) h.Submit(i, Prompt(i % 5, 20 + static_cast<int32_t>(i)), 40);
    h.Run();
    for (auto& [rid, c] : h.out) outs[overlap][rid] = c.tokens;
    for (uint64_t i = 0; i < 20; ++i)
      EXPECT_EQ(h.out[i].tokens, h.Expected(Prompt(i % 5, 20 + static_cast<int32_t>(i)), 40)) << i;
  }
  EXPECT_EQ(outs[0], outs[1]);
}

// SGLang's disable_consecutive_prefill_overlap: in the overlap loop a prefill plan that follows a
// prefill plan is launched only after that one's result was given back; the outputs are the same.
TEST(Scheduler, ConsecutivePrefillsRunOneAfterTheOtherWhenOverlapIsOffForThem) {
  std::map<uint64_t, V> outs[2];
  for (int off = 0; off < 2; ++off) {
    SchedulerConfig c = SmallConfig(1, /*overlap=*/true);
    c.chunked_prefill_size = 16;  // a long prompt: several chunk plans in a row
    c.disable_consecutive_prefill_overlap = off == 1;
    Harness h(c);
    for (uint64_t i = 0; i < 4; ++i) h.Submit(i, Prompt(i, 40 + static_cast<int32_t>(i) * 9), 12);
    h.Run();
    for (auto& [rid, col] : h.out) outs[off][rid] = col.tokens;
    if (off == 1) {
      EXPECT_GT(h.driver->serialized_prefills(), 0);
    } else {
      EXPECT_EQ(h.driver->serialized_prefills(), 0);
    }
  }
  EXPECT_EQ(outs[0], outs[1]);
}

TEST(Scheduler, MixedChunkedPrefillMatchesReference) {
  SchedulerConfig c = SmallConfig();
  c.enable_mixed_chunk = true;
  c.chunked_prefill_size = 16;
  Harness h(c);
  std::map<uint64_t, V> prompts;
  for (uint64_t i = 0; i < 6; ++i) {
    prompts[i] = Prompt(i + 40, 40);
    h.Submit(i, prompts[i], 12, true);
  }
  h.Run();
  EXPECT_GT(h.sched->stats().mixed_batches, 0);
  for (auto& [rid, p] : prompts) EXPECT_EQ(h.out[rid].tokens, h.Expected(p, 12, true)) << rid;
}

TEST(Scheduler, ChunkCacheWorks) {
  SchedulerConfig c = SmallConfig();
  c.chunked_prefill_size = 16;
  Harness h(c, /*radix=*/false);
  V p = Prompt(3, 70);
  h.Submit(1, p, 9, true);
  h.Submit(2, p, 9, true);
  h.Run();
  EXPECT_EQ(h.out[1].tokens, h.Expected(p, 9, true));
  EXPECT_EQ(h.out[2].tokens, h.out[1].tokens);
  EXPECT_EQ(h.out[2].cached_tokens, 0);
}

TEST(Scheduler, FinishConditions) {
  FakeWorkerOptions w;
  w.eos_one_in = 5;
  Harness h(SmallConfig(), true, w);
  V p = Prompt(8, 10);
  V ref = h.Expected(p, 200, false);  // stops at EOS
  ASSERT_EQ(ref.back(), w.eos_id);
  h.Submit(1, p, 200);
  h.Submit(2, p, 200, /*ignore_eos=*/true);
  h.Run();
  EXPECT_EQ(h.out[1].tokens, ref);
  EXPECT_EQ(h.out[1].finish.kind, FinishKind::kMatchedToken);
  EXPECT_EQ(h.out[1].finish.ToJson(), "{\"matched\":" + std::to_string(w.eos_id) + ",\"type\":\"stop\"}");
  EXPECT_EQ(h.out[2].tokens.size(), 200u);
  EXPECT_EQ(h.out[2].finish.ToJson(), "{\"length\":200,\"type\":\"length\"}");

  // Stop token ids and stop strings (no EOS in this worker's outputs).
  Harness s(SmallConfig());
  V ref_long = s.Expected(p, 50, true);
  TokenizedRequest g;
  g.rid = 3;
  g.input_ids = p;
  g.spec.sampling.max_new_tokens = 50;
  g.spec.stop_token_ids = {ref_long[3]};
  s.sched->Submit(g);
  TokenizedRequest ig = g;  // ignore_eos also ignores stop token ids (SCHEDULER_SPEC 7.2)
  ig.rid = 4;
  ig.spec.sampling.ignore_eos = true;
  s.sched->Submit(ig);
  TokenizedRequest str = g;
  str.rid = 5;
  str.spec.stop_token_ids.clear();
  str.spec.stop_strs = {testing::Detok(std::span<const int32_t>(ref_long).subspan(5, 2))};
  s.sched->Submit(str);
  s.Run();
  EXPECT_EQ(s.out[3].tokens, V(ref_long.begin(), ref_long.begin() + 4));
  EXPECT_EQ(s.out[3].finish.matched_token, ref_long[3]);
  EXPECT_EQ(s.out[4].tokens.size(), 50u);
  EXPECT_EQ(s.out[5].finish.kind, FinishKind::kMatchedStr);
  EXPECT_EQ(s.out[5].finish.matched_str, str.spec.stop_strs[0]);
  EXPECT_LE(s.out[5].tokens.size(), 7u);
}

TEST(Scheduler, StreamingBatchesOutputs) {
  SchedulerConfig c = SmallConfig();
  c.stream_interval = 4;
  Harness h(c);
  h.Submit(1, Prompt(1, 8), 10, true, /*stream=*/true);  // emits at tokens 1, 5, 9, and the final
  h.Submit(2, Prompt(2, 8), 120, true, /*stream=*/false);  // emits at 50, 100, and the final
  h.Run();
  EXPECT_EQ(h.out[1].messages, 4);
  EXPECT_EQ(h.out[2].messages, 3);
  EXPECT_EQ(h.out[1].tokens.size(), 10u);
  EXPECT_EQ(h.out[2].tokens.size(), 120u);
}

TEST(Scheduler, ClipsMaxNewTokensAndAbortsWhatCanNeverFit) {
  SchedulerConfig c = SmallConfig();
  c.max_total_tokens = 256;
  c.max_req_len = 200;
  Harness h(c);
  h.Submit(1, Prompt(1, 100), 1000, true);  // clipped to max_req_len - 100 - 1 = 99
  h.Submit(2, Prompt(2, 300), 10, true);   // longer than the context
  h.Submit(3, {}, 10, true);
  h.Run();
  EXPECT_EQ(h.out[1].tokens.size(), 99u);
  EXPECT_EQ(h.out[2].finish.kind, FinishKind::kAbort);
  EXPECT_NE(h.out[2].finish.message.find("300 tokens"), std::string::npos) << h.out[2].finish.message;
  EXPECT_EQ(h.out[3].finish.kind, FinishKind::kAbort);

  SchedulerConfig tight = SmallConfig();
  tight.max_total_tokens = 64;
  Harness t(tight);
  t.Submit(1, Prompt(1, 70), 5, true);
  t.Submit(2, Prompt(2, 40), 500, true);  // fits, with output clipped to 64 - 40 - 1 - 1 = 22
  t.Run();
  EXPECT_EQ(t.out[1].finish.kind, FinishKind::kAbort);
  EXPECT_NE(t.out[1].finish.message.find("can never fit"), std::string::npos) << t.out[1].finish.message;
  EXPECT_EQ(t.out[2].tokens.size(), 22u);
}

TEST(Scheduler, AbortWaitingRunningAndChunked) {
  SchedulerConfig c = SmallConfig();
  c.chunked_prefill_size = 16;
  c.max_running_requests = 2;
  Harness h(c);
  h.Submit(1, Prompt(1, 100), 50, true);  // chunked
  h.Submit(2, Prompt(2, 10), 50, true);
  h.Submit(3, Prompt(3, 10), 50, true);   // waits (2 rows)
  bool work;
  ASSERT_TRUE(h.driver->Step(&work).ok());
  h.sched->Abort(1);
  h.sched->Abort(3);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(h.driver->Step(&work).ok());
  h.sched->Abort(2);
  h.Run();
  for (uint64_t r : {1, 2, 3}) {
    EXPECT_TRUE(h.out[r].finished) << r;
    EXPECT_EQ(h.out[r].finish.kind, FinishKind::kAbort) << r;
  }
  EXPECT_LT(h.out[2].tokens.size(), 50u);
}

TEST(Scheduler, PolicySwapTakesEffectAtTheNextIteration) {
  Harness h(SmallConfig());
  EXPECT_EQ(h.sched->policy().name(), "fcfs");
  h.sched->SwapPolicy(OwnPolicy(std::make_unique<FcfsPolicy>()));
  EXPECT_EQ(h.sched->policy().name(), "fcfs");
  struct Marker : SchedulePolicy {
    std::string_view name() const override { return "marker"; }
    void Order(std::span<const RequestView> q, const OrderContext&, std::vector<int32_t>* order) override {
      FcfsOrder(q.size(), order);
    }
  };
  h.sched->SwapPolicy(OwnPolicy(std::make_unique<Marker>()));
  EXPECT_EQ(h.sched->policy().name(), "fcfs");  // not yet: staged
  ASSERT_TRUE(h.driver->Step().ok());
  EXPECT_EQ(h.sched->policy().name(), "marker");
}

TEST(Scheduler, CacheSwapDrainsOrFlushesAndSaysWhich) {
  for (CacheSwapMode mode : {CacheSwapMode::kDrain, CacheSwapMode::kFlush}) {
    Harness h(SmallConfig());
    std::map<uint64_t, V> prompts;
    for (uint64_t i = 0; i < 4; ++i) {
      prompts[i] = Prompt(i, 30);
      h.Submit(i, prompts[i], 30, true);
    }
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(h.driver->Step().ok());
    std::string report;
    h.sched->SwapCache(OwnCache(std::make_unique<ChunkCache>()), mode,
                       [&](const Status& s, const std::string& r) {
                         EXPECT_TRUE(s.ok()) << s.ToString();
                         report = r;
                       });
    h.Submit(10, prompts[0], 5, true);
    h.Run();
    EXPECT_EQ(h.sched->cache().name(), "chunk");
    EXPECT_EQ(report.rfind(mode == CacheSwapMode::kDrain ? "drained" : "flushed", 0), 0u) << report;
    for (auto& [rid, p] : prompts) EXPECT_EQ(h.out[rid].tokens, h.Expected(p, 30, true));
    EXPECT_EQ(h.out[10].tokens, h.Expected(prompts[0], 5, true));
  }
}

}  // namespace
}  // namespace radixserve::sched
