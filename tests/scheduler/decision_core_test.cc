// The scheduler as a decision core: plans out, results in, no worker and no
// thread. Each test builds the results a worker would have returned as plain
// values and checks what the scheduler decides and emits.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/scheduler/plan.h"
#include "core/scheduler/scheduler.h"
#include "plugins/cache/radix/radix_cache.h"
#include "plugins/policy/fcfs/fcfs_policy.h"

namespace radixserve::sched {
namespace {

constexpr int32_t kEos = 2;

struct Emitted {
  std::vector<int32_t> tokens;
  bool finished = false;
  FinishReason finish;
};

class DecisionCore : public ::testing::Test {
 protected:
  DecisionCore() { Make(Config()); }

  static SchedulerConfig Config() {
    SchedulerConfig c;
    c.max_total_tokens = 1024;
    c.max_running_requests = 8;
    c.max_req_len = 256;
    c.eos_token_ids = {kEos};
    c.vocab_size = 1000;
    return c;
  }
  void Make(const SchedulerConfig& c) {
    sched = std::make_unique<Scheduler>(c, OwnCache(std::make_unique<RadixCache>()),
                                        OwnPolicy(std::make_unique<FcfsPolicy>()), [this](const BatchTokenIdOut& m) {
                                          for (const auto& o : m.outputs) {
                                            Emitted& e = out[o.rid];
                                            e.tokens.insert(e.tokens.end(), o.output_ids.begin(), o.output_ids.end());
                                            if (o.finished) {
                                              e.finished = true;
                                              e.finish = o.finish;
                                            }
                                          }
                                        });
  }
  void Submit(uint64_t rid, int32_t prompt_len, int32_t max_new) {
    TokenizedRequest g;
    g.rid = rid;
    for (int32_t i = 0; i < prompt_len; ++i) g.input_ids.push_back(10 + static_cast<int32_t>(rid) * 7 + i);
    g.spec.sampling.max_new_tokens = max_new;
    g.spec.stream = true;
    sched->Submit(std::move(g));
  }
  Decision Next(Plan* plan) {
    Decision d = Decision::kNothing;
    Status s = sched->Next(plan, &d);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return d;
  }
  // The result a worker returns: `token` for every row.
  static ForwardResult Tokens(const Plan& plan, std::vector<int32_t> tokens) {
    ForwardResult r;
    r.batch_id = plan.batch.batch_id;
    r.next_token_ids = std::move(tokens);
    EXPECT_EQ(r.next_token_ids.size(), plan.entries.size());
    return r;
  }

