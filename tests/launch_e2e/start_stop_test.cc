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

void LaunchServeAndDrain(const std::string& file, int processes, const std::vector<std::string>& expected_nodes) {
  Launcher launcher;
  int port = pipeline_test::PickFreePort();
  ASSERT_GT(port, 0);
  Status s = launcher.Start(LaunchOf(LaunchDir() + "/" + file, {"model:=" + pipeline_test::Stories260K(),
                                                         "port:=" + std::to_string(port)}));
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_NE(launcher.Output().find("radixserve is ready: http://127.0.0.1:" + std::to_string(port) + "/v1"),
            std::string::npos)
      << launcher.Output();
  ASSERT_EQ(launcher.port(), port);
  EXPECT_EQ(launcher.ProcessCount(), processes);
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
  constexpr int kClients = 8;  // a batch decodes slower than one request: the drain lasts longer
  std::atomic<int> streaming{0};
  std::vector<CompletionResult> long_reqs(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i)
    clients.emplace_back([&, i] {
      bool counted = false;
      long_reqs[i] = StreamComplete(port, "Once upon a time", kLongTokens, [&](std::string_view) {
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
  WaitFor(
      [&] {
        refused = Complete(port, "Once upon a time", 1);
        return refused.status != 200;
      },
      std::chrono::seconds(20));
  for (auto& c : clients) c.join();
  EXPECT_TRUE(all_streaming);
  EXPECT_EQ(refused.status, 503) << Describe(refused);
  EXPECT_NE(refused.error.find("shutting down"), std::string::npos) << Describe(refused);
  for (const CompletionResult& r : long_reqs) {
    EXPECT_EQ(r.status, 200) << Describe(r);
    EXPECT_TRUE(r.done) << Describe(r);
    EXPECT_EQ(r.completion_tokens, kLongTokens) << Describe(r);
    EXPECT_EQ(r.finish_reason, "length") << Describe(r);
    EXPECT_TRUE(r.error.empty()) << Describe(r);
  }

  std::optional<int> status = launcher.WaitExit(std::chrono::seconds(90));
  ASSERT_TRUE(status.has_value()) << "the launcher did not exit after SIGINT:\n" << launcher.Output();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << "wait status " << *status << "\n" << launcher.Output();
  EXPECT_NE(launcher.Output().find("[launch] stopped"), std::string::npos) << launcher.Output();
  EXPECT_EQ(launcher.Leftovers(), "") << launcher.Output();
}

TEST(LaunchStartStop, EdgeServesListsNodesAndDrainsOnSigint) {
  LaunchServeAndDrain("edge.yaml", 4, {"detokenizer", "worker", "scheduler", "api"});
}

TEST(LaunchStartStop, CompactServesListsNodesAndDrainsOnSigint) {
  LaunchServeAndDrain("compact.yaml", 1, {"detokenizer", "worker", "scheduler", "api"});
}

}  // namespace
}  // namespace radixserve::launch_test
