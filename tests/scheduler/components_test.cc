// Scheduling steps tested alone: PrefillAdder budgets and chunk sizes (SCHEDULER_SPEC 3),
// retraction victim order and new_token_ratio after retraction (4.2), the ratio tracker (3.2),
// the decode memory check (4.1), streaming decisions (7.4).
#include <gtest/gtest.h>

#include "core/scheduler/cache_adapter.h"

#include <memory>

#include "core/scheduler/decode_memory.h"
#include "core/scheduler/new_token_ratio.h"
#include "core/scheduler/output_streamer.h"
#include "core/scheduler/prefill_adder.h"
#include "plugins/cache/chunk/chunk_cache.h"
#include "plugins/cache/radix/radix_cache.h"

namespace radixserve::sched {
namespace {

std::unique_ptr<Req> MakeReq(int32_t input_len, int32_t output_len, int32_t max_new) {
  auto r = std::make_unique<Req>();
  r->tokens.assign(input_len + output_len, 5);
  r->input_len = input_len;
  r->spec.sampling.max_new_tokens = max_new;
  r->extend_end = r->seq_len();
  return r;
}

struct AdderFixture {
  explicit AdderFixture(int32_t page, int64_t slots = 10000) {
    alloc = MakeKvAllocator(page, slots);
    pool = std::make_unique<ReqToTokenPool>(8, 64);
    cache.Attach(CacheContextOf(alloc.get(), page));
  }
  std::unique_ptr<KvAllocator> alloc;
  std::unique_ptr<ReqToTokenPool> pool;
  ChunkCache cache;
  std::vector<Req*> can_run;
};

TEST(PrefillAdder, ChunkSizesFollowTheChunkBudget) {
  AdderFixture f(1);
  PrefillAdderOptions o;
  o.chunked_prefill_size = 100;
  o.max_prefill_tokens = 16384;
  PrefillAdder adder(o, &f.cache, f.alloc.get(), {}, &f.can_run);
  auto a = MakeReq(30, 0, 10);
  auto b = MakeReq(250, 0, 10);
  EXPECT_EQ(adder.AddOneReq(a.get()), AddReqResult::kContinue);  // whole: 30 of 100
  EXPECT_EQ(a->extend_len(), 30);
  EXPECT_EQ(adder.AddOneReq(b.get()), AddReqResult::kOther);     // chunk of the remaining 70, then OTHER
  EXPECT_EQ(b->extend_begin, 0);
  EXPECT_EQ(b->extend_end, 70);
  EXPECT_EQ(adder.new_chunked_req(), b.get());
  EXPECT_EQ(f.can_run.size(), 2u);

  // Next pass: the chunked request continues first with a full chunk, then its last 80.
  b->prefix_indices.assign(70, 1);
  PrefillAdder next(o, &f.cache, f.alloc.get(), {}, &f.can_run);
  b->InitNextRoundInput();
  EXPECT_EQ(next.AddChunkedReq(b.get()), b.get());
  EXPECT_EQ(b->extend_begin, 70);
  EXPECT_EQ(b->extend_end, 170);
  b->prefix_indices.assign(170, 1);
  PrefillAdder last(o, &f.cache, f.alloc.get(), {}, &f.can_run);
  b->InitNextRoundInput();
  EXPECT_EQ(last.AddChunkedReq(b.get()), nullptr);
  EXPECT_EQ(b->extend_end, 250);
  EXPECT_EQ(last.rem_chunk_tokens(), 20);
}

TEST(PrefillAdder, PagedChunksEndOnPageBoundaries) {
  AdderFixture f(16);
  PrefillAdderOptions o;
  o.page_size = 16;
  o.chunked_prefill_size = 100;
  PrefillAdder adder(o, &f.cache, f.alloc.get(), {}, &f.can_run);
  auto a = MakeReq(20, 0, 10);  // ceil_page(20) = 32 of the chunk budget
  auto b = MakeReq(300, 0, 10);
  EXPECT_EQ(adder.AddOneReq(a.get()), AddReqResult::kContinue);
  EXPECT_EQ(adder.rem_chunk_tokens(), 68);
  adder.AddOneReq(b.get());
  EXPECT_EQ(b->extend_end, 64);  // floor(68 / 16) * 16
}

TEST(PrefillAdder, NoTokenWhenTheFutureAwareBudgetIsShort) {
  AdderFixture f(1, 1000);
  std::vector<std::unique_ptr<Req>> running;
  std::vector<Req*> run_ptrs;
  for (int i = 0; i < 4; ++i) {
    running.push_back(MakeReq(10, 0, 1000));
    run_ptrs.push_back(running.back().get());
  }
  PrefillAdderOptions o;
  o.chunked_prefill_size = -1;
  o.new_token_ratio = 0.2;  // reserves 4 * 1000 * 0.2 = 800
  PrefillAdder adder(o, &f.cache, f.alloc.get(), run_ptrs, &f.can_run);
  EXPECT_EQ(adder.rem_total_tokens(), 200);
  auto fits = MakeReq(50, 0, 100);  // 50 + 100 < 200
  auto too_big = MakeReq(50, 0, 100);
  EXPECT_EQ(adder.AddOneReq(fits.get()), AddReqResult::kContinue);
  EXPECT_EQ(adder.rem_total_tokens(), 50);
  EXPECT_EQ(adder.AddOneReq(too_big.get()), AddReqResult::kNoToken);
  EXPECT_EQ(f.can_run.size(), 1u);
}

TEST(PrefillAdder, WithoutChunkingTheFirstRequestMayExceedMaxPrefill) {
  AdderFixture f(1);
  PrefillAdderOptions o;
  o.chunked_prefill_size = -1;
  o.max_prefill_tokens = 100;
  PrefillAdder adder(o, &f.cache, f.alloc.get(), {}, &f.can_run);
  auto big = MakeReq(300, 0, 10);
  auto next = MakeReq(10, 0, 10);
  EXPECT_EQ(adder.AddOneReq(big.get()), AddReqResult::kOther);  // admitted; budget now spent
  EXPECT_EQ(f.can_run.size(), 1u);
  EXPECT_EQ(adder.AddOneReq(next.get()), AddReqResult::kOther);
  EXPECT_EQ(f.can_run.size(), 1u);
}

TEST(PrefillAdder, IgnoreEosSimulationWithoutPrefixSharing) {
  // 300 KV slots; a running ignore_eos request holds 50 and will grow by 100 more.
  AdderFixture f(1, 300);
  std::vector<int32_t> held;
  ASSERT_TRUE(f.alloc->Alloc(50, &held));
  auto running = MakeReq(40, 10, 110);
  running->spec.sampling.ignore_eos = true;
  std::vector<Req*> run{running.get()};
  PrefillAdderOptions o;
  o.chunked_prefill_size = -1;
  o.new_token_ratio = 0.1;  // the future-aware budget alone would admit the candidate below
  PrefillAdder adder(o, &f.cache, f.alloc.get(), run, &f.can_run);
  auto cand = MakeReq(60, 0, 100);
  cand->spec.sampling.ignore_eos = true;
  // Exact simulation: 250 free - 60 extend - 100 left * 2 alive <= 2 reserve → NO_TOKEN.
  EXPECT_EQ(adder.AddOneReq(cand.get()), AddReqResult::kNoToken);
  auto small = MakeReq(20, 0, 10);
  small->spec.sampling.ignore_eos = true;
  EXPECT_EQ(adder.AddOneReq(small.get()), AddReqResult::kContinue);
}

TEST(Retraction, VictimOrderFewestOutputsThenLongestPrompt) {
  std::vector<std::unique_ptr<Req>> own;
  std::vector<Req*> reqs;
  // (input, output)
  for (auto [in, out] : std::vector<std::pair<int, int>>{{10, 5}, {20, 1}, {30, 1}, {5, 9}, {40, 5}}) {
    own.push_back(MakeReq(in, out, 100));
    reqs.push_back(own.back().get());
  }
  std::vector<int32_t> order;
  DecodeMemory::VictimOrder(reqs, &order);
  // Retracted first = popped from the back: output 1 with prompt 30, then output 1 with prompt 20,
  // then output 5 with prompt 40, then output 5 with prompt 10; output 9 last.
  EXPECT_EQ(order, (std::vector<int32_t>{3, 0, 4, 1, 2}));
}

TEST(Retraction, NewTokenRatioAfterRetraction) {
  auto alloc = MakeKvAllocator(1, 24);
  ReqToTokenPool pool(4, 64);
  RadixCache cache;
  cache.Attach(CacheContextOf(alloc.get(), 1));
  CacheAdapter adapter(alloc.get(), &pool, 1);
  std::vector<std::unique_ptr<Req>> own;
  std::vector<Req*> reqs;
  // Three decoding requests holding 8 KV slots each: the pool (24) is full.
  for (int i = 0; i < 3; ++i) {
    own.push_back(MakeReq(6, 3 + i, 50));
    Req* r = own.back().get();
    r->req_pool_idx = pool.Alloc();
    std::vector<int32_t> slots;
    ASSERT_TRUE(alloc->Alloc(8, &slots));
    std::copy(slots.begin(), slots.end(), pool.Row(r->req_pool_idx).begin());
    r->kv_len = 8;
    reqs.push_back(r);
  }
  DecodeMemory mem(alloc.get(), 20);
  EXPECT_FALSE(mem.Check(reqs, &cache));
  std::vector<Req*> retracted;
  auto release = [&](Req* r) {
    adapter.CacheFinishedReq(cache, *r, false);
    pool.Free(r->req_pool_idx);
    r->ResetForRetract();
  };
  double ratio = mem.Retract(&reqs, &cache, release, &retracted);
  ASSERT_EQ(retracted.size(), 1u);
  EXPECT_EQ(retracted[0], own[0].get());  // fewest outputs
  EXPECT_TRUE(retracted[0]->is_retracted);
  EXPECT_EQ(retracted[0]->output_len(), 3);  // output kept for recompute
  ASSERT_EQ(reqs.size(), 2u);
  // (Σ kept outputs + 20 * kept) / Σ kept max_new = (4 + 5 + 40) / 100
  EXPECT_DOUBLE_EQ(ratio, 0.49);
}

TEST(NewTokenRatio, DecaysToTheMinimumAndResets) {
  NewTokenRatio r(0.7, 1.0, 0.14, 600);
  EXPECT_DOUBLE_EQ(r.value(), 0.7);
  // Double arithmetic of a few operations on values below 1: within a few 1e-16; 1e-12 is exactness
  // up to the order of the operations.
  EXPECT_NEAR(r.min(), 0.098, 1e-12);
  r.DecayStep();
  EXPECT_NEAR(r.value(), 0.7 - (0.7 - 0.098) / 600, 1e-12);
  for (int i = 0; i < 1000; ++i) r.DecayStep();
  EXPECT_NEAR(r.value(), 0.098, 1e-12);
  r.Reset();
  EXPECT_DOUBLE_EQ(r.value(), 0.7);
  NewTokenRatio conservative(0.7, 2.0, 0.14, 600);
  EXPECT_DOUBLE_EQ(conservative.value(), 1.0);
}

TEST(DecodeMemory, PagedNeedCountsRequestsStartingAPage) {
  auto alloc = MakeKvAllocator(16, 64);
  DecodeMemory mem(alloc.get(), 20);
  auto a = MakeReq(10, 0, 10);
  auto b = MakeReq(10, 0, 10);
  a->kv_len = 32;  // next position 32 starts a page
  b->kv_len = 33;
  std::vector<Req*> reqs{a.get(), b.get()};
  EXPECT_EQ(mem.DecodeNeed(reqs), 16);
}

TEST(OutputStreamer, IntervalsFirstTokenAndStopStringHoldBack) {
  FinishChecker checker({}, 1000, [](std::span<const int32_t> ids) {
    std::string s;
    for (int32_t t : ids) s.push_back(static_cast<char>(t));
    return s;
  });
  OutputStreamer streamer(3, 50, &checker);
  std::vector<int> emitted_at;
  auto r = MakeReq(4, 0, 100);
  r->spec.stream = true;
  for (int n = 1; n <= 8; ++n) {
    r->tokens.push_back('x');
    streamer.Consider(*r);
    int before = static_cast<int>(emitted_at.size());
    streamer.Flush([&](const BatchTokenIdOut& m) { emitted_at.push_back(n); });
    (void)before;
  }
  EXPECT_EQ(emitted_at, (std::vector<int>{1, 4, 7}));  // k > 1: tokens 1, k+1, 2k+1
  // A tail that may begin a stop string is held back.
  auto s = MakeReq(4, 0, 100);
  s->spec.stream = true;
  s->spec.stop_strs = {"ab"};
  s->stop_str_max_len = 2;
  s->tokens.push_back('a');
  bool sent = false;
  OutputStreamer every(1, 50, &checker);
  every.Consider(*s);
  every.Flush([&](const BatchTokenIdOut&) { sent = true; });
  EXPECT_FALSE(sent);
}

}  // namespace
}  // namespace radixserve::sched
