// Randomized stress: thousands of requests with shared prefixes, aborts, memory pressure,
// page sizes 1 and 16, both loops, radix and chunk caches, several policies. The invariant
// checker runs after every iteration; every request must end with output or an error, and
// every request that was not aborted must produce exactly the reference tokens.
// RADIXSERVE_STRESS_REQUESTS=N raises the request count per configuration.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>

#include "plugins/policy/dfs_weight/dfs_weight_policy.h"
#include "plugins/policy/lpm/lpm_policy.h"
#include "plugins/policy/priority/priority_policy.h"
#include "tests/scheduler/scheduler_harness.h"

namespace radixserve::sched {
namespace {

using testing::Harness;
using V = std::vector<int32_t>;

struct StressParam {
  int32_t page;
  bool overlap;
  bool radix;
  const char* policy;
  bool mixed;
};

int RequestCount() {
  const char* env = std::getenv("RADIXSERVE_STRESS_REQUESTS");
  return env ? std::atoi(env) : 1000;
}

std::unique_ptr<SchedulePolicy> MakePolicy(const std::string& name) {
  if (name == "lpm") return std::make_unique<LpmPolicy>(128, 32, 32);
  if (name == "dfs-weight") return std::make_unique<DfsWeightPolicy>(32, 32);
  if (name == "priority") return std::make_unique<PriorityPolicy>(false, true, 5);
  return std::make_unique<FcfsPolicy>();
}

class StressTest : public ::testing::TestWithParam<StressParam> {};

TEST_P(StressTest, InvariantsHoldAndOutputsMatchReference) {
  const StressParam& p = GetParam();
  SchedulerConfig c;
  c.page_size = p.page;
  c.max_total_tokens = 3000;  // tight: forces eviction and retraction
  c.max_running_requests = 24;
  c.max_req_len = 600;
  c.chunked_prefill_size = 128;
  c.max_prefill_tokens = 512;
  c.clip_max_new_tokens = 8;  // reserve little for outputs: over-admit, then retract
  c.overlap = p.overlap;
  c.enable_mixed_chunk = p.mixed;
  // The queue cap (with priority: eviction of the least important) only in the priority runs.
  c.max_queued_requests = std::string(p.policy) == "priority" ? 200 : 1 << 30;
  c.check_invariants_every_iteration = true;
  FakeWorkerOptions w;
  w.eos_one_in = 40;
  Harness h(c, p.radix, w, MakePolicy(p.policy));

  std::mt19937_64 rng(1234 + p.page * 7 + p.overlap * 3 + p.radix);
  std::vector<V> systems;
  for (int i = 0; i < 6; ++i) systems.push_back(testing::Prompt(1000 + i, 40 + 30 * i));
  const int total = RequestCount();
  struct Sent {
    V prompt;
    int32_t max_new;
    bool ignore_eos;
  };
  std::map<uint64_t, Sent> sent;
  std::set<uint64_t> aborted;
  uint64_t next = 1;
  int64_t iterations = 0;
  while (next <= static_cast<uint64_t>(total) || !h.sched->idle()) {
    // Arrivals in bursts.
    if (next <= static_cast<uint64_t>(total) && rng() % 3 == 0) {
      int burst = 1 + static_cast<int>(rng() % 8);
      for (int b = 0; b < burst && next <= static_cast<uint64_t>(total); ++b, ++next) {
        V prompt;
        if (rng() % 4 != 0) prompt = systems[rng() % systems.size()];
        V tail = testing::Prompt(next * 31 + 7, 1 + static_cast<int32_t>(rng() % 120));
        prompt.insert(prompt.end(), tail.begin(), tail.end());
        if (rng() % 50 == 0) prompt = testing::Prompt(next, 700);  // never fits the context
        TokenizedRequest g;
        g.rid = next;
        g.input_ids = prompt;
        g.spec.sampling.max_new_tokens = 1 + static_cast<int32_t>(rng() % 80);
        g.spec.sampling.ignore_eos = rng() % 2 == 0;
        g.spec.stream = rng() % 2 == 0;
        if (rng() % 3 == 0) g.spec.priority = static_cast<int64_t>(rng() % 20);
        sent[next] = {prompt, g.spec.sampling.max_new_tokens, g.spec.sampling.ignore_eos};
        h.sched->Submit(std::move(g));
      }
    }
    if (next > 1 && rng() % 10 == 0) {
      uint64_t victim = 1 + rng() % (next - 1);
      aborted.insert(victim);
      h.sched->Abort(victim);
    }
    Status s = h.driver->Step();
    ASSERT_TRUE(s.ok()) << "iteration " << iterations << ": " << s.ToString();
    ASSERT_LT(++iterations, 2000000);
  }
  Status inv = h.sched->CheckInvariants();
  ASSERT_TRUE(inv.ok()) << inv.ToString();
  EXPECT_EQ(h.sched->allocator().available_size() + h.sched->cache().evictable_size(),
            h.sched->allocator().size());

  int checked = 0;
  for (auto& [rid, s] : sent) {
    const testing::Collected& o = h.out[rid];
    ASSERT_TRUE(o.finished) << "request " << rid << " never ended";
    EXPECT_EQ(o.finished_messages, 1) << rid;
    if (o.finish.kind == FinishKind::kAbort) {
      EXPECT_TRUE(aborted.count(rid) || !o.finish.message.empty()) << rid;
      continue;
    }
    // Outputs match the reference up to the scheduler's (clipped) max_new_tokens.
    V ref = h.Expected(s.prompt, static_cast<int32_t>(o.tokens.size()), s.ignore_eos);
    EXPECT_EQ(o.tokens, ref) << "request " << rid;
    if (o.finish.kind == FinishKind::kLength) EXPECT_LE(o.tokens.size(), static_cast<size_t>(s.max_new)) << rid;
    ++checked;
  }
  EXPECT_GT(checked, total / 4);
  const SchedulerStats& st = h.sched->stats();
  std::printf("  %d requests: %lld finished, %lld aborted, %d checked against the reference, %lld retracted, "
              "%lld preempted, %lld iterations, %lld cached / %lld computed prompt tokens\n",
              total, static_cast<long long>(st.finished), static_cast<long long>(st.aborted), checked,
              static_cast<long long>(st.retractions), static_cast<long long>(st.preemptions),
              static_cast<long long>(st.iterations), static_cast<long long>(st.cached_prompt_tokens),
              static_cast<long long>(st.computed_prompt_tokens));
}

INSTANTIATE_TEST_SUITE_P(
    Configs, StressTest,
    ::testing::Values(StressParam{1, false, true, "lpm", false}, StressParam{1, true, true, "lpm", false},
                      StressParam{16, false, true, "dfs-weight", false}, StressParam{16, true, true, "fcfs", true},
                      StressParam{1, true, false, "fcfs", true}, StressParam{16, false, false, "lpm", false},
                      StressParam{1, false, true, "priority", false}, StressParam{16, true, true, "priority", false}),
    [](const auto& info) {
      const StressParam& p = info.param;
      std::string name = "page" + std::to_string(p.page) + (p.overlap ? "_overlap" : "_normal") +
                         (p.radix ? "_radix_" : "_chunk_") + p.policy + (p.mixed ? "_mixed" : "");
      for (char& ch : name)
        if (ch == '-') ch = '_';
      return name;
    });

}  // namespace
}  // namespace radixserve::sched
