// Reliability of the scheduler loop: per-request waiting/running timeouts (SCHEDULER_SPEC 1.4
// step 2) under a test clock, and policy plugins that throw or return an invalid order at run
// time (in-process and as a loaded plugin): FCFS is used for that iteration, the fault is
// counted, and every request is still served with the right tokens.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/scheduler/plugin_host.h"
#include "tests/scheduler/scheduler_harness.h"

namespace radixserve::sched {
namespace {

using testing::Harness;
using testing::Prompt;

SchedulerConfig SmallConfig() {
  SchedulerConfig cfg;
  cfg.max_total_tokens = 4096;
  cfg.max_running_requests = 8;
  cfg.max_req_len = 512;
  cfg.check_invariants_every_iteration = true;
  return cfg;
}

void StepN(Harness& h, int n) {
  for (int i = 0; i < n; ++i) ASSERT_TRUE(h.driver->Step().ok());
}

// ---- timeouts ---------------------------------------------------------------------------------

TEST(SchedulerTimeouts, WaitingRequestPastTheTimeoutEndsWith503) {
  SchedulerConfig cfg = SmallConfig();
  cfg.max_running_requests = 1;  // the second request has to wait
  cfg.waiting_timeout_s = 5;
  Harness h(cfg);
  double now = 100;
  h.sched->set_clock_for_testing([&] { return now; });
  h.Submit(1, Prompt(1, 8), 40, /*ignore_eos=*/true);
  h.Submit(2, Prompt(2, 8), 4, true);
  StepN(h, 3);
  EXPECT_EQ(h.sched->num_waiting(), 1u);
  now += 4;  // within the timeout: still waiting
  StepN(h, 1);
  EXPECT_FALSE(h.out[2].finished);
  now += 2;  // 6 s > 5 s
  StepN(h, 1);
  ASSERT_TRUE(h.out[2].finished);
  EXPECT_EQ(h.out[2].finish.kind, FinishKind::kAbort);
  EXPECT_EQ(h.out[2].finish.status_code, 503);
  EXPECT_TRUE(h.out[2].tokens.empty());
  EXPECT_EQ(h.sched->stats().waiting_timeouts, 1);
  h.Run();
  // The running request is not a waiting one: it completes normally.
  EXPECT_EQ(h.out[1].tokens, h.Expected(Prompt(1, 8), 40, true));
  EXPECT_EQ(h.out[1].finish.kind, FinishKind::kLength);
}

TEST(SchedulerTimeouts, RunningRequestPastTheTimeoutIsAborted) {
  SchedulerConfig cfg = SmallConfig();
  cfg.running_timeout_s = 5;
  Harness h(cfg);
  double now = 100;
  h.sched->set_clock_for_testing([&] { return now; });
  h.Submit(1, Prompt(1, 8), 200, /*ignore_eos=*/true);
  StepN(h, 4);
  ASSERT_FALSE(h.out[1].finished);
  now += 10;
  h.Run();
  ASSERT_TRUE(h.out[1].finished);
  EXPECT_EQ(h.out[1].finish.kind, FinishKind::kAbort);
  EXPECT_EQ(h.out[1].finish.status_code, 503);
  EXPECT_LT(h.out[1].tokens.size(), 200u);
  EXPECT_EQ(h.sched->stats().running_timeouts, 1);
  // A request that arrives afterwards runs to completion (KV was given back).
  h.Submit(2, Prompt(2, 8), 6, true);
  h.Run();
  EXPECT_EQ(h.out[2].tokens, h.Expected(Prompt(2, 8), 6, true));
  EXPECT_EQ(h.sched->allocator().available_size() + h.sched->cache().evictable_size(),
            h.sched->allocator().size());
}

TEST(SchedulerTimeouts, OffByDefault) {
  SchedulerConfig cfg = SmallConfig();
  cfg.max_running_requests = 1;
  Harness h(cfg);
  double now = 100;
  h.sched->set_clock_for_testing([&] { return now; });
  h.Submit(1, Prompt(1, 8), 30, true);
  h.Submit(2, Prompt(2, 8), 30, true);
  StepN(h, 3);
  now += 1e6;
  h.Run();
  EXPECT_EQ(h.out[1].tokens, h.Expected(Prompt(1, 8), 30, true));
  EXPECT_EQ(h.out[2].tokens, h.Expected(Prompt(2, 8), 30, true));
  EXPECT_EQ(h.sched->stats().waiting_timeouts + h.sched->stats().running_timeouts, 0);
}

// ---- policy faults ----------------------------------------------------------------------------

enum class Fault { kThrow, kThrowInt, kShort, kLong, kOutOfRange, kNegative, kDuplicate };

class FaultyPolicy : public SchedulePolicy {
 public:
  explicit FaultyPolicy(Fault f) : fault_(f) {}
  std::string_view name() const override { return "faulty"; }
  void Order(std::span<const RequestView> queue, const OrderContext&, std::vector<int32_t>* order) override {
    ++calls;
    // Reverse order when healthy, so that the FCFS fallback is distinguishable.
    order->resize(queue.size());
    for (size_t i = 0; i < queue.size(); ++i) (*order)[i] = static_cast<int32_t>(queue.size() - 1 - i);
    if (queue.size() < 2) return;
    switch (fault_) {
      case Fault::kThrow: throw std::runtime_error("policy bug");
      case Fault::kThrowInt: throw 42;
      case Fault::kShort: order->pop_back(); break;
      case Fault::kLong: order->push_back(0); break;
      case Fault::kOutOfRange: (*order)[0] = static_cast<int32_t>(queue.size()); break;
      case Fault::kNegative: (*order)[0] = -1; break;
      case Fault::kDuplicate: (*order)[0] = (*order)[1]; break;
    }
  }
  int calls = 0;

