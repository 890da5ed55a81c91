// Faults of a launched edge.yaml pipeline: kill -9 of the worker, the detokenizer, the scheduler
// (each is respawned; running requests complete or end with a clear error, never hang; the
// pipeline then serves the same greedy text as before) and of RouDi (the launcher stops
// everything, says why and exits non-zero). Each test launches its own pipeline.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/launch_e2e/launcher.h"
#include "tests/launch_e2e/requests.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::launch_test {
namespace {

using pipeline_test::Get;
using pipeline_test::WaitFor;

constexpr int kLongTokens = 400;
const char* const kPrompt = "Once upon a time, there was a little girl named Lily.";

class LaunchFaults : public ::testing::Test {
 protected:
  // Launches `file` (default: edge.yaml as shipped) and records the reference greedy output.
  void Launch(const std::string& file = LaunchDir() + "/edge.yaml") {
    Status s = launcher_.Start(LaunchOf(file, {"model:=" + pipeline_test::Stories260K(),
                                               "port:=" + std::to_string(pipeline_test::PickFreePort())}));
    ASSERT_TRUE(s.ok()) << s.message();
    CompletionResult r = Complete(port(), kPrompt, 32);
    ASSERT_EQ(r.status, 200) << Describe(r);
    reference_ = r.text;
  }
  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "launcher output:\n%s\n", launcher_.Output().c_str());
    if (launcher_.pid() <= 0 || launcher_.Exited()) return;
    launcher_.Signal(SIGTERM);
    std::optional<int> st = launcher_.WaitExit(std::chrono::seconds(60));
    EXPECT_TRUE(st && WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << launcher_.Output();
    EXPECT_EQ(launcher_.Leftovers(), "");
  }
  int port() const { return launcher_.port(); }

  // Kills `component` with SIGKILL while long streamed requests run; checks each request
  // completed or ended with an error message (a hang ends in the client's read timeout: a
  // failure), that the process is respawned and the pipeline healthy again with the same output.
  void KillWhileServing(const std::string& component, bool requests_may_complete) {
    constexpr int kClients = 4;
    std::atomic<int> started{0};
    std::vector<CompletionResult> results(kClients);
    std::vector<std::thread> clients;
    for (int i = 0; i < kClients; ++i)
      clients.emplace_back([&, i] {
        bool counted = false;
        results[i] = StreamComplete(port(), kPrompt, kLongTokens, [&](std::string_view) {
          if (!counted) started.fetch_add(1);
          counted = true;
          return true;
        });
      });
    bool all_started = WaitFor([&] { return started.load() == kClients; }, std::chrono::seconds(60));
    pid_t old = launcher_.ProcessPid(component);
    int killed = old > 0 ? ::kill(old, SIGKILL) : -1;
    for (auto& c : clients) c.join();  // before any ASSERT: the threads use this frame
    ASSERT_GT(old, 0) << component << " is not running";
    ASSERT_EQ(killed, 0);
    EXPECT_TRUE(all_started);
    int errors = 0;
    for (const auto& r : results) {
      SCOPED_TRACE(Describe(r));
      ASSERT_GE(r.status, 200) << "no HTTP answer: the request hung or the connection broke";
      bool completed = r.status == 200 && r.done && r.error.empty() && r.completion_tokens == kLongTokens;
      if (!completed) {
        ++errors;
        EXPECT_FALSE(r.error.empty()) << "neither completed nor ended with an error message";
        EXPECT_NE(r.error.find(component), std::string::npos) << "the error does not name the lost node";
      }
    }
    if (!requests_may_complete) {
      EXPECT_EQ(errors, kClients) << "requests survived a " << component << " restart";
    }

    pid_t respawned = -1;
    EXPECT_TRUE(WaitFor(
        [&] {
          respawned = launcher_.ProcessPid(component);
          return respawned > 0 && respawned != old;
        },
        std::chrono::seconds(60)))
        << component << " was not respawned";
    EXPECT_TRUE(WaitFor([&] { return Get(port(), "/health").status == 200; }, std::chrono::seconds(60)))
        << "/health did not come back after the " << component << " restart";
    CompletionResult again = Complete(port(), kPrompt, 32);
    EXPECT_EQ(again.status, 200) << Describe(again);
    EXPECT_EQ(again.text, reference_) << "greedy output changed after the " << component << " restart";
    EXPECT_NE(launcher_.Output().find(component), std::string::npos);
  }

  Launcher launcher_;
  std::string reference_;
};

// With edge.yaml's 1 s respawn delay the new worker can register with RouDi before RouDi notices
// the old one died, so "no subscribers" never shows; the scheduler sees the restart as a new worker
// pid on node_status (RemoteWorker::WorkerRestarted), fails the interrupted step at once, and
// flushes the prefix cache whose KV died with the old worker: the output after the restart is the
// same as before.
TEST_F(LaunchFaults, WorkerKilledIsRespawnedAndServesTheSameOutput) {
  ASSERT_NO_FATAL_FAILURE(Launch());
  KillWhileServing("worker", /*requests_may_complete=*/true);
}

// The same fault with a respawn slower than RouDi's death detection (worker respawn_delay 3 s):
// the scheduler sees the worker go, fails the interrupted step, flushes the prefix cache.
TEST_F(LaunchFaults, WorkerKilledWithSlowRespawnIsRespawnedAndServesTheSameOutput) {
  std::ifstream in(LaunchDir() + "/edge.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  auto worker = text.find("name: worker");
  ASSERT_NE(worker, std::string::npos);
  auto delay = text.find("respawn_delay: 1.0", worker);
  ASSERT_NE(delay, std::string::npos) << "edge.yaml changed shape";
  text.replace(delay, std::strlen("respawn_delay: 1.0"), "respawn_delay: 3.0");
  const std::string file = launcher_.dir() + "/edge_slow_worker_respawn.yaml";
  std::ofstream(file) << text;
  ASSERT_NO_FATAL_FAILURE(Launch(file));
  KillWhileServing("worker", /*requests_may_complete=*/true);
}

TEST_F(LaunchFaults, DetokenizerThenSchedulerKilledAreRespawned) {
  ASSERT_NO_FATAL_FAILURE(Launch());
  ASSERT_NO_FATAL_FAILURE(KillWhileServing("detokenizer", /*requests_may_complete=*/false));
  KillWhileServing("scheduler", /*requests_may_complete=*/false);
}

TEST_F(LaunchFaults, RouDiKilledStopsThePipeline) {
  ASSERT_NO_FATAL_FAILURE(Launch());
  pid_t roudi = launcher_.RouDiPid();
  ASSERT_GT(roudi, 0) << "the launcher did not start its own RouDi:\n" << launcher_.Output();
  ASSERT_EQ(::kill(roudi, SIGKILL), 0);
  std::optional<int> st = launcher_.WaitExit(std::chrono::seconds(120));
  ASSERT_TRUE(st.has_value()) << "the launcher did not stop after RouDi died:\n" << launcher_.Output();
  EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) != 0) << "wait status " << *st << "\n" << launcher_.Output();
  EXPECT_NE(launcher_.Output().find("RouDi died"), std::string::npos) << launcher_.Output();
  EXPECT_EQ(launcher_.Leftovers(), "") << launcher_.Output();
}

}  // namespace
}  // namespace radixserve::launch_test
