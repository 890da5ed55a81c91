// Data-parallel routing (issue #16): the router's view of each group's cache follows the groups'
// own cache events exactly (checked against real radix caches under random stores and
// evictions), and the routing policies choose as documented. Last, two schedulers with fake
// workers behind a router on a shared-prefix workload: cache-aware routing finds more of each
// prompt cached than round robin.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "core/router/group_cache_view.h"
#include "core/router/in_flight_prompts.h"
#include "core/router/router.h"
#include "core/router/routing_policy.h"
#include "core/scheduler/cache_adapter.h"
#include "core/scheduler/plugin_host.h"
#include "plugins/routing/cache_aware/cache_aware_policy.h"
#include "plugins/routing/round_robin/round_robin_policy.h"
#include "plugins/routing/shortest_queue/shortest_queue_policy.h"
#include "core/scheduler/kv_allocator.h"
#include "plugins/cache/radix/radix_cache.h"
#include "tests/scheduler/scheduler_harness.h"

namespace radixserve::router {
namespace {

using V = std::vector<int32_t>;

// Feeds one group's cache events into a view.
class ViewSink final : public sched::CacheEventSink {
 public:
  ViewSink(GroupCacheView* view, int32_t group) : view_(view), group_(group) {}
  void OnCacheEvent(const sched::CacheEvent& e) override { view_->Apply(group_, e); }