 private:
  Fault fault_;
};

class PolicyFaultTest : public ::testing::TestWithParam<Fault> {};

TEST_P(PolicyFaultTest, FallsBackToFcfsAndKeepsServing) {
  SchedulerConfig cfg = SmallConfig();
  cfg.max_running_requests = 2;  // keep a queue so that the policy is asked with >= 2 waiting
  Harness h(cfg, true, {}, std::make_unique<FaultyPolicy>(GetParam()));
  for (uint64_t rid = 1; rid <= 8; ++rid) h.Submit(rid, Prompt(rid, 6 + static_cast<int32_t>(rid)), 5, true);
  h.Run();
  for (uint64_t rid = 1; rid <= 8; ++rid) {
    ASSERT_TRUE(h.out[rid].finished) << rid;
    EXPECT_EQ(h.out[rid].finish.kind, FinishKind::kLength) << rid;
    EXPECT_EQ(h.out[rid].tokens, h.Expected(Prompt(rid, 6 + static_cast<int32_t>(rid)), 5, true)) << rid;
  }
  EXPECT_GT(h.sched->stats().policy_faults, 0);
  EXPECT_EQ(h.sched->stats().finished, 8);
}

INSTANTIATE_TEST_SUITE_P(AllFaults, PolicyFaultTest,
                         ::testing::Values(Fault::kThrow, Fault::kThrowInt, Fault::kShort, Fault::kLong,
                                           Fault::kOutOfRange, Fault::kNegative, Fault::kDuplicate));

TEST(PolicyFaults, HealthyPolicyHasNoFaults) {
  SchedulerConfig cfg = SmallConfig();
  cfg.max_running_requests = 2;
  Harness h(cfg);
  for (uint64_t rid = 1; rid <= 6; ++rid) h.Submit(rid, Prompt(rid, 8), 4, true);
  h.Run();
  EXPECT_EQ(h.sched->stats().policy_faults, 0);
}

// The same through a loaded plugin (tests/scheduler/test_plugins/broken_order.cc), swapped in
// while the scheduler runs.
TEST(PolicyFaults, BrokenPluginFallsBackAndKeepsServing) {
  PluginHost host({std::string(RADIXSERVE_BINARY_DIR) + "/test_plugins"});
  for (const char* mode : {"throw", "short", "range", "dup", "ok"}) {
    SCOPED_TRACE(mode);
    SchedulerConfig cfg = SmallConfig();
    cfg.max_running_requests = 2;
    Harness h(cfg);
    auto policy = host.CreatePolicy("brokenorder", {{"mode", mode}});
    ASSERT_TRUE(policy.ok()) << policy.status().ToString();
    h.sched->SwapPolicy(std::move(*policy));
    for (uint64_t rid = 1; rid <= 8; ++rid) h.Submit(rid, Prompt(rid, 8), 5, true);
    h.Run();
    EXPECT_EQ(h.sched->policy().name(), "brokenorder");
    for (uint64_t rid = 1; rid <= 8; ++rid)
      EXPECT_EQ(h.out[rid].tokens, h.Expected(Prompt(rid, 8), 5, true)) << rid;
    if (std::string(mode) == "ok") {
      EXPECT_EQ(h.sched->stats().policy_faults, 0);
    } else {
      EXPECT_GT(h.sched->stats().policy_faults, 0);
    }
  }
}

}  // namespace
}  // namespace radixserve::sched
