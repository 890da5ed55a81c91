// The scheduler node's behaviour without RouDi (SchedulerService with the fake
// worker): what it sends the detokenizer, and how it answers control calls:
// at once, except a cache swap, whose reply comes when the swap completes
// while everything else keeps being answered.
#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "nodes/scheduler/scheduler_service.h"
#include "tests/scheduler/fake_worker.h"

namespace radixserve::nodes {
namespace {

using V = std::vector<int32_t>;

class SchedulerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SchedulerService::Options o;
    o.config.max_total_tokens = 4096;
    o.config.max_running_requests = 16;
    o.config.max_req_len = 512;
    o.config.check_invariants_every_iteration = true;
    o.policy = "fcfs";
    o.cache = "radix";
    const sched::FakeWorkerOptions w = sched::FakeWorkerFor(o.config);
    o.config.eos_token_ids = {w.eos_id};
    worker_ = std::make_unique<sched::FakeWorker>(w);
    SchedulerService::Sinks sinks;
    sinks.outputs = [this](const sched::BatchTokenIdOut& b) {
      for (const auto& out : b.outputs) outputs_[out.rid].push_back(out);
    };
    sinks.reply = [this](uint64_t call_id, control::ControlReply r) { replies_.emplace_back(call_id, std::move(r)); };
    auto s = SchedulerService::Create(o, worker_.get(), nullptr, std::move(sinks));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    service_ = std::move(*s);
  }

  void Submit(uint64_t rid, V prompt, int32_t max_new) {
    sched::TokenizedRequest r;
    r.rid = rid;
    r.input_ids = std::move(prompt);
    r.spec.sampling.max_new_tokens = max_new;
    r.spec.sampling.ignore_eos = true;
    r.spec.sampling.skip_special_tokens = rid % 2 == 0;
    service_->Submit(std::move(r));
  }
  void Step(int n) {
    for (int i = 0; i < n; ++i) ASSERT_TRUE(service_->Step(nullptr).ok());
  }
  // Steps at least once (submitted requests and staged swaps are taken at the next step), as the
  // node's loop does after handling its inputs.
  void RunUntilIdle() {
    int i = 0;
    do {
      ASSERT_TRUE(service_->Step(nullptr).ok());
    } while (++i < 100000 && !service_->scheduler().idle());
    ASSERT_TRUE(service_->scheduler().idle());
  }
  control::ControlRequest Call(uint64_t id) {
    control::ControlRequest r;
    r.set_call_id(id);
    return r;
  }
  const control::ControlReply* ReplyTo(uint64_t id) const {
    for (const auto& [call, r] : replies_)
      if (call == id) return &r;
    return nullptr;
  }

  std::unique_ptr<sched::FakeWorker> worker_;
  std::unique_ptr<SchedulerService> service_;
  std::map<uint64_t, std::vector<sched::TokenOutput>> outputs_;
  std::vector<std::pair<uint64_t, control::ControlReply>> replies_;
};

// The detokenizer's context is the prompt's last tokens, in the request's first message only.
TEST_F(SchedulerServiceTest, FirstOutputCarriesThePromptTailAndTheRequestsSettings) {
  Submit(2, {11, 12, 13, 14, 15, 16, 17, 18}, 6);
  Submit(3, {21, 22}, 3);
  RunUntilIdle();
  ASSERT_FALSE(outputs_[2].empty());
  EXPECT_EQ(outputs_[2].front().prompt_tail, V({14, 15, 16, 17, 18}));
  EXPECT_EQ(outputs_[3].front().prompt_tail, V({21, 22}));
  for (uint64_t rid : {2, 3}) {
    for (size_t i = 1; i < outputs_[rid].size(); ++i) EXPECT_TRUE(outputs_[rid][i].prompt_tail.empty()) << rid;
    for (const auto& o : outputs_[rid]) EXPECT_EQ(o.skip_special_tokens, rid % 2 == 0) << rid;
    EXPECT_TRUE(outputs_[rid].back().finished);
  }
  EXPECT_EQ(worker_->live_states(), 0u);
}

