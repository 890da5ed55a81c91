// Pipeline parallelism on the real pipeline: launch/pp2.yaml as shipped (two worker processes,
// each holding a contiguous half of the layers, the first passing its hidden state to the second
// over shared memory). llama.cpp's greedy ids for stories260K; concurrent requests give the texts
// they give alone while the scheduler keeps two micro-batches in flight; a stage killed mid-run
// ends the requests in flight (none hangs) and, once respawned, the pipeline serves the same ids.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "tests/launch_e2e/launch_environment.h"
#include "tests/launch_e2e/requests.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::launch_test {
namespace {

using nlohmann::json;
using pipeline_test::Get;
using pipeline_test::WaitFor;

class PpEnvironment : public LaunchEnvironment {
 protected:
  LauncherOptions Options() override {
    return LaunchOf(LaunchDir() + "/pp2.yaml", {"model:=" + pipeline_test::Stories260K(),
                                                "port:=" + std::to_string(pipeline_test::PickFreePort())});
  }
};

PpEnvironment* const g_env = static_cast<PpEnvironment*>(::testing::AddGlobalTestEnvironment(new PpEnvironment));

int Port() { return g_env->launcher().port(); }
json Nodes() { return Get(Port(), "/admin/nodes").json["nodes"]; }
bool Ready() { return Get(Port(), "/health").status == 200; }
json SchedulerStats() {
  json info = Get(Port(), "/get_server_info").json;
  return info.contains("scheduler") ? info["scheduler"].value("stats", json::object()) : json::object();
}

TEST(PipelineParallel, TwoStagesGiveLlamaCppsGreedyIds) {
  ASSERT_TRUE(WaitFor(Ready, std::chrono::seconds(30)));
  json nodes = Nodes();
  ASSERT_TRUE(nodes.contains("worker") && nodes.contains("worker_pp1")) << nodes.dump();
  EXPECT_NE(nodes["worker"]["pid"], nodes["worker_pp1"]["pid"]);  // two processes
  const std::string log = g_env->launcher().Output();
  EXPECT_NE(log.find("pipeline stage 0 of 2, layers [0, 2) of 5"), std::string::npos) << log;
  EXPECT_NE(log.find("pipeline stage 1 of 2, layers [2, 5) of 5"), std::string::npos) << log;
  const auto golden = GoldenCases();
  ASSERT_EQ(golden.size(), 5u);
  for (const auto& g : golden) EXPECT_EQ(GenerateIds(Port(), g.prompt_ids, 32), g.completion_ids);
}

TEST(PipelineParallel, ConcurrentRequestsRunAsTwoMicroBatchesAndGiveTheirAloneTexts) {
  ASSERT_TRUE(WaitFor(Ready, std::chrono::seconds(30)));
  const std::vector<std::string> prompts = {"Once upon a time", "The little dog", "Lily went to the park",
                                            "Tom had a big red ball", "One day, a bird", "The sun was hot",
                                            "Mom said", "A cat sat"};
  std::vector<std::string> alone;
  for (const auto& p : prompts) {
    CompletionResult r = Complete(Port(), p, 48);
    ASSERT_EQ(r.status, 200) << Describe(r);
    alone.push_back(r.text);
  }
  std::vector<CompletionResult> together(prompts.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < prompts.size(); ++i)
    clients.emplace_back([&, i] { together[i] = StreamComplete(Port(), prompts[i], 48); });
  for (auto& c : clients) c.join();
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(together[i].status, 200) << Describe(together[i]);
    EXPECT_EQ(together[i].text, alone[i]) << prompts[i];
  }
  json stats = SchedulerStats();
  EXPECT_GE(stats.value("max_inflight_batches", 0), 2) << stats.dump();
  EXPECT_EQ(stats.value("failed_batches", -1), 0) << stats.dump();
}

TEST(PipelineParallel, AStageKilledMidRunEndsTheRequestsInFlightAndTheRespawnedOneServes) {
  // The first stage: the last one waits on it for the batches in flight.
  ExpectAKilledWorkerEndsItsStreamsAndComesBack(Port(), "worker");
}

}  // namespace
}  // namespace radixserve::launch_test
