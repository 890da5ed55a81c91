// `radixserve launch` end to end: edge.yaml (four processes) and compact.yaml (one container)
// print the ready line, serve a completion, list their nodes through `radixserve ctl`, and on
// SIGINT drain: a running streamed request completes, a new one gets 503, the launcher exits 0
// and leaves no process and no shared memory behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <thread>

#include "tests/launch_e2e/launcher.h"
#include "tests/launch_e2e/requests.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::launch_test {
namespace {

using nlohmann::json;
using pipeline_test::WaitFor;

constexpr int kLongTokens = 400;  // stories260K has a 512-token context

struct Case {
  std::string file;
  int processes;
  std::string model = pipeline_test::Stories260K();
  int long_tokens = kLongTokens;  // 0: SIGINT while idle
  int clients = 8;                 // a batch decodes slower than one request: the drain lasts longer
  int drain_timeout_s = 30;        // the api node's; the launcher's --stop-timeout gets 15 s more
};

const std::vector<std::string> kNodes = {"detokenizer", "worker", "scheduler", "api"};

void LaunchServeAndDrain(const Case& c) {
  const std::string& file = c.file;
  const std::vector<std::string>& expected_nodes = kNodes;
  Launcher launcher;
  int port = pipeline_test::PickFreePort();
  ASSERT_GT(port, 0);
  LauncherOptions o = LaunchOf(LaunchDir() + "/" + file, {"model:=" + c.model, "port:=" + std::to_string(port),
                                                          "drain_timeout:=" + std::to_string(c.drain_timeout_s)});
  o.flags = {"--stop-timeout", std::to_string(c.drain_timeout_s + 15)};
  Status s = launcher.Start(o);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_NE(launcher.Output().find("radixserve is ready: http://127.0.0.1:" + std::to_string(port) + "/v1"),
            std::string::npos)
      << launcher.Output();
  ASSERT_EQ(launcher.port(), port);
  EXPECT_EQ(launcher.ProcessCount(), c.processes) << launcher.Leftovers();
  EXPECT_GT(launcher.RouDiPid(), 0) << "the launcher did not start its own RouDi";

  CompletionResult first = Complete(port, "Once upon a time", 16);
  ASSERT_EQ(first.status, 200) << Describe(first);
  EXPECT_EQ(first.completion_tokens, 16) << Describe(first);
  EXPECT_FALSE(first.text.empty()) << Describe(first);

  int rc = -1;
  std::string nodes_out = RunCtl(launcher.url(), "nodes", &rc);
  ASSERT_EQ(rc, 0) << nodes_out;
  json nodes = json::parse(nodes_out, nullptr, false);
  ASSERT_TRUE(nodes.is_object() && nodes.contains("nodes")) << nodes_out;
  for (const auto& n : expected_nodes) {
    ASSERT_TRUE(nodes["nodes"].contains(n)) << n << " missing from: " << nodes_out;
    EXPECT_EQ(nodes["nodes"][n].value("state", ""), "active") << n << ": " << nodes_out;
    EXPECT_EQ(nodes["nodes"][n].value("ready", false), true) << n << ": " << nodes_out;
  }
  EXPECT_EQ(nodes["nodes"].size(), expected_nodes.size()) << nodes_out;

  // Long streamed requests are running when SIGINT arrives: they complete, new requests get 503.
  const int kClients = c.long_tokens > 0 ? c.clients : 0;
  std::atomic<int> streaming{0};
  std::vector<CompletionResult> long_reqs(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i)
    clients.emplace_back([&, i] {
      bool counted = false;
      long_reqs[i] = StreamComplete(port, "Once upon a time", c.long_tokens, [&](std::string_view) {
        if (!counted) streaming.fetch_add(1);
        counted = true;
        return true;
      });
    });
  bool all_streaming = WaitFor([&] { return streaming.load() == kClients; }, std::chrono::seconds(60));
  launcher.Signal(SIGINT);
  // Until the api node drains, a new request is still served; from then on it gets 503. A
  // connection error means the server already closed: the drain did not wait for the streams.
  CompletionResult refused;
  if (kClients > 0) WaitFor(
      [&] {
        refused = Complete(port, "Once upon a time", 1);
        return refused.status != 200;
      },
      std::chrono::seconds(20));
  for (auto& c : clients) c.join();
  EXPECT_TRUE(all_streaming);
  if (kClients > 0) {
    EXPECT_EQ(refused.status, 503) << Describe(refused);
    // While draining the api refuses new work ("not ready" for /health and generation alike).
    EXPECT_TRUE(refused.error.find("shutting down") != std::string::npos ||
                refused.error.find("not ready") != std::string::npos)
        << Describe(refused);
  }
  for (const CompletionResult& r : long_reqs) {
    EXPECT_EQ(r.status, 200) << Describe(r);
    EXPECT_TRUE(r.done) << Describe(r);
    EXPECT_EQ(r.completion_tokens, c.long_tokens) << Describe(r);
    EXPECT_EQ(r.finish_reason, "length") << Describe(r);
    EXPECT_TRUE(r.error.empty()) << Describe(r);
  }

  std::optional<int> status = launcher.WaitExit(std::chrono::seconds(c.drain_timeout_s + 60));
  ASSERT_TRUE(status.has_value()) << "the launcher did not exit after SIGINT:\n" << launcher.Output();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << "wait status " << *status << "\n" << launcher.Output();
  EXPECT_NE(launcher.Output().find("[launch] stopped"), std::string::npos) << launcher.Output();
  EXPECT_EQ(launcher.Leftovers(), "") << launcher.Output();
  CompletionResult after = Complete(port, "Once upon a time", 1);
  EXPECT_EQ(after.status, -1) << "the port still answers after the launcher exited: " << Describe(after);
}

TEST(LaunchStartStop, EdgeServesListsNodesAndDrainsOnSigint) { LaunchServeAndDrain({"edge.yaml", 4}); }

// compact.yaml stopped while idle; its drain of running requests is the disabled test below.
TEST(LaunchStartStop, CompactServesListsNodesAndStopsOnSigint) {
  LaunchServeAndDrain({"compact.yaml", 1, pipeline_test::Stories260K(), /*long_tokens=*/0});
}

// In a container the node_status of every node keeps flowing while the api node drains (the
// container publishes from its own thread), so requests longer than the 3 s status freshness
// window finish instead of being failed as "lost". Two 1500-token requests (400 under the
// sanitizers) on a 4096-context model drain for well over 3 s; the drain timeout is raised to 120 s
// so that a slow build finishes them too.
TEST(LaunchStartStop, CompactDrainsRequestsLongerThanThreeSeconds) {
  const std::string model = std::string(::testing::TempDir()) + "/launch_e2e_ctx4096_" +
                            std::to_string(::getpid()) + ".gguf";
  std::string cmd = pipeline_test::RadixserveBinary() + " gen-model --size tiny --context 4096 -o " + model +
                    " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
#if RADIXSERVE_SANITIZED
  constexpr int kLongRequestTokens = 400;  // the instrumented model is over ten times slower: still > 3 s
#else
  constexpr int kLongRequestTokens = 1500;
#endif
  LaunchServeAndDrain({"compact.yaml", 1, model, kLongRequestTokens, /*clients=*/2, /*drain_timeout_s=*/120});
  std::remove(model.c_str());
}

}  // namespace
}  // namespace radixserve::launch_test