// A drain swap waits for the running requests; stats are answered meanwhile and show it pending.
TEST_F(SchedulerServiceTest, ASwapRepliesWhenItCompletesAndStatsAnswerMeanwhile) {
  for (uint64_t rid = 1; rid <= 3; ++rid) Submit(rid, {5, 6, 7, static_cast<int32_t>(rid)}, 40);
  Step(3);
  ASSERT_GT(service_->scheduler().num_running(), 0u);
  control::ControlRequest swap = Call(7);
  swap.mutable_swap_cache()->set_name("chunk");
  swap.mutable_swap_cache()->set_mode("drain");
  service_->HandleControl(swap);
  EXPECT_EQ(ReplyTo(7), nullptr) << "a drain cannot complete while requests run";
  EXPECT_EQ(service_->swaps_in_flight(), 1u);

  control::ControlRequest stats = Call(8);
  stats.mutable_get_stats();
  service_->HandleControl(stats);
  const control::ControlReply* s = ReplyTo(8);
  ASSERT_NE(s, nullptr) << "stats wait for no swap";
  ASSERT_TRUE(s->success());
  auto j = nlohmann::json::parse(s->json());
  EXPECT_EQ(j["cache_swaps_in_flight"], 1);
  EXPECT_GT(j["num_running_reqs"].get<int>(), 0);

  RunUntilIdle();
  const control::ControlReply* done = ReplyTo(7);
  ASSERT_NE(done, nullptr);
  EXPECT_TRUE(done->success()) << done->message();
  EXPECT_EQ(done->message().rfind("drained", 0), 0u) << done->message();
  EXPECT_EQ(service_->scheduler().cache().name(), std::string_view("chunk"));
  for (uint64_t rid = 1; rid <= 3; ++rid) {
    ASSERT_FALSE(outputs_[rid].empty());
    EXPECT_TRUE(outputs_[rid].back().finished);
    EXPECT_EQ(outputs_[rid].back().completion_tokens, 40);
  }
}

// Refusals carry their code: the caller's mistakes are InvalidArgument, a busy state is
// FailedPrecondition; the api maps the code, not the text.
TEST_F(SchedulerServiceTest, RefusalsCarryTheirStatusCode) {
  Submit(1, {5, 6, 7}, 50);
  Step(2);
  uint64_t id = 100;
  auto code_of = [&](control::ControlRequest r) {
    r.set_call_id(++id);
    service_->HandleControl(r);
    const control::ControlReply* reply = ReplyTo(id);
    EXPECT_NE(reply, nullptr);
    EXPECT_FALSE(reply == nullptr || reply->success());
    return reply ? static_cast<StatusCode>(reply->code()) : StatusCode::kOk;
  };
  control::ControlRequest flush;
  flush.mutable_flush_cache();
  EXPECT_EQ(code_of(flush), StatusCode::kFailedPrecondition);
  control::ControlRequest policy;
  policy.mutable_swap_policy()->set_name("nosuchpolicy");
  EXPECT_EQ(code_of(policy), StatusCode::kInvalidArgument);
  control::ControlRequest mode;
  mode.mutable_swap_cache()->set_name("radix");
  mode.mutable_swap_cache()->set_mode("sideways");
  EXPECT_EQ(code_of(mode), StatusCode::kInvalidArgument);
  EXPECT_EQ(code_of(control::ControlRequest()), StatusCode::kInvalidArgument);
  control::ControlRequest param;
  param.mutable_set_parameter()->set_name("policy");
  param.mutable_set_parameter()->set_value("fcfs");
  EXPECT_EQ(code_of(param), StatusCode::kInvalidArgument) << "no parameter sink: refused, not crashed";
  RunUntilIdle();
  // Idle: the same flush succeeds (after the last request's in-flight step is drained).
  flush.set_call_id(++id);
  service_->HandleControl(flush);
  RunUntilIdle();
  ASSERT_NE(ReplyTo(id), nullptr);
  EXPECT_TRUE(ReplyTo(id)->success()) << ReplyTo(id)->message();
  EXPECT_EQ(ReplyTo(id)->message(), "cache flushed");
}

// The loop ends with a swap in flight: its caller hears so instead of waiting for a timeout.
TEST_F(SchedulerServiceTest, StopAnswersSwapsStillInFlight) {
  Submit(1, {5, 6, 7}, 100);
  Step(2);
  control::ControlRequest swap = Call(9);
  swap.mutable_swap_cache()->set_name("radix");
  service_->HandleControl(swap);
  ASSERT_EQ(ReplyTo(9), nullptr);
  service_->Stop();
  const control::ControlReply* r = ReplyTo(9);
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(r->success());
  EXPECT_EQ(static_cast<StatusCode>(r->code()), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace radixserve::nodes
