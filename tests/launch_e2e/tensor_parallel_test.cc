// Tensor parallelism on the real pipeline: launch/tp2.yaml as shipped (two worker processes, each
// with half of every layer, behind one scheduler). llama.cpp's greedy ids for stories260K; both
// ranks are reported; a rank killed mid-run ends the requests in flight (none hangs) and, once the
// launcher has respawned it, the pipeline gives the same greedy ids again.
#include <gtest/gtest.h>

#include <thread>

#include "tests/launch_e2e/launch_environment.h"
#include "tests/launch_e2e/requests.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::launch_test {
namespace {

using nlohmann::json;
using pipeline_test::Get;
using pipeline_test::WaitFor;

class TpEnvironment : public LaunchEnvironment {
 protected:
  LauncherOptions Options() override {
    return LaunchOf(LaunchDir() + "/tp2.yaml", {"model:=" + pipeline_test::Stories260K(), "tp_timeout_ms:=2000",
                                                "port:=" + std::to_string(pipeline_test::PickFreePort())});
  }
};

TpEnvironment* const g_env = static_cast<TpEnvironment*>(::testing::AddGlobalTestEnvironment(new TpEnvironment));

int Port() { return g_env->launcher().port(); }


json Nodes() { return Get(Port(), "/admin/nodes").json["nodes"]; }

bool Ready() { return Get(Port(), "/health").status == 200; }

TEST(TensorParallel, TwoRanksGiveLlamaCppsGreedyIds) {
  ASSERT_TRUE(WaitFor(Ready, std::chrono::seconds(30)));
  json nodes = Nodes();
  ASSERT_TRUE(nodes.contains("worker") && nodes.contains("worker_tp1")) << nodes.dump();
  EXPECT_NE(nodes["worker"]["pid"], nodes["worker_tp1"]["pid"]);  // two processes
  const auto golden = GoldenCases();
  ASSERT_EQ(golden.size(), 5u);
  for (const auto& g : golden) EXPECT_EQ(GenerateIds(Port(), g.prompt_ids, 32), g.completion_ids);
}

TEST(TensorParallel, ARankKilledMidRunEndsTheRequestsInFlightAndTheRespawnedOneServes) {
  ExpectAKilledWorkerEndsItsStreamsAndComesBack(Port(), "worker_tp1");
}

}  // namespace
}  // namespace radixserve::launch_test
