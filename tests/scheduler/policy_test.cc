// Policies (SCHEDULER_SPEC 2): LPM with in-batch dedup, DFS-weight, LOF, random, priority,
// the FCFS fallbacks, and what a policy pass does to the cache's LRU order.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "core/scheduler/cache_adapter.h"
#include "core/scheduler/kv_allocator.h"
#include "core/scheduler/params.h"
#include "core/scheduler/policy_runner.h"
#include "core/scheduler/request_view.h"
#include "plugins/cache/chunk/chunk_cache.h"
#include "plugins/cache/radix/radix_cache.h"
#include "plugins/policy/dfs_weight/dfs_weight_policy.h"
#include "plugins/policy/fcfs/fcfs_policy.h"
#include "plugins/policy/hrrn/hrrn_policy.h"
#include "plugins/policy/lof/lof_policy.h"
#include "plugins/policy/lpm/lpm_policy.h"
#include "plugins/policy/priority/priority_policy.h"
#include "plugins/policy/random/random_policy.h"
#include "plugins/policy/routing_key/routing_key_policy.h"
#include "plugins/policy/shortest_prefill_first/shortest_prefill_first_policy.h"
#include "tests/scheduler/scheduler_harness.h"

namespace radixserve::sched {
namespace {

using V = std::vector<int32_t>;

V Seq(int32_t start, int32_t n) {
  V v;
  for (int32_t i = 0; i < n; ++i) v.push_back(start + i);
  return v;
}
V Cat(V a, const V& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class PolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    alloc_ = MakeKvAllocator(1, 100000);
    pool_ = std::make_unique<ReqToTokenPool>(4, 16);
    radix_.Attach(CacheContextOf(alloc_.get(), 1));
    chunk_.Attach(CacheContextOf(alloc_.get(), 1));
  }
  void Cache(const V& tokens) {
    V slots;
    ASSERT_TRUE(alloc_->Alloc(static_cast<int64_t>(tokens.size()), &slots));
    int32_t p = radix_.Insert(tokens, slots, 0);
    alloc_->Free(std::span<const int32_t>(slots).first(p));
  }
  Req* Add(const V& tokens, int32_t max_new = 16) {
    auto r = std::make_unique<Req>();
    r->tokens = tokens;
    r->input_len = static_cast<int32_t>(tokens.size());
    r->spec.sampling.max_new_tokens = max_new;
    r->arrival_seq = reqs_.size();
    reqs_.push_back(std::move(r));
    queue_.emplace_back(reqs_.back().get());
    return reqs_.back().get();
  }
  V OrderWith(SchedulePolicy& p, const PrefixCache& c, double now_s = 0) {
    V order;
    p.Order(queue_, OrderContext{c, now_s}, &order);
    return order;
  }
  // The order under a scheduler that has launched `processed` prefill tokens, with `running` running.
  V OrderAt(SchedulePolicy& p, const PrefixCache& c, int64_t processed, std::span<const RequestView> running = {}) {
    V order;
    OrderContext ctx{c, 0};
    ctx.processed_prefill_tokens = processed;
    ctx.running = running;
    p.Order(queue_, ctx, &order);
    return order;
  }
  template <typename F>
  std::unique_ptr<SchedulePolicy> Make(F factory, std::span<const RsParamSpec> schema,
                                       std::map<std::string, std::string> given = {}) {
    Params params;
    EXPECT_TRUE(ResolveParams(schema, given, &params).ok());
    return std::move(factory(params).value());
  }