 private:
  GroupCacheView* view_;
  int32_t group_;
};

struct Group {
  std::unique_ptr<sched::KvAllocator> alloc = sched::MakeKvAllocator(1, 4000);
  sched::RadixCache cache;
  ViewSink sink;
  Group(GroupCacheView* view, int32_t g) : sink(view, g) { cache.Attach(CacheContextOf(alloc.get(), 1, &sink)); }
  void Put(const V& tokens, std::string_view ns) {
    V slots;
    ASSERT_TRUE(alloc->Alloc(static_cast<int64_t>(tokens.size()), &slots));
    const int32_t had = cache.Insert(sched::CacheKey(tokens, ns), slots, 0);
    alloc->Free(std::span<const int32_t>(slots).first(had));
  }
};

V Seq(int32_t start, int32_t n) {
  V v;
  for (int32_t i = 0; i < n; ++i) v.push_back(start + i);
  return v;
}

TEST(GroupCacheView, FollowsRealCachesThroughStoresAndEvictions) {
  GroupCacheView view(2);
  Group a(&view, 0), b(&view, 1);
  std::mt19937_64 rng(5);
  auto key = [&] {  // prompts that share prefixes at random depths
    V k = Seq(100 * static_cast<int32_t>(rng() % 4), 5 + static_cast<int32_t>(rng() % 20));
    for (int i = 0, n = static_cast<int>(rng() % 6); i < n; ++i) k.push_back(static_cast<int32_t>(rng() % 7));
    return k;
  };
  const char* salts[] = {"", "t1"};
  for (int step = 0; step < 3000; ++step) {
    Group& g = rng() % 2 ? a : b;
    const char* ns = salts[rng() % 2];
    if (rng() % 3 == 0) {
      g.cache.Evict(1 + static_cast<int64_t>(rng() % 30));
    } else {
      g.Put(key(), ns);
    }
    if (step % 50 == 0) {
      for (int q = 0; q < 20; ++q) {
        const V probe = key();
        const char* pns = salts[q % 2];
        int32_t m[2];
        view.Match(pns, probe, m);
        ASSERT_EQ(m[0], a.cache.PeekMatchLength(sched::CacheKey(probe, pns))) << "step " << step;
        ASSERT_EQ(m[1], b.cache.PeekMatchLength(sched::CacheKey(probe, pns))) << "step " << step;
      }
      ASSERT_EQ(view.cached_tokens(0), a.cache.evictable_size() + a.cache.protected_size());
      ASSERT_EQ(view.cached_tokens(1), b.cache.evictable_size() + b.cache.protected_size());
    }
  }
  a.cache.Evict(INT64_MAX);
  b.cache.Evict(INT64_MAX);
  EXPECT_EQ(view.cached_tokens(0), 0);
  EXPECT_EQ(view.cached_tokens(1), 0);
  EXPECT_EQ(view.num_nodes(), 2u);  // the roots of the two namespaces, nothing else
}

TEST(GroupCacheView, ANewCacheClearsTheGroup) {
  GroupCacheView view(2);
  Group a(&view, 0), b(&view, 1);
  a.Put(Seq(1, 10), "");
  b.Put(Seq(1, 10), "");
  a.cache.Attach(CacheContextOf(a.alloc.get(), 1, &a.sink));  // a cache swap or a lost worker starts empty
  int32_t m[2];
  view.Match("", Seq(1, 10), m);
  EXPECT_EQ(m[0], 0);
  EXPECT_EQ(m[1], 10);
  EXPECT_EQ(view.cached_tokens(0), 0);
}

TEST(RoutingPolicy, RoundRobinAndShortestQueueSkipUnhealthyGroups) {
  GroupCacheView view(3);
  std::vector<GroupLoad> g(3);
  auto rr = MakeRoundRobin();
  EXPECT_EQ(rr->Route({}, g, view), 0);
  EXPECT_EQ(rr->Route({}, g, view), 1);
  g[2].healthy = false;
  EXPECT_EQ(rr->Route({}, g, view), 0);
  g[0].waiting = 5;
  g[1].running = 2;
  EXPECT_EQ(MakeShortestQueue()->Route({}, g, view), 1);
  for (auto& x : g) x.healthy = false;
  EXPECT_EQ(rr->Route({}, g, view), -1);
}

TEST(RoutingPolicy, PluginsLoadByNameWithCheckedParameters) {
  sched::PluginHost host(sched::PluginHost::DefaultDirs());
  for (const char* name : {"round-robin", "shortest-queue", "cache-aware"}) {
    auto p = CreateRoutingPolicy(host, name);
    ASSERT_TRUE(p.ok()) << name << ": " << p.status().ToString();
    EXPECT_EQ((*p)->name(), name);
  }
  auto unknown = CreateRoutingPolicy(host, "nearest");
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("no routing plugin 'nearest'"), std::string::npos);
  auto bad = CreateRoutingPolicy(host, "cache-aware", {{"cache_threshold", "2"}});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cache_threshold"), std::string::npos) << bad.status().message();
  // A scheduling policy is not a routing policy.
  EXPECT_FALSE(CreateRoutingPolicy(host, "lpm").ok());
  // Parameters reach the policy: with a threshold of 1 nothing is ever cached enough.
  auto strict = CreateRoutingPolicy(host, "cache-aware", {{"cache_threshold", "1"}});
  ASSERT_TRUE(strict.ok()) << strict.status().ToString();
  GroupCacheView view(2);
  Group a(&view, 0), b(&view, 1);
  b.Put(Seq(1, 10), "");
  a.Put(Seq(100, 3), "");
  std::vector<GroupLoad> g(2);
  const V prompt = [] { V v = Seq(1, 10); v.push_back(5); return v; }();
  EXPECT_EQ((*strict)->Route({prompt, ""}, g, view), 0);  // the roomier group, not the one caching 10 of 11
}

TEST(RoutingPolicy, CacheAwarePrefersTheGroupHoldingThePrefixUnlessLoadIsUnbalanced) {
  GroupCacheView view(2);
  Group a(&view, 0), b(&view, 1);
  const V system = Seq(1000, 80);
  V prompt = system;
  prompt.push_back(7);
  b.Put(system, "");
  a.Put(Seq(5000, 300), "");  // a caches more in total, none of it useful here
  std::vector<GroupLoad> g(2);
  auto ca = MakeCacheAware();
  EXPECT_EQ(ca->Route({prompt, ""}, g, view), 1);       // 80 of 81 cached on b
  EXPECT_EQ(ca->Route({prompt, "t1"}, g, view), 1);     // another tenant: nobody holds it; b has room
  EXPECT_EQ(ca->Route({Seq(9000, 50), ""}, g, view), 1);  // cold: the group with the most room
  g[1].waiting = 40;                                     // unbalanced: 40 - 0 > 32
  EXPECT_EQ(ca->Route({prompt, ""}, g, view), 0);
  EXPECT_NE(ca->StatsJson().find("\"load_routed\": 1"), std::string::npos) << ca->StatsJson();
}

// Two groups (scheduler + fake worker + radix cache) behind one router, on a shared-prefix
// workload (8 system prompts of 256 tokens, 12 questions each, shuffled; each group's KV pool holds
// about half of the system prompts): the prompt tokens found
// cached under round robin and under cache-aware routing.
int64_t CachedTokensWith(RoutingPolicy& policy) {
  sched::SchedulerConfig cfg;
  cfg.max_total_tokens = 1600;  // one group holds about 4 of the 8 system prompts beside its running requests
  cfg.max_running_requests = 4;
  cfg.max_req_len = 1024;
  GroupCacheView view(2);
  std::vector<std::unique_ptr<sched::testing::Harness>> groups;
  std::vector<std::unique_ptr<ViewSink>> sinks;
  for (int32_t g = 0; g < 2; ++g) {
    groups.push_back(std::make_unique<sched::testing::Harness>(cfg));
    sinks.push_back(std::make_unique<ViewSink>(&view, g));
    groups[g]->sched->set_cache_events(sinks.back().get());
  }
  struct Item {
    int32_t group;
    V prompt;
  };
  std::vector<Item> work;
  for (int32_t s = 0; s < 8; ++s)
    for (int32_t q = 0; q < 12; ++q) {
      V p = sched::testing::Prompt(100 + s, 256);
      V tail = sched::testing::Prompt(1000 + s * 100 + q, 16);
      p.insert(p.end(), tail.begin(), tail.end());
      work.push_back({s, p});
    }
  std::mt19937_64 rng(11);
  for (size_t i = work.size(); i > 1; --i) std::swap(work[i - 1], work[rng() % i]);
  std::vector<GroupLoad> load(2);
  uint64_t rid = 1;
  for (const Item& it : work) {
    for (int32_t g = 0; g < 2; ++g) {
      load[g].waiting = static_cast<int64_t>(groups[g]->sched->num_waiting());
      load[g].running = static_cast<int64_t>(groups[g]->sched->num_running());
    }
    const int32_t g = policy.Route({it.prompt, ""}, load, view);
    groups[g]->Submit(rid++, it.prompt, 8, true);
    for (auto& h : groups) EXPECT_TRUE(h->driver->Step().ok());
  }
  int64_t cached = 0;
  for (auto& h : groups) {
    h->Run();
    cached += h->sched->stats().cached_prompt_tokens;
  }
  return cached;
}

TEST(DataParallelRouting, CacheAwareFindsMoreCachedThanRoundRobin) {
  auto rr = MakeRoundRobin();
  auto ca = MakeCacheAware();
  const int64_t rr_cached = CachedTokensWith(*rr);
  const int64_t ca_cached = CachedTokensWith(*ca);
  const double prompt_tokens = 8 * 12 * 272;
  std::printf("cached prompt tokens of %.0f: round robin %lld (%.1f %%), cache-aware %lld (%.1f %%); %s\n",
              prompt_tokens, static_cast<long long>(rr_cached), 100 * rr_cached / prompt_tokens,
              static_cast<long long>(ca_cached), 100 * ca_cached / prompt_tokens, ca->StatsJson().c_str());
  EXPECT_GT(ca_cached, rr_cached);
}

TEST(InFlightPrompts, CountsSharedPrefixesAndForgetsWhatEnded) {
  InFlightPrompts f(2);
  const V a = Seq(10, 8), b = [] { V v = Seq(10, 4); v.push_back(99); return v; }();
  f.Add(0, "", a);
  f.Add(0, "", a);
  f.Add(0, "", b);
  EXPECT_EQ(f.Match(0, "", a), 8);
  EXPECT_EQ(f.Match(0, "", b), 5);
  EXPECT_EQ(f.Match(1, "", a), 0);    // another group
  EXPECT_EQ(f.Match(0, "t", a), 0);   // another namespace
  f.Remove(0, "", a);
  EXPECT_EQ(f.Match(0, "", a), 8);    // the second copy is still in flight
  f.Remove(0, "", a);

  f.Remove(0, "", Seq(500, 3));       // never added: nothing changes
  f.Remove(0, "", b);
  EXPECT_EQ(f.Match(0, "", b), 0);
  EXPECT_EQ(f.num_nodes(), 0u);
}

TEST(Router, CountsRequestsInFlightAndNeverPicksAnUnhealthyGroup) {
  Router r({"dp0", "dp1"}, OwnRoutingPolicy(MakeShortestQueue()));
  const bool both[] = {true, true}, only1[] = {false, true}, none[] = {false, false};
  const V p = Seq(1, 10);
  Router::Ticket t0 = r.Route({p, ""}, both), t1 = r.Route({p, ""}, both);
  EXPECT_EQ(t0.group, 0);
  EXPECT_EQ(t1.group, 1);  // dp0 has one in flight
  Router::Ticket t2 = r.Route({p, ""}, only1);
  EXPECT_EQ(t2.group, 1);
  EXPECT_EQ(r.Route({p, ""}, none).group, -1);
  r.Finished(t1);
  r.Finished(t2);
  r.Finished(t2);  // twice: counted once
  EXPECT_EQ(r.Route({p, ""}, both).group, 1);  // dp0 1 in flight, dp1 0
  EXPECT_NE(r.StatsJson().find("\"in_flight\":1"), std::string::npos) << r.StatsJson();
  EXPECT_EQ(r.SwapPolicy(OwnRoutingPolicy(MakeRoundRobin())), "shortest-queue");
  EXPECT_EQ(r.policy_name(), "round-robin");
}

TEST(Router, ABurstSharingAPrefixFollowsItsFirstRequestBeforeAnyCacheHoldsIt) {
  Router r({"dp0", "dp1"}, OwnRoutingPolicy(MakeCacheAware()));
  const bool both[] = {true, true};
  auto prompt = [](int32_t system, int32_t q) {
    V v = Seq(1000 * system, 64);
    v.push_back(q);
    return v;
  };
  std::vector<Router::Ticket> t;
  for (int32_t q = 0; q < 4; ++q)
    for (int32_t system = 1; system <= 2; ++system) t.push_back(r.Route({prompt(system, q), ""}, both));
  // Nothing is cached yet: the first of each system prompt goes to the emptier, shorter queue,
  // and the rest follow it.
  for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i].group, t[i % 2].group) << i;
  EXPECT_NE(t[0].group, t[1].group);
}

