// The KV pool's budget and namespaces, through `radixserve launch` (launch/kv_budget.h):
// kv_tokens:= and kv_memory:= size the pool and both together are refused; the default's start-up
// line states its arithmetic, and the numbers in it agree with the model's KV layout and the rule;
// a second launch in the same namespace is refused before anything starts, with what to do, and
// one under namespace:= serves beside the first, sharing its RouDi.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "core/gguf/gguf_reader.h"
#include "core/model/kv_cache.h"
#include "core/model/llama_config.h"
#include "core/model/llama_model.h"
#include "tests/launch_e2e/launcher.h"
#include "tests/launch_e2e/requests.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::launch_test {
namespace {

std::vector<std::string> Args(int port, std::vector<std::string> more = {}) {
  std::vector<std::string> a = {"model:=" + pipeline_test::Stories260K(), "port:=" + std::to_string(port)};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// The model's KV bytes per token as the worker's cache lays it out (its default: F32 on the CPU).
int64_t WorkerKvBytesPerToken(model::KvType type = model::ModelOptions().kv_type) {
  auto file = gguf::GgufFile::Open(pipeline_test::Stories260K());
  EXPECT_TRUE(file.ok());
  auto config = model::LlamaConfig::FromGguf(**file);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  auto cache = model::KvCache::Create(*config, 100, type);
  EXPECT_TRUE(cache.ok());
  return static_cast<int64_t>((*cache)->bytes() / 100);
}

// The "[launch] KV pool: ..." line.
std::string KvLine(const std::string& out) {
  std::smatch m;
  if (std::regex_search(out, m, std::regex(R"(\[launch\] KV pool: [^\n]*)"))) return m.str();
  return "";
}

TEST(LaunchMemoryBudget, BothKvArgumentsAreRefused) {
  Launcher launcher;
  ExpectStartupFailure(launcher, LaunchOf(LaunchDir() + "/edge.yaml", Args(0, {"kv_memory:=64", "kv_tokens:=1024"})),
                       {"kv_memory:=64 and kv_tokens:=1024 both size the KV pool: give at most one of them"});
}

TEST(LaunchMemoryBudget, KvMemoryTooSmallIsRefused) {
  Launcher launcher;
  ExpectStartupFailure(launcher, LaunchOf(LaunchDir() + "/edge.yaml", Args(0, {"kv_memory:=0"})),
                       {"kv_memory:=0 is not a positive integer"});
}

TEST(LaunchMemoryBudget, KvTokensAndKvMemorySizeThePool) {
  const int64_t bpt = WorkerKvBytesPerToken();
  ASSERT_GT(bpt, 0);
  {
    Launcher launcher;
    int port = pipeline_test::PickFreePort();
    ASSERT_TRUE(launcher.Start(LaunchOf(LaunchDir() + "/compact.yaml", Args(port, {"kv_tokens:=1000"}))).ok())
        << launcher.Output();
    const std::string line = KvLine(launcher.Output());
    EXPECT_NE(line.find("KV " + std::to_string(bpt) + " B per token (f32), 1000 slots (kv_tokens:=1000)"), std::string::npos)
        << line;
    CompletionResult r = Complete(port, "Once upon a time", 8);
    EXPECT_EQ(r.status, 200) << Describe(r);
  }
  {
    Launcher launcher;
    int port = pipeline_test::PickFreePort();
    ASSERT_TRUE(launcher.Start(LaunchOf(LaunchDir() + "/compact.yaml", Args(port, {"kv_memory:=2"}))).ok())
        << launcher.Output();
    const int64_t slots = (int64_t(2) << 20) / bpt - 256;
    const std::string line = KvLine(launcher.Output());
    EXPECT_NE(line.find(std::to_string(slots) + " slots (kv_memory:=2 MiB / " + std::to_string(bpt) + " B - 256 padding)"),
              std::string::npos)
        << line;
    CompletionResult r = Complete(port, "Once upon a time", 8);
    EXPECT_EQ(r.status, 200) << Describe(r);
  }
}

// kv_type:= reaches the worker and the budget: F16 halves the bytes per token, and the pipeline serves.
TEST(LaunchMemoryBudget, KvTypeSetsTheBytesPerToken) {
  const int64_t f16 = WorkerKvBytesPerToken(model::KvType::kF16);
  EXPECT_EQ(2 * f16, WorkerKvBytesPerToken(model::KvType::kF32));
  Launcher launcher;
  int port = pipeline_test::PickFreePort();
  ASSERT_TRUE(launcher.Start(LaunchOf(LaunchDir() + "/compact.yaml", Args(port, {"kv_tokens:=1000", "kv_type:=f16"}))).ok())
      << launcher.Output();
  const std::string line = KvLine(launcher.Output());
  EXPECT_NE(line.find("KV " + std::to_string(f16) + " B per token (f16), 1000 slots (kv_tokens:=1000)"), std::string::npos)
      << line;
  CompletionResult r = Complete(port, "Once upon a time", 8);
  EXPECT_EQ(r.status, 200) << Describe(r);
}

// A block type needs head_dim a multiple of 32 (stories260K's is 8), an unknown name is named.
TEST(LaunchMemoryBudget, KvTypeTheModelCannotHoldIsRefused) {
  {
    Launcher launcher;
    ExpectStartupFailure(launcher, LaunchOf(LaunchDir() + "/edge.yaml", Args(0, {"kv_type:=q8_0"})),
                         {"KV cache type q8_0 quantises each head's 32-value blocks; this model's head_dim 8 is not a "
                          "multiple of 32: use kv_type f16 or f32"});
  }
  {
    Launcher launcher;
    ExpectStartupFailure(launcher, LaunchOf(LaunchDir() + "/edge.yaml", Args(0, {"kv_type:=q5_0"})), {"q5_0"});
  }
}

// The "RouDi pools X MiB" of the KV line.
double RouDiPoolsMiB(const std::string& out) {
  std::smatch m;
  const std::string line = KvLine(out);
  return std::regex_search(line, m, std::regex(R"(RouDi pools ([0-9.]+) MiB)")) ? std::stod(m[1]) : -1.0;
}

// max_running_requests:= (as llama.cpp's -np) reaches the scheduler and the worker and sizes
// RouDi's pools: one request at a time needs smaller ones than the default 256, and serves.
TEST(LaunchMemoryBudget, MaxRunningRequestsSizesRouDisPools) {
  double one = -1, all = -1;
  {
    Launcher launcher;
    int port = pipeline_test::PickFreePort();
    ASSERT_TRUE(launcher.Start(LaunchOf(LaunchDir() + "/edge.yaml", Args(port, {"kv_tokens:=1000", "max_running_requests:=1"})))
                    .ok())
        << launcher.Output();
    one = RouDiPoolsMiB(launcher.Output());
    CompletionResult r = Complete(port, "Once upon a time", 8);
    EXPECT_EQ(r.status, 200) << Describe(r);
  }
  {
    Launcher launcher;
    int port = pipeline_test::PickFreePort();
    ASSERT_TRUE(launcher.Start(LaunchOf(LaunchDir() + "/edge.yaml", Args(port, {"kv_tokens:=1000"}))).ok())
        << launcher.Output();
    all = RouDiPoolsMiB(launcher.Output());
  }
  EXPECT_GT(one, 0.0);
  EXPECT_LT(one, all);
  Launcher launcher;
  ExpectStartupFailure(launcher, LaunchOf(LaunchDir() + "/edge.yaml", Args(0, {"max_running_requests:=0"})),
                       {"max_running_requests:=0 is not a positive integer (requests at once)"});
}

TEST(LaunchMemoryBudget, DefaultLineStatesItsArithmetic) {
  Launcher launcher;
  int port = pipeline_test::PickFreePort();
  ASSERT_TRUE(launcher.Start(LaunchOf(LaunchDir() + "/edge.yaml", Args(port))).ok()) << launcher.Output();
  const std::string line = KvLine(launcher.Output());
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      line, m,
      std::regex(R"(KV pool: model ([0-9.]+) MiB, KV ([0-9]+) B per token \(f32\), ([0-9]+) slots \(default: 0\.5 x \(MemAvailable ([0-9.]+) MiB - model ([0-9.]+) MiB = ([0-9.]+) MiB\) = ([0-9.]+) MiB = ([0-9]+) slots, kept within \[([0-9]+) \(one context\), ([0-9]+)\]\), KV ([0-9.]+) MiB per worker group .*RouDi pools ([0-9.]+) MiB)")))
      << line;
  const double model_mib = std::stod(m[1]);
  const int64_t bpt = std::stoll(m[2]), slots = std::stoll(m[3]);
  const double avail = std::stod(m[4]), after = std::stod(m[6]), budget = std::stod(m[7]);
  const int64_t by_memory = std::stoll(m[8]), lo = std::stoll(m[9]), hi = std::stoll(m[10]);
  EXPECT_NEAR(model_mib, double(std::filesystem::file_size(pipeline_test::Stories260K())) / (1 << 20), 0.06);
  EXPECT_EQ(bpt, WorkerKvBytesPerToken());
  EXPECT_NEAR(after, avail - model_mib, 0.11);
  EXPECT_NEAR(budget, 0.5 * after, 0.11);
  EXPECT_NEAR(double(by_memory), budget * (1 << 20) / double(bpt) - 256, 2.0 + 0.06 * (1 << 20) / double(bpt));
  EXPECT_EQ(hi, std::max<int64_t>(16384, lo));
  EXPECT_EQ(slots, std::clamp(by_memory, lo, hi));
  EXPECT_NEAR(std::stod(m[11]), double((slots + 256) * bpt) / (1 << 20), 0.06);
  EXPECT_GT(std::stod(m[12]), 0.0);
  // The served context of stories260K is its own (512): the floor is one context.
  EXPECT_EQ(lo, 512);
}

