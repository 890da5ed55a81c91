// Priority classes in the scheduler loop (SCHEDULER_SPEC 2.4, 13.6): with every request slot taken
// by bulk work, an interactive request preempts (retracts) the least important, newest running
// request, runs at once, and the preempted one resumes by recompute with the same output. A gap
// not above the threshold preempts nothing.
#include <gtest/gtest.h>

#include "plugins/policy/priority/priority_policy.h"
#include "tests/scheduler/scheduler_harness.h"

namespace radixserve::sched {
namespace {

using testing::Harness;
using testing::Prompt;

void SubmitWithPriority(Harness& h, uint64_t rid, int64_t priority, int32_t max_new) {
  TokenizedRequest g;
  g.rid = rid;
  g.input_ids = Prompt(rid, 20);
  g.spec.sampling.max_new_tokens = max_new;
  g.spec.sampling.ignore_eos = true;
  g.spec.stream = true;
  g.spec.priority = priority;
  h.sched->Submit(std::move(g));
}

struct Outcome {
  int64_t preemptions;
  bool interactive_first;  // the interactive request finished while the bulk ones still ran
};

Outcome RunWithThreshold(int64_t threshold) {
  SchedulerConfig cfg;
  cfg.overlap = false;
  cfg.max_running_requests = 2;
  cfg.max_total_tokens = 4000;
  cfg.max_req_len = 1000;
  cfg.check_invariants_every_iteration = true;
  Harness h(cfg, /*radix=*/true, {}, std::make_unique<PriorityPolicy>(false, true, threshold));
  SubmitWithPriority(h, 1, /*bulk*/ 0, 60);
  SubmitWithPriority(h, 2, /*bulk*/ 0, 60);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(h.driver->Step().ok());
  EXPECT_EQ(h.sched->num_running(), 2u);
  SubmitWithPriority(h, 3, /*interactive*/ 40, 5);
  bool interactive_first = false;
  for (int i = 0; i < 200 && !h.out[3].finished; ++i) EXPECT_TRUE(h.driver->Step().ok());
  interactive_first = h.out[3].finished && !h.out[1].finished && !h.out[2].finished;
  h.Run();
  for (uint64_t rid : {1, 2, 3})
    EXPECT_EQ(h.out[rid].tokens, h.Expected(Prompt(rid, 20), rid == 3 ? 5 : 60, true)) << "rid " << rid;
  return {h.sched->stats().preemptions, interactive_first};
}

TEST(PriorityPreemption, InteractivePreemptsBulkWhenNoSlotIsFree) {
  const Outcome o = RunWithThreshold(/*threshold=*/10);  // 40 - 0 > 10
  EXPECT_EQ(o.preemptions, 1);
  EXPECT_TRUE(o.interactive_first);
}

TEST(PriorityPreemption, AGapNotAboveTheThresholdWaits) {
  const Outcome o = RunWithThreshold(/*threshold=*/40);  // 40 - 0 is not > 40
  EXPECT_EQ(o.preemptions, 0);
  EXPECT_FALSE(o.interactive_first);
}

}  // namespace
}  // namespace radixserve::sched