TEST(Router, ALostMessageOrANewSchedulerEmptiesTheGroupsView) {
  Router r({"dp0", "dp1"}, OwnRoutingPolicy(MakeCacheAware()));
  const V k = Seq(1, 6);
  auto store = [&](int32_t g) { r.ApplyEvent(g, {sched::CacheEvent::Kind::kStored, "", k, 6}); };
  EXPECT_TRUE(r.BeginEvents(0, 7, 40));  // the first message seen sets the count
  store(0);
  EXPECT_TRUE(r.BeginEvents(0, 7, 41));
  EXPECT_EQ(r.MatchLengths("", k)[0], 6);
  EXPECT_FALSE(r.BeginEvents(0, 7, 43));  // 42 was lost
  EXPECT_EQ(r.MatchLengths("", k)[0], 0);
  store(0);
  EXPECT_TRUE(r.BeginEvents(0, 8, 1));    // a restarted scheduler: a new epoch, an empty cache
  EXPECT_EQ(r.MatchLengths("", k)[0], 0);
  store(1);
  r.ForgetGroup(1);
  EXPECT_EQ(r.MatchLengths("", k)[1], 0);
  EXPECT_NE(r.StatsJson().find("\"lost_event_messages\":1"), std::string::npos) << r.StatsJson();
}

}  // namespace
}  // namespace radixserve::router