TEST(LaunchNamespaces, SameNamespaceIsRefusedAnotherServesBeside) {
  Launcher first;
  int port1 = pipeline_test::PickFreePort();
  ASSERT_TRUE(first.Start(LaunchOf(LaunchDir() + "/edge.yaml", Args(port1))).ok()) << first.Output();

  // The same (default) namespace: refused before anything starts, saying what to do.
  {
    const std::vector<pid_t> ours = Descendants();
    Launcher second;
    LauncherOptions o = LaunchOf(LaunchDir() + "/edge.yaml", Args(pipeline_test::PickFreePort()));
    o.wait_for_other_roudi = false;
    o.wrapper = {"/usr/bin/env"};  // its Kill() takes its own process tree only, not the first pipeline
    std::string out = ExpectStartupFailure(
        second, o,
        {"a radixserve pipeline is already running in namespace 'default' (launcher pid " + std::to_string(first.pid()) +
             ")",
         "launch this one with namespace:=<name>"},
        ours);
    EXPECT_EQ(out.find("started"), std::string::npos) << out;
  }

  // Its own namespace: serves beside the first, on the same RouDi.
  Launcher third;
  int port3 = pipeline_test::PickFreePort();
  LauncherOptions o = LaunchOf(LaunchDir() + "/edge.yaml", Args(port3, {"namespace:=tenant_b", "kv_tokens:=2048"}));
  o.wait_for_other_roudi = false;
  o.wrapper = {"/usr/bin/env"};
  ASSERT_TRUE(third.Start(o).ok()) << third.Output();
  EXPECT_NE(third.Output().find("using the iceoryx RouDi already running"), std::string::npos) << third.Output();
  EXPECT_NE(third.Output().find("started tenant_b/worker"), std::string::npos) << third.Output();
  for (int round = 0; round < 2; ++round) {
    CompletionResult a = Complete(port1, "Once upon a time", 12);
    CompletionResult b = Complete(port3, "Once upon a time", 12);
    ASSERT_EQ(a.status, 200) << Describe(a);
    ASSERT_EQ(b.status, 200) << Describe(b);
    EXPECT_EQ(a.text, b.text);  // the same model, greedy
    EXPECT_EQ(a.completion_tokens, 12);
  }
  // The one in its own namespace stops on its own; the first keeps serving.
  third.Signal(SIGTERM);
  auto st = third.WaitExit(std::chrono::seconds(60));
  ASSERT_TRUE(st.has_value());
  EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) == 0) << third.Output();
  CompletionResult a = Complete(port1, "Once upon a time", 12);
  EXPECT_EQ(a.status, 200) << Describe(a);
}

}  // namespace
}  // namespace radixserve::launch_test