  std::unique_ptr<KvAllocator> alloc_;
  std::unique_ptr<ReqToTokenPool> pool_;
  RadixCache radix_;
  ChunkCache chunk_;
  std::vector<std::unique_ptr<Req>> reqs_;
  std::vector<RequestView> queue_;  // views of reqs_, as the policy runner hands them
};

TEST_F(PolicyTest, LpmOrdersByLongestCachedPrefix) {
  Cache(Seq(100, 50));
  Cache(Seq(500, 10));
  Add(Seq(900, 20));                    // 0: no match
  Add(Cat(Seq(500, 10), Seq(1, 5)));    // 1: 10 cached
  Add(Cat(Seq(100, 50), Seq(7, 5)));    // 2: 50 cached
  Add(Cat(Seq(100, 20), Seq(3000, 5))); // 3: 20 cached
  auto lpm = Make(MakeLpmPolicy, std::span(kLpmParams, kNumLpmParams));
  EXPECT_EQ(OrderWith(*lpm, radix_), (V{2, 3, 1, 0}));
}

// The example: requests sharing an uncached prefix of at least the threshold are
// deprioritized except the first; requests sharing only a short prefix ("the", "I am") are not.
TEST_F(PolicyTest, InBatchDedupDeprioritizesSiblingsOfAnUncachedLongPrefix) {
  const V system_prompt = Seq(1000, 40);  // 40 uncached shared tokens >= 32
  const V the = {7};                      // "the"
  const V i_am = {11, 12};                // "I am"
  Add(Cat(system_prompt, Seq(1, 5)));     // 0: first carrier of the long prefix
  Add(Cat(the, Seq(200, 10)));            // 1
  Add(Cat(system_prompt, Seq(50, 5)));    // 2: sibling → deprioritized
  Add(Cat(the, Seq(300, 10)));            // 3: shares only "the"
  Add(Cat(i_am, Seq(400, 10)));           // 4
  Add(Cat(system_prompt, Seq(60, 5)));    // 5: sibling → deprioritized
  Add(Cat(i_am, Seq(500, 10)));           // 6: shares only "I am"
  auto lpm = Make(MakeLpmPolicy, std::span(kLpmParams, kNumLpmParams));
  EXPECT_EQ(OrderWith(*lpm, radix_), (V{0, 1, 3, 4, 6, 2, 5}));

  // Once the prefix is cached the siblings match it and move to the front.
  Cache(Cat(system_prompt, Seq(1, 5)));
  EXPECT_EQ(OrderWith(*lpm, radix_), (V{0, 2, 5, 1, 3, 4, 6}));

  // Thresholds are parameters: a deprioritize threshold of 50 keeps FCFS order here.
  SetUp();
  auto loose = Make(MakeLpmPolicy, std::span(kLpmParams, kNumLpmParams),
                    {{"in_batch_deprioritize_threshold", "50"}});
  EXPECT_EQ(OrderWith(*loose, radix_), (V{0, 1, 2, 3, 4, 5, 6}));
  // -1 disables the check.
  auto off = Make(MakeLpmPolicy, std::span(kLpmParams, kNumLpmParams), {{"in_batch_check_threshold", "-1"}});
  EXPECT_EQ(OrderWith(*off, radix_), (V{0, 1, 2, 3, 4, 5, 6}));
}

// Aging (anti-starvation): requests that waited longer than aging_ms go first, oldest first;
// the rest keep the LPM order. Off (0) by default: LPM alone starves the cold request. The time
// is the scheduler's, given to the policy, so the test sets it.
TEST_F(PolicyTest, LpmAgingPutsLongWaitingRequestsFirst) {
  const double now = 10000;
  Cache(Seq(100, 50));
  Add(Seq(900, 20))->wait_entry_time = now - 3600;                   // 0: cold, waited an hour
  Add(Cat(Seq(100, 50), Seq(7, 5)))->wait_entry_time = now - 0.5;    // 1: hot, fresh
  Add(Seq(800, 20))->wait_entry_time = now - 7200;                   // 2: cold, waited two hours
  Add(Cat(Seq(100, 20), Seq(3000, 5)))->wait_entry_time = now - 0.5; // 3: partly hot, fresh
  auto plain = Make(MakeLpmPolicy, std::span(kLpmParams, kNumLpmParams));
  EXPECT_EQ(OrderWith(*plain, radix_, now), (V{1, 3, 0, 2}));
  auto aging = Make(MakeLpmPolicy, std::span(kLpmParams, kNumLpmParams), {{"aging_ms", "1000"}});
  // Aged ones first in arrival order (0 arrived before 2), then LPM.
  EXPECT_EQ(OrderWith(*aging, radix_, now), (V{0, 2, 1, 3}));
  // The same queue a moment after the cold ones arrived: nothing has aged yet.
  EXPECT_EQ(OrderWith(*aging, radix_, now - 7199.5), (V{1, 3, 0, 2}));
}

TEST_F(PolicyTest, LpmKeepsQueueOrderAboveTheCutoffAndWithChunkCache) {
  Cache(Seq(100, 50));
  Add(Seq(900, 20));
  Add(Cat(Seq(100, 50), Seq(7, 5)));
  auto lpm = Make(MakeLpmPolicy, std::span(kLpmParams, kNumLpmParams), {{"fcfs_fallback_queue_len", "1"}});
  EXPECT_EQ(OrderWith(*lpm, radix_), (V{0, 1}));
  EXPECT_FALSE(lpm->matched_prefixes());  // a kept order matches nothing (no LRU refresh), as in SGLang
  auto lpm2 = Make(MakeLpmPolicy, std::span(kLpmParams, kNumLpmParams));
  EXPECT_EQ(OrderWith(*lpm2, radix_), (V{1, 0}));
  EXPECT_TRUE(lpm2->matched_prefixes());
  EXPECT_EQ(OrderWith(*lpm2, chunk_), (V{0, 1}));  // cache-aware → FCFS with the chunk cache
  EXPECT_FALSE(lpm2->matched_prefixes());
}

TEST_F(PolicyTest, DfsWeightGroupsSiblingsHeaviestFirst) {
  Cache(Cat(Seq(100, 40), Seq(1, 10)));
  Cache(Cat(Seq(100, 40), Seq(20, 10)));
  Cache(Seq(700, 40));
  Add(Cat(Seq(700, 40), Seq(5, 3)));                     // 0: light subtree
  Add(Cat(Cat(Seq(100, 40), Seq(1, 10)), Seq(9, 3)));    // 1
  Add(Seq(5000, 40));                                    // 2: no match
  Add(Cat(Cat(Seq(100, 40), Seq(20, 10)), Seq(9, 3)));   // 3
  Add(Cat(Cat(Seq(100, 40), Seq(1, 10)), Seq(19, 3)));   // 4
  auto dfs = Make(MakeDfsWeightPolicy, std::span(kDfsWeightParams, kNumDfsWeightParams));
  EXPECT_EQ(OrderWith(*dfs, radix_), (V{1, 4, 3, 0, 2}));
  EXPECT_EQ(OrderWith(*dfs, chunk_), (V{0, 1, 2, 3, 4}));
}

// SGLang computes the in-batch dedup set for dfs-weight too, but orders by the DFS alone:
// requests sharing an uncached prefix keep their place. in_batch_dedup=true moves all but the
// first of them behind the others (radixserve's former order).
TEST_F(PolicyTest, DfsWeightIgnoresInBatchDedupUnlessAsked) {
  Cache(Seq(700, 40));
  const V system_prompt = Seq(1000, 40);   // uncached, shared by 0, 2 and 4
  Add(Cat(system_prompt, Seq(1, 5)));      // 0
  Add(Cat(Seq(700, 40), Seq(5, 3)));       // 1: the only cached subtree, visited first
  Add(Cat(system_prompt, Seq(50, 5)));     // 2
  Add(Seq(5000, 10));                      // 3
  Add(Cat(system_prompt, Seq(60, 5)));     // 4
  auto dfs = Make(MakeDfsWeightPolicy, std::span(kDfsWeightParams, kNumDfsWeightParams));
  EXPECT_EQ(OrderWith(*dfs, radix_), (V{1, 0, 2, 3, 4}));
  auto dedup = Make(MakeDfsWeightPolicy, std::span(kDfsWeightParams, kNumDfsWeightParams),
                    {{"in_batch_dedup", "true"}});
  EXPECT_EQ(OrderWith(*dedup, radix_), (V{1, 0, 3, 2, 4}));
  // Its pass matched every request: the scheduler refreshes their prefixes (see PolicyPassTest).
  EXPECT_TRUE(dfs->matched_prefixes());
  OrderWith(*dfs, chunk_);
  EXPECT_FALSE(dfs->matched_prefixes());
}

TEST_F(PolicyTest, LofRandomFcfs) {
  Add(Seq(1, 4), 10);
  Add(Seq(2, 4), 30);
  Add(Seq(3, 4), 20);
  Add(Seq(4, 4), 30);
  LofPolicy lof;
  EXPECT_EQ(OrderWith(lof, radix_), (V{1, 3, 2, 0}));
  FcfsPolicy fcfs;
  EXPECT_EQ(OrderWith(fcfs, radix_), (V{0, 1, 2, 3}));
  RandomPolicy r1(7), r2(7);
  V a = OrderWith(r1, radix_), b = OrderWith(r2, radix_);
  EXPECT_EQ(a, b);  // seeded
  std::sort(a.begin(), a.end());
  EXPECT_EQ(a, (V{0, 1, 2, 3}));
}

TEST_F(PolicyTest, PriorityOrderVictimAndPreemption) {
  Req* a = Add(Seq(1, 4));
  a->spec.priority = 5;
  Req* b = Add(Seq(2, 4));  // no priority: least important
  Req* c = Add(Seq(3, 4));
  c->spec.priority = 50;
  Req* d = Add(Seq(4, 4));
  d->spec.priority = 5;
  auto prio = Make(MakePriorityPolicy, std::span(kPriorityParams, kNumPriorityParams));
  EXPECT_EQ(OrderWith(*prio, radix_), (V{2, 0, 3, 1}));  // larger value first by default
  Req incoming;
  incoming.spec.priority = 20;
  incoming.arrival_seq = 99;
  const RequestView in(incoming);
  EXPECT_EQ(prio->ChooseQueueVictim(queue_, in), 1);  // the one without priority
  EXPECT_TRUE(prio->MayPreempt(in, RequestView(a)));   // 20 - 5 > 10
  EXPECT_FALSE(prio->MayPreempt(in, RequestView(c)));
  EXPECT_TRUE(prio->PreemptBefore(RequestView(d), RequestView(a)));  // equal priority: newest first

  auto low = Make(MakePriorityPolicy, std::span(kPriorityParams, kNumPriorityParams),
                  {{"low_values_first", "true"}, {"preemption", "false"}});
  EXPECT_EQ(OrderWith(*low, radix_), (V{0, 3, 2, 1}));
  EXPECT_FALSE(low->MayPreempt(in, RequestView(c)));
}

// HRRN (SCHEDULER_SPEC 13.1): ratio = prefill tokens launched since arrival / uncached tokens left.
TEST_F(PolicyTest, HrrnOrdersByResponseRatio) {
  Cache(Seq(100, 60));
  Req* cold_long = Add(Seq(900, 400));                    // 0: 400 uncached
  Req* hot = Add(Cat(Seq(100, 60), Seq(7, 40)));          // 1: 60 cached, 40 left
  Req* young_short = Add(Seq(2000, 20));                  // 2: 20 uncached
  Req* old_short = Add(Seq(3000, 50));                    // 3: 50 uncached
  cold_long->arrival_processed_tokens = 0;
  hot->arrival_processed_tokens = 900;
  young_short->arrival_processed_tokens = 990;
  old_short->arrival_processed_tokens = 0;
  auto hrrn = Make(MakeHrrnPolicy, std::span(kHrrnParams, kNumHrrnParams));
  // At 1000: ratios 1000/400 = 2.5, 100/40 = 2.5, 10/20 = 0.5, 1000/50 = 20.
  EXPECT_EQ(OrderAt(*hrrn, radix_, 1000), (V{3, 0, 1, 2}));  // equal ratios: arrival order
  EXPECT_EQ(UncachedPrefillWork(RequestView(hot), 60), 40);
  // Much later the young short request has waited enough to overtake the cold long one.
  // At 5000: 12.5, 102.5, 200.5, 100.
  EXPECT_EQ(OrderAt(*hrrn, radix_, 5000), (V{2, 1, 3, 0}));
  // Nobody has waited (a burst at one counter value): arrival order, not shortest first.
  for (auto& r : reqs_) r->arrival_processed_tokens = 7;
  EXPECT_EQ(OrderAt(*hrrn, radix_, 7), (V{0, 1, 2, 3}));
  EXPECT_TRUE(hrrn->matched_prefixes());
}

// A cold request behind a stream of cache-hot ones: LPM keeps it last however long it waits, HRRN
// lets it through once its wait outweighs its size. The counter stands for work done meanwhile.
TEST_F(PolicyTest, HrrnDoesNotStarveTheColdRequestLpmStarves) {
  Cache(Seq(100, 200));
  Req* cold = Add(Seq(5000, 100));
  cold->arrival_processed_tokens = 0;
  for (int i = 0; i < 5; ++i) Add(Cat(Seq(100, 200), Seq(10 * i, 8)))->arrival_processed_tokens = 9000;
  auto lpm = Make(MakeLpmPolicy, std::span(kLpmParams, kNumLpmParams));
  auto hrrn = Make(MakeHrrnPolicy, std::span(kHrrnParams, kNumHrrnParams));
  EXPECT_EQ(OrderAt(*lpm, radix_, 10000).back(), 0);  // always last under LPM
  // In a stream the hot ones are fresh arrivals (a recent snapshot); the cold one has waited for
  // all the work done since: 20000/100 = 200 against 50/8 for each hot one.
  for (size_t i = 1; i < reqs_.size(); ++i) reqs_[i]->arrival_processed_tokens = 19950;
  EXPECT_EQ(OrderAt(*hrrn, radix_, 20000).front(), 0);
  EXPECT_EQ(OrderAt(*lpm, radix_, 20000).back(), 0);
}

TEST_F(PolicyTest, HrrnFallsBackLikeLpmAndDeprioritizesSiblings) {
  const V system_prompt = Seq(1000, 40);
  Add(Cat(system_prompt, Seq(1, 5)));   // 0
  Add(Cat(system_prompt, Seq(50, 5)));  // 1: sibling of an uncached prefix -> last
  Add(Seq(7000, 30));                   // 2
  auto hrrn = Make(MakeHrrnPolicy, std::span(kHrrnParams, kNumHrrnParams));
  EXPECT_EQ(OrderAt(*hrrn, radix_, 100), (V{2, 0, 1}));  // 100/30 > 100/45, sibling last
  // Above the cutoff and with a cache that shares nothing: the queue order stands.
  auto small = Make(MakeHrrnPolicy, std::span(kHrrnParams, kNumHrrnParams), {{"fcfs_fallback_queue_len", "2"}});
  EXPECT_EQ(OrderAt(*small, radix_, 100), (V{0, 1, 2}));
  EXPECT_FALSE(small->matched_prefixes());
  EXPECT_EQ(OrderAt(*hrrn, chunk_, 100), (V{0, 1, 2}));
  EXPECT_NE(hrrn->StatsJson().find("\"fcfs_fallbacks\": 1"), std::string::npos) << hrrn->StatsJson();
}

// Shortest-prefill-first (SCHEDULER_SPEC 13.2): least uncached work, then earlier enqueue.
TEST_F(PolicyTest, ShortestPrefillFirstOrdersByWorkLeft) {
  Cache(Seq(100, 300));
  Add(Seq(900, 100))->wait_entry_time = 1;                 // 0: 100
  Add(Cat(Seq(100, 300), Seq(5, 20)))->wait_entry_time = 2;  // 1: 20 (300 cached)
  Add(Seq(2000, 100))->wait_entry_time = 0.5;              // 2: 100, enqueued earlier than 0
  Add(Seq(3000, 10))->wait_entry_time = 3;                 // 3: 10
  auto spf = Make(MakeShortestPrefillFirstPolicy,
                  std::span(kShortestPrefillFirstParams, kNumShortestPrefillFirstParams));
  EXPECT_EQ(OrderWith(*spf, radix_), (V{3, 1, 2, 0}));
  // No queue-length fallback; with a cache that shares nothing, the prompt length is the work.
  EXPECT_EQ(OrderWith(*spf, chunk_), (V{3, 2, 0, 1}));
  EXPECT_EQ(UncachedPrefillWork(queue_[1], 300), 20);
}

// The chunk cap's worked values (SCHEDULER_SPEC 13.2; page 256, budget 4096).
TEST(ShortestPrefillFirstCap, ReservesForStrictlyShorterWaitersThatFitWhole) {
  using W = std::vector<int64_t>;
  EXPECT_EQ(ReserveChunkForShorterWaiters(W{512, 1024}, 8000, 4096, 256), 2560);
  EXPECT_EQ(ReserveChunkForShorterWaiters(W{257}, 8000, 4096, 256), 3584);  // charged a whole page
  EXPECT_EQ(ReserveChunkForShorterWaiters(W{3840}, 8000, 4096, 256), 256);  // one page stays
  EXPECT_EQ(ReserveChunkForShorterWaiters(W{512}, 8000, 256, 256), -1);     // budget under two pages
  EXPECT_EQ(ReserveChunkForShorterWaiters(W{9000, 100}, 8000, 4096, 256), -1);  // scan stops at the long one
  EXPECT_EQ(ReserveChunkForShorterWaiters(W{600}, 600, 4096, 256), -1);     // not strictly shorter
  EXPECT_EQ(ReserveChunkForShorterWaiters(W{}, 8000, 4096, 256), -1);
}

// Routing key (SCHEDULER_SPEC 13.3): keys running most go first; others keep their order.
TEST_F(PolicyTest, RoutingKeyPrefersKeysInTheRunningBatch) {
  auto keyed = [&](const char* key, int32_t seed) {
    Req* r = Add(Seq(seed, 5));
    r->spec.routing_key = key;
  };
  keyed("", 10);   // 0
  keyed("b", 20);  // 1
  keyed("c", 30);  // 2: not running
  keyed("a", 40);  // 3
  keyed("b", 50);  // 4
  keyed("a", 60);  // 5
  keyed("", 70);   // 6
  std::vector<std::unique_ptr<Req>> running;
  std::vector<RequestView> view;
  for (const char* k : {"a", "b", "a", "", "z"}) {
    running.push_back(std::make_unique<Req>());
    running.back()->spec.routing_key = k;
    view.emplace_back(running.back().get());
  }
  RoutingKeyPolicy policy;
  EXPECT_EQ(OrderAt(policy, radix_, 0, view), (V{3, 5, 1, 4, 0, 2, 6}));
  // Nothing keyed is running: the queue order stands.
  EXPECT_EQ(OrderAt(policy, radix_, 0, std::span<const RequestView>(view).subspan(3, 1)), (V{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(OrderAt(policy, radix_, 0), (V{0, 1, 2, 3, 4, 5, 6}));
}

// A view reads the request it wraps, nothing copied: what the scheduler changes, a policy sees.
TEST(RequestViewTest, ReadsTheRequest) {
  Req r;
  r.rid = 42;
  r.tokens = {1, 2, 3, 4, 5};
  r.input_len = 3;
  r.prefix_indices = {7, 8};
  r.spec.sampling.max_new_tokens = 9;
  r.spec.routing_key = "session";
  r.spec.cache_salt = "tenant";
  r.arrival_seq = 6;
  r.wait_entry_time = 1.5;
  r.arrival_processed_tokens = 300;
  r.retraction_count = 2;
  const RequestView v(r);
  EXPECT_EQ(v.rid(), 42u);
  EXPECT_EQ(v.input_len(), 3);
  EXPECT_EQ(v.output_len(), 2);
  EXPECT_EQ(v.seq_len(), 5);
  EXPECT_EQ(v.tokens().data(), r.tokens.data());
  EXPECT_EQ(v.tokens().size(), 5u);
  EXPECT_EQ(v.prefix_len(), 2);
  EXPECT_EQ(v.max_new_tokens(), 9);
  EXPECT_FALSE(v.has_priority());
  EXPECT_EQ(v.priority(), 0);
  EXPECT_EQ(v.routing_key(), "session");
  EXPECT_EQ(v.cache_salt(), "tenant");
  EXPECT_EQ(v.arrival_seq(), 6u);
  EXPECT_EQ(v.wait_entry_time(), 1.5);
  EXPECT_EQ(v.arrival_processed_tokens(), 300);
  EXPECT_EQ(v.retraction_count(), 2);
  r.spec.priority = -4;
  r.tokens.push_back(6);
  EXPECT_TRUE(v.has_priority());
  EXPECT_EQ(v.priority(), -4);
  EXPECT_EQ(v.output_len(), 3);
  const CacheKey key = MatchKeyOf(v);  // all but the last token, in the request's namespace
  EXPECT_EQ(key.tokens.size(), 5u);
  EXPECT_EQ(key.ns, "tenant");
}

// The runner hands the policy views of the queue and of the running batch, in their order.
TEST(PolicyRunnerTest, HandsThePolicyViewsOfTheQueueAndTheRunningBatch) {
  struct Recorder : SchedulePolicy {
    std::string_view name() const override { return "recorder"; }
    void Order(std::span<const RequestView> queue, const OrderContext& ctx, std::vector<int32_t>* order) override {
      queued.clear();
      for (RequestView r : queue) queued.push_back(r.rid());
      running.clear();
      for (RequestView r : ctx.running) running.push_back(r.rid());
      FcfsOrder(queue.size(), order);
      std::reverse(order->begin(), order->end());
    }
    std::vector<uint64_t> queued, running;
  };
  std::vector<std::unique_ptr<Req>> reqs;
  std::vector<Req*> waiting, running;
  for (uint64_t rid = 1; rid <= 5; ++rid) {
    reqs.push_back(std::make_unique<Req>());
    reqs.back()->rid = rid;
    (rid <= 3 ? waiting : running).push_back(reqs.back().get());
  }
  auto owned = std::make_unique<Recorder>();
  Recorder* recorder = owned.get();
  PolicyRunner runner(OwnPolicy(std::move(owned)));
  ChunkCache cache;
  runner.Order(&waiting, running, OrderContext{cache, 0}, &cache);
  EXPECT_EQ(recorder->queued, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(recorder->running, (std::vector<uint64_t>{4, 5}));
  ASSERT_EQ(waiting.size(), 3u);
  EXPECT_EQ(waiting[0]->rid, 3u);  // the policy's order applied
  EXPECT_EQ(waiting[2]->rid, 1u);
  EXPECT_EQ(runner.faults(), 0);
}

// Salted requests (tenants) never deprioritize each other in the in-batch dedup.
TEST_F(PolicyTest, InBatchDedupComparesOnlyWithinACacheSalt) {
  const V system_prompt = Seq(1000, 40);
  Add(Cat(system_prompt, Seq(1, 5)))->spec.cache_salt = "tenant-a";  // 0
  Add(Cat(system_prompt, Seq(2, 5)))->spec.cache_salt = "tenant-b";  // 1: first of its salt
  Add(Cat(system_prompt, Seq(3, 5)))->spec.cache_salt = "tenant-a";  // 2: sibling of 0 -> last
  Add(Cat(system_prompt, Seq(4, 5)));                                // 3: first unsalted
  auto lpm = Make(MakeLpmPolicy, std::span(kLpmParams, kNumLpmParams));
  EXPECT_EQ(OrderWith(*lpm, radix_), (V{0, 1, 3, 2}));
}

// A cache-aware pass (lpm here; dfs-weight too) matches every waiting request, and in SGLang
// that match refreshes the matched nodes' last access. So a request that waits without being
// admitted keeps its cached prefix warm: LRU eviction takes a prefix nobody touched first.
// FCFS matches nothing in its pass, so there the waiting request's prefix is simply the oldest.
TEST(PolicyPassTest, WaitingRequestKeepsItsCachedPrefixWarm) {
  const V a = testing::Prompt(1, 40), b = testing::Prompt(2, 40), c = testing::Prompt(5, 60);
  struct Outcome {
    int32_t a_cached, b_cached, w_hit;
  };
  auto run = [&](std::unique_ptr<SchedulePolicy> policy) {
    SchedulerConfig cfg;
    cfg.max_total_tokens = 400;
    cfg.max_running_requests = 8;
    cfg.max_req_len = 400;
    cfg.check_invariants_every_iteration = true;
    testing::Harness h(cfg, /*radix=*/true, {}, std::move(policy));
    h.Submit(1, a, 1, true);  // cached in this order: a is the least recently used, c the most
    h.Run();
    h.Submit(2, b, 1, true);
    h.Run();
    h.Submit(3, c, 1, true);
    h.Run();
    h.Submit(10, testing::Prompt(3, 20), 250, true);  // a long decode that needs one eviction
    EXPECT_TRUE(h.driver->Step().ok());
    h.Submit(11, Cat(c, testing::Prompt(6, 10)), 200, true);  // first in the pass; does not fit yet
    h.Submit(12, Cat(a, testing::Prompt(4, 10)), 10, true);   // waits behind it, never reached
    while (!h.out[10].finished) {
      bool work = false;
      EXPECT_TRUE(h.driver->Step(&work).ok());
      if (!work) break;
    }
    Outcome o{h.sched->cache().PeekMatchLength(a), h.sched->cache().PeekMatchLength(b), 0};
    h.Run();
    o.w_hit = h.out[12].cached_tokens;
    EXPECT_EQ(h.out[12].tokens, h.Expected(Cat(a, testing::Prompt(4, 10)), 10, true));
    return o;
  };
  const Outcome lpm = run(std::make_unique<LpmPolicy>(128, 32, 32));
  EXPECT_EQ(lpm.a_cached, 40);  // refreshed by the pass while request 12 waited
  EXPECT_EQ(lpm.b_cached, 0);   // evicted instead
  EXPECT_EQ(lpm.w_hit, 40);
  const Outcome fcfs = run(nullptr);
  EXPECT_EQ(fcfs.a_cached, 0);
  EXPECT_EQ(fcfs.b_cached, 40);
  EXPECT_EQ(fcfs.w_hit, 0);
}

TEST(Params, ResolveRefusesUnknownAndOutOfRange) {
  Params p;
  EXPECT_TRUE(ResolveParams(std::span(kLpmParams, kNumLpmParams), {}, &p).ok());
  EXPECT_EQ(p.GetInt("fcfs_fallback_queue_len"), 128);
  Status s = ResolveParams(std::span(kLpmParams, kNumLpmParams), {{"bogus", "1"}}, &p);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bogus"), std::string::npos);
  EXPECT_FALSE(ResolveParams(std::span(kLpmParams, kNumLpmParams), {{"in_batch_check_threshold", "-5"}}, &p).ok());
  EXPECT_FALSE(ResolveParams(std::span(kLpmParams, kNumLpmParams), {{"in_batch_check_threshold", "x"}}, &p).ok());
}

}  // namespace
}  // namespace radixserve::sched