  std::unique_ptr<Scheduler> sched;
  std::map<uint64_t, Emitted> out;
};

TEST_F(DecisionCore, NothingToRunWithoutRequests) {
  Plan plan;
  EXPECT_EQ(Next(&plan), Decision::kNothing);
  EXPECT_EQ(sched->plans_out(), 0);
  EXPECT_TRUE(sched->idle());
}

TEST_F(DecisionCore, APromptIsPrefilledThenDecodedUntilEos) {
  Submit(1, 5, 10);
  Plan plan;
  ASSERT_EQ(Next(&plan), Decision::kRun);
  EXPECT_EQ(plan.batch.mode, ForwardMode::kExtend);
  ASSERT_EQ(plan.entries.size(), 1u);
  EXPECT_EQ(plan.entries[0].kind, PlanEntry::kPrefill);
  EXPECT_EQ(plan.batch.input_ids.size(), 5u);
  EXPECT_EQ(sched->plans_out(), 1);
  ASSERT_TRUE(sched->Advance(plan, Tokens(plan, {100})).ok());
  EXPECT_EQ(out[1].tokens, std::vector<int32_t>{100});

  ASSERT_EQ(Next(&plan), Decision::kRun);
  EXPECT_EQ(plan.batch.mode, ForwardMode::kDecode);
  ASSERT_TRUE(sched->Advance(plan, Tokens(plan, {101})).ok());
  ASSERT_EQ(Next(&plan), Decision::kRun);
  ASSERT_TRUE(sched->Advance(plan, Tokens(plan, {kEos})).ok());
  EXPECT_TRUE(out[1].finished);
  EXPECT_EQ(out[1].finish.kind, FinishKind::kMatchedToken);
  EXPECT_EQ(out[1].tokens, (std::vector<int32_t>{100, 101, kEos}));

  // The worker created the request's state; the release goes out in a plan of its own.
  ASSERT_EQ(Next(&plan), Decision::kRun);
  EXPECT_TRUE(plan.releases_only());
  EXPECT_EQ(plan.batch.released_rids, std::vector<uint64_t>{1});
  EXPECT_TRUE(plan.entries.empty());
  ASSERT_TRUE(sched->Advance(plan, Tokens(plan, {})).ok());
  EXPECT_EQ(Next(&plan), Decision::kNothing);
  EXPECT_TRUE(sched->idle());
  EXPECT_TRUE(sched->CheckInvariants().ok());
}

TEST_F(DecisionCore, TwoPlansMayBeOutAndComeBackInOrder) {
  Submit(1, 4, 5);
  Plan first, second;
  ASSERT_EQ(Next(&first), Decision::kRun);
  // The overlap loop decides the next step before the first one's result is known.
  ASSERT_EQ(Next(&second), Decision::kRun);
  EXPECT_EQ(second.batch.mode, ForwardMode::kDecode);
  EXPECT_EQ(sched->plans_out(), 2);
  Status wrong = sched->Advance(second, Tokens(second, {7}));
  EXPECT_EQ(wrong.code(), StatusCode::kInternal) << wrong.ToString();
  EXPECT_NE(wrong.message().find("out of order"), std::string::npos);
  ASSERT_TRUE(sched->Advance(first, Tokens(first, {50})).ok());
  ASSERT_TRUE(sched->Advance(second, Tokens(second, {51})).ok());
  EXPECT_EQ(out[1].tokens, (std::vector<int32_t>{50, 51}));
  EXPECT_EQ(sched->plans_out(), 0);
}

TEST_F(DecisionCore, AFailedPlanEndsItsRequestsWithTheError) {
  Submit(1, 4, 5);
  Submit(2, 6, 5);
  Plan plan;
  ASSERT_EQ(Next(&plan), Decision::kRun);
  ASSERT_EQ(plan.entries.size(), 2u);
  ASSERT_TRUE(sched->Fail(plan, Status::Unavailable("stage 1 did not answer")).ok());
  for (uint64_t rid : {1, 2}) {
    ASSERT_TRUE(out[rid].finished) << rid;
    EXPECT_EQ(out[rid].finish.kind, FinishKind::kAbort);
    EXPECT_EQ(out[rid].finish.status_code, 500);
    EXPECT_NE(out[rid].finish.message.find("stage 1 did not answer"), std::string::npos);
  }
  EXPECT_EQ(sched->stats().failed_batches, 1);
  EXPECT_TRUE(sched->CheckInvariants().ok());
}

TEST_F(DecisionCore, AResultOfTheWrongSizeFailsThePlan) {
  Submit(1, 4, 5);
  Plan plan;
  ASSERT_EQ(Next(&plan), Decision::kRun);
  ForwardResult none;
  ASSERT_TRUE(sched->Advance(plan, none).ok());
  ASSERT_TRUE(out[1].finished);
  EXPECT_NE(out[1].finish.message.find("worker returned 0 tokens for 1 requests"), std::string::npos);
}

TEST_F(DecisionCore, ARowOfARequestAbortedWhileItsStepRanIsDropped) {
  Submit(1, 4, 5);
  Plan plan;
  ASSERT_EQ(Next(&plan), Decision::kRun);
  ASSERT_TRUE(sched->Advance(plan, Tokens(plan, {60})).ok());
  ASSERT_EQ(Next(&plan), Decision::kRun);  // a decode step is out
  sched->Abort(1);
  Plan next;
  ASSERT_EQ(Next(&next), Decision::kRun);  // the abort is taken in; the request still decodes once
  ASSERT_TRUE(sched->Advance(plan, Tokens(plan, {61})).ok());
  ASSERT_TRUE(out[1].finished);
  EXPECT_EQ(out[1].finish.kind, FinishKind::kAbort);
  ASSERT_TRUE(sched->Advance(next, Tokens(next, {62})).ok());  // its epoch moved on: no token 62
  EXPECT_EQ(out[1].tokens, (std::vector<int32_t>{60, 61}));
}

TEST_F(DecisionCore, AStagedFlushWaitsForThePlansOut) {
  Submit(1, 4, 50);
  Plan plan;
  ASSERT_EQ(Next(&plan), Decision::kRun);
  std::string report;
  sched->SwapCache(OwnCache(std::make_unique<RadixCache>()), CacheSwapMode::kFlush,
                   [&](const Status& s, const std::string& r) { report = s.ok() ? r : s.ToString(); });
  Plan blocked;
  EXPECT_EQ(Next(&blocked), Decision::kEmptyPipeline);
  EXPECT_TRUE(report.empty());
  ASSERT_TRUE(sched->Advance(plan, Tokens(plan, {70})).ok());
  // With nothing out the flush applies: the running request is retracted (its 4 prompt tokens go
  // to the old cache, which is dropped) and prefills again.
  ASSERT_EQ(Next(&plan), Decision::kRun);
  EXPECT_EQ(report, "flushed: retracted 1 running requests, dropped 4 cached tokens");
  EXPECT_EQ(plan.batch.mode, ForwardMode::kExtend);
  EXPECT_EQ(sched->stats().retractions, 1);
}

// Two swaps staged before a boundary: the newer one takes effect, the older one is answered (a
// control call waiting on it must not hang until shutdown).
TEST_F(DecisionCore, ACacheSwapStagedOverAnotherEndsTheOlderOne) {
  std::vector<std::string> answers;
  auto answer = [&](const Status& s, const std::string& r) { answers.push_back(s.ok() ? r : s.ToString()); };
  sched->SwapCache(OwnCache(std::make_unique<RadixCache>()), CacheSwapMode::kDrain, answer);
  ASSERT_EQ(answers.size(), 0u);
  sched->SwapCache(OwnCache(std::make_unique<RadixCache>()), CacheSwapMode::kDrain, answer);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_NE(answers[0].find("superseded by a newer cache swap"), std::string::npos) << answers[0];
  Plan plan;
  EXPECT_EQ(Next(&plan), Decision::kNothing);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[1], "drained: waited 0 iterations for running requests, dropped 0 cached tokens");
}

TEST_F(DecisionCore, AChunkRowGivesNoToken) {
  SchedulerConfig c = Config();
  c.chunked_prefill_size = 8;
  Make(c);
  Submit(1, 20, 3);
  Plan plan;
  std::vector<PlanEntry::Kind> kinds;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(Next(&plan), Decision::kRun);
    ASSERT_EQ(plan.entries.size(), 1u);
    kinds.push_back(plan.entries[0].kind);
    ASSERT_TRUE(sched->Advance(plan, Tokens(plan, {80 + i})).ok());
  }
  EXPECT_EQ(kinds, (std::vector<PlanEntry::Kind>{PlanEntry::kChunk, PlanEntry::kChunk, PlanEntry::kPrefill}));
  EXPECT_EQ(out[1].tokens, std::vector<int32_t>{82});  // the chunks' tokens are not outputs
}

}  // namespace
}  // namespace radixserve::sched
