// How one pass's prefill budget is shared: shortest-prefill-first's cap on a long prompt's chunk
// (SCHEDULER_SPEC 13.2), fair chunked prefill (SchedulerConfig::fair_prefill_chunk), and cache
// salts keeping tenants' prefixes apart (13.5), through the whole scheduler loop.
#include <gtest/gtest.h>

#include "plugins/policy/shortest_prefill_first/shortest_prefill_first_policy.h"
#include "tests/scheduler/scheduler_harness.h"

namespace radixserve::sched {
namespace {

using testing::Harness;
using testing::Prompt;

SchedulerConfig SmallChunks() {
  SchedulerConfig cfg;
  cfg.overlap = false;  // each Step runs a batch and processes its result
  cfg.chunked_prefill_size = 256;
  cfg.max_prefill_tokens = 4096;
  cfg.max_total_tokens = 20000;
  cfg.max_req_len = 4096;
  cfg.max_running_requests = 32;
  cfg.check_invariants_every_iteration = true;
  return cfg;
}

std::unique_ptr<SchedulePolicy> Spf() {
  return std::make_unique<ShortestPrefillFirstPolicy>(/*chunk_cap=*/true, 32, 32);
}

// Steps until no request is waiting for its first token or `steps` ran; returns the steps taken.
int StepsUntilFirstTokens(Harness& h, std::initializer_list<uint64_t> rids, int steps) {
  for (int i = 1; i <= steps; ++i) {
    EXPECT_TRUE(h.driver->Step().ok());
    bool all = true;
    for (uint64_t rid : rids) all &= !h.out[rid].tokens.empty();
    if (all) return i;
  }
  return steps + 1;
}

// A 1000-token prompt is mid-chunk when three 30-token prompts arrive. FCFS gives the long prompt
// the whole 256-token chunk budget for three more passes; SPF caps its chunk at 256 - 90 (reserved
// for the short ones, page 1) so they run in the very next pass.
TEST(PrefillSharing, ShortestPrefillFirstCapsTheLongChunkForShortWaiters) {
  for (bool spf : {false, true}) {
    Harness h(SmallChunks(), /*radix=*/true, {}, spf ? Spf() : nullptr);
    const auto long_prompt = Prompt(1, 1000);
    h.Submit(1, long_prompt, 4, /*ignore_eos=*/true, /*stream=*/true);
    ASSERT_TRUE(h.driver->Step().ok());  // first chunk of the long prompt
    for (uint64_t rid : {2, 3, 4}) h.Submit(rid, Prompt(rid, 30), 4, /*ignore_eos=*/true, /*stream=*/true);
    const int steps = StepsUntilFirstTokens(h, {2, 3, 4}, 10);
    if (spf) {
      EXPECT_EQ(steps, 1);
      EXPECT_EQ(h.sched->stats().chunk_caps, 1);
    } else {
      EXPECT_EQ(steps, 4);  // behind the three remaining chunks (256 + 256 + 232), then a 24-token chunk
      EXPECT_EQ(h.sched->stats().chunk_caps, 0);
    }
    h.Run();
    EXPECT_EQ(h.out[1].tokens, h.Expected(long_prompt, 4, true));
    for (uint64_t rid : {2, 3, 4}) EXPECT_EQ(h.out[rid].tokens, h.Expected(Prompt(rid, 30), 4, true));
  }
}

// All at once: two 1000-token prompts ahead of five 30-token ones, under FCFS. Without fair prefill
// the short ones wait for both long prompts (9 passes); with fair_prefill_chunk = 64 the first long
// prompt advances 64 tokens a pass, the second is passed over while it chunks, and the short ones
// run in the first pass. Nothing is lost either way and the outputs are the same.
TEST(PrefillSharing, FairPrefillLetsShortPromptsPastLongOnes) {
  for (int32_t fair : {0, 64}) {
    SchedulerConfig cfg = SmallChunks();
    cfg.fair_prefill_chunk = fair;
    Harness h(cfg);
    h.Submit(1, Prompt(1, 1000), 4, /*ignore_eos=*/true, /*stream=*/true);
    h.Submit(2, Prompt(2, 1000), 4, /*ignore_eos=*/true, /*stream=*/true);
    for (uint64_t rid = 10; rid < 15; ++rid) h.Submit(rid, Prompt(rid, 30), 4, /*ignore_eos=*/true, /*stream=*/true);
    const int steps = StepsUntilFirstTokens(h, {10, 11, 12, 13, 14}, 20);
    if (fair) {
      EXPECT_EQ(steps, 1);
      EXPECT_GT(h.sched->stats().fair_skips, 0);
    } else {
      // The first prompt's four chunks (the fourth leaves 24 tokens, which start the second's),
      // the second's four more; the fifth short one is chunked by the 18 tokens left after that.
      EXPECT_EQ(steps, 9);
      EXPECT_EQ(h.sched->stats().fair_skips, 0);
    }
    h.Run();
    for (uint64_t rid : {1, 2})
      EXPECT_EQ(h.out[rid].tokens, h.Expected(Prompt(rid, 1000), 4, true)) << "fair " << fair << " rid " << rid;
    for (uint64_t rid = 10; rid < 15; ++rid) EXPECT_EQ(h.out[rid].tokens, h.Expected(Prompt(rid, 30), 4, true));
  }
}

// A lone long prompt is not slowed: fair prefill shares a pass only when others want prefill.
TEST(PrefillSharing, FairPrefillLeavesALonePromptWholeChunks) {
  SchedulerConfig cfg = SmallChunks();
  cfg.fair_prefill_chunk = 64;
  Harness h(cfg);
  h.Submit(1, Prompt(1, 1000), 2, /*ignore_eos=*/true, /*stream=*/true);
  EXPECT_EQ(StepsUntilFirstTokens(h, {1}, 20), 4);  // 256 * 3 + 232, as without fair prefill
  EXPECT_EQ(h.sched->stats().chunk_caps, 0);
  h.Run();
}

void SubmitSalted(Harness& h, uint64_t rid, const std::vector<int32_t>& prompt, const char* salt) {
  TokenizedRequest g;
  g.rid = rid;
  g.input_ids = prompt;
  g.spec.sampling.max_new_tokens = 3;
  g.spec.sampling.ignore_eos = true;
  g.spec.cache_salt = salt;
  h.sched->Submit(std::move(g));
  h.Run();
}

// Two tenants sending the same prompt share nothing; one tenant repeating shares as before.
TEST(PrefillSharing, CacheSaltKeepsTenantsApart) {
  SchedulerConfig cfg = SmallChunks();
  Harness h(cfg);
  const auto prompt = Prompt(7, 300);
  SubmitSalted(h, 1, prompt, "tenant-a");
  EXPECT_EQ(h.out[1].cached_tokens, 0);
  SubmitSalted(h, 2, prompt, "tenant-b");
  EXPECT_EQ(h.out[2].cached_tokens, 0);
  SubmitSalted(h, 3, prompt, "");  // the unsalted namespace is a third one
  EXPECT_EQ(h.out[3].cached_tokens, 0);
  SubmitSalted(h, 4, prompt, "tenant-a");
  EXPECT_EQ(h.out[4].cached_tokens, 299);
  SubmitSalted(h, 5, prompt, "tenant-b");
  EXPECT_EQ(h.out[5].cached_tokens, 299);
  for (uint64_t rid = 1; rid <= 5; ++rid) EXPECT_EQ(h.out[rid].tokens, h.Expected(prompt, 3, true));
  EXPECT_GE(h.sched->cache().namespace_size("tenant-a"), 300);
  EXPECT_GE(h.sched->cache().namespace_size("tenant-b"), 300);
}

}  // namespace
}  // namespace radixserve::sched
