// The api node's rooms that hold state: RequestStreams (the requests in flight
// and their sinks) and NodeHealth (what node_status says), without RouDi.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "nodes/api/node_health.h"
#include "nodes/api/request_streams.h"
#include "nodes/node.h"

namespace radixserve::nodes {
namespace {

struct Collecting : api::ResponseSink {
  void OnOutput(api::GenerateOutput o) override { outputs.push_back(std::move(o)); }
  std::vector<api::GenerateOutput> outputs;
};

api::GenerateRequest Named(const std::string& rid) {
  api::GenerateRequest r;
  r.rid = rid;
  return r;
}

TEST(RequestStreams, GivesEachRequestItsOwnPipelineIdAndFindsItByName) {
  ApiMetrics metrics;
  RequestStreams streams(&metrics);
  auto a = streams.Open(Named("a"), std::make_shared<Collecting>(), 0, {0, 0}, 8);
  auto b = streams.Open(Named("b"), std::make_shared<Collecting>(), 1, {1, 0}, 8);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(streams.Find("b"), std::make_pair(*b, 1));
  EXPECT_EQ(streams.size(), 2u);
  EXPECT_EQ(metrics.requests_in_flight.load(), 2);
}

TEST(RequestStreams, RefusesANameInUseAndAFullQueue) {
  ApiMetrics metrics;
  RequestStreams streams(&metrics);
  ASSERT_TRUE(streams.Open(Named("a"), std::make_shared<Collecting>(), 0, {0, 0}, 2).ok());
  auto again = streams.Open(Named("a"), std::make_shared<Collecting>(), 0, {0, 0}, 2);
  EXPECT_EQ(again.status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(streams.Open(Named("b"), std::make_shared<Collecting>(), 0, {0, 0}, 2).ok());
  auto full = streams.Open(Named("c"), std::make_shared<Collecting>(), 0, {0, 0}, 2);
  EXPECT_EQ(full.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(full.status().message().find("max_queued_requests"), std::string::npos);
  EXPECT_EQ(metrics.requests_rejected_overload.load(), 1u);
}

TEST(RequestStreams, ACancelledRequestIsForgottenWithoutAnOutput) {
  ApiMetrics metrics;
  RequestStreams streams(&metrics);
  auto sink = std::make_shared<Collecting>();
  auto rid = streams.Open(Named("a"), sink, 0, {0, 0}, 8);
  ASSERT_TRUE(rid.ok());
  streams.Cancel(*rid);
  EXPECT_FALSE(streams.Find("a").has_value());
  EXPECT_TRUE(sink->outputs.empty());
  EXPECT_EQ(metrics.requests_in_flight.load(), 0);
  EXPECT_TRUE(streams.Open(Named("a"), sink, 0, {0, 0}, 8).ok());  // the name is free again
}

TEST(RequestStreams, FailingAGroupEndsOnlyItsRequestsWith503) {
  ApiMetrics metrics;
  RequestStreams streams(&metrics);
  auto in0 = std::make_shared<Collecting>(), in1 = std::make_shared<Collecting>();
  ASSERT_TRUE(streams.Open(Named("a"), in0, 0, {0, 0}, 8).ok());
  ASSERT_TRUE(streams.Open(Named("b"), in1, 1, {1, 0}, 8).ok());
  streams.Fail(1, "the dp1/scheduler node restarted");
  ASSERT_EQ(in1->outputs.size(), 1u);
  EXPECT_EQ(in1->outputs[0].finish.kind, FinishKind::kAbort);
  EXPECT_EQ(in1->outputs[0].finish.status_code, 503);
  EXPECT_EQ(in1->outputs[0].finish.message, "the dp1/scheduler node restarted");
  EXPECT_TRUE(in0->outputs.empty());
  EXPECT_TRUE(streams.Find("a").has_value());
  streams.Fail(-1, "shutting down");
  EXPECT_EQ(in0->outputs.size(), 1u);
  EXPECT_EQ(streams.size(), 0u);
}

transport::NodeStatusMsg Status(const char* name, const char* component, bool ready, int32_t pid) {
  transport::NodeStatusMsg m{};
  std::strncpy(m.name, name, sizeof(m.name) - 1);
  std::strncpy(m.component, component, sizeof(m.component) - 1);
  m.ready = ready ? 1 : 0;
  m.state = static_cast<uint8_t>(NodeState::kActive);
  m.pid = pid;
  return m;
}

TEST(NodeHealth, AGroupIsReadyWhenEveryRequiredNodeIsReady) {
  NodeHealth health;
  health.Configure({"dp0", "dp1"}, /*data_parallel=*/true, {"scheduler", "worker"});
  EXPECT_FALSE(health.AnyGroupReady());
  EXPECT_EQ(health.Update(1, Status("scheduler", "scheduler", true, 10)), "");
  EXPECT_FALSE(health.AnyGroupReady());
  health.Update(1, Status("worker", "worker", true, 11));
  bool ready[2] = {true, false};
  health.ReadyGroups(ready);
  EXPECT_FALSE(ready[0]);
  EXPECT_TRUE(ready[1]);
  EXPECT_TRUE(health.AnyGroupReady());
  EXPECT_TRUE(health.Json(false).contains("dp1/worker"));
  health.Update(1, Status("worker", "worker", false, 11));  // deactivating
  EXPECT_FALSE(health.AnyGroupReady());
}

TEST(NodeHealth, ASchedulerWithANewPidRestartedAndLostItsRequests) {
  NodeHealth health;
  health.Configure({"default"}, /*data_parallel=*/false, {"scheduler"});
  EXPECT_EQ(health.Update(0, Status("scheduler", "scheduler", true, 10)), "");
  EXPECT_EQ(health.Update(0, Status("scheduler", "scheduler", true, 10)), "");
  EXPECT_EQ(health.Update(0, Status("scheduler", "scheduler", true, 12)), "scheduler");
  // A worker's restart is the scheduler's to handle: no request is lost here.
  health.Update(0, Status("worker", "worker", true, 20));
  EXPECT_EQ(health.Update(0, Status("worker", "worker", true, 21)), "");
  EXPECT_TRUE(health.TakeSilent().empty());  // all heard just now
}

}  // namespace
}  // namespace radixserve::nodes
