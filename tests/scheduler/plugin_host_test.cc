// The plugin host: built-in plugins load from the build's lib dir; wrong ABI, missing entry
// point, unknown or bad parameters and failing configure are refused with clear errors and the
// running plugin stays; swaps through loaded plugins take effect at an iteration boundary.
#include <gtest/gtest.h>

#include <set>

#include "core/scheduler/plugin_host.h"
#include "tests/scheduler/scheduler_harness.h"

namespace radixserve::sched {
namespace {

const std::string kTestPlugins = std::string(RADIXSERVE_BINARY_DIR) + "/test_plugins";

std::vector<std::string> Dirs() {
  auto d = PluginHost::DefaultDirs();
  d.insert(d.begin(), kTestPlugins);
  return d;
}

TEST(PluginHost, FindsEveryBuiltInPlugin) {
  PluginHost host(PluginHost::DefaultDirs());
  ASSERT_FALSE(host.dirs().empty());
  std::set<std::string> names;
  for (const auto& p : host.List()) names.insert(std::string(PluginKindName(p.kind)) + ":" + p.name);
  for (const char* n : {"policy:fcfs", "policy:lpm", "policy:dfs-weight", "policy:lof", "policy:random",
                        "policy:priority", "cache:radix", "cache:chunk", "routing:round-robin",
                        "routing:shortest-queue", "routing:cache-aware"})
    EXPECT_TRUE(names.count(n)) << n << " not found in " << host.dirs()[0];
}

TEST(PluginHost, CreatesWithSchemaCheckedParameters) {
  PluginHost host(Dirs());
  auto lpm = host.CreatePolicy("lpm", {{"in_batch_check_threshold", "16"}});
  ASSERT_TRUE(lpm.ok()) << lpm.status().ToString();
  EXPECT_EQ((*lpm)->name(), "lpm");
  auto dfs = host.CreatePolicy("dfs-weight");
  ASSERT_TRUE(dfs.ok()) << dfs.status().ToString();
  auto radix = host.CreateCache("radix", {{"eviction_policy", "lfu"}});
  ASSERT_TRUE(radix.ok()) << radix.status().ToString();
  EXPECT_TRUE((*radix)->shares_prefixes());

  EXPECT_NE(host.Inspect("/usr/lib/x86_64-linux-gnu/libm.so.6").status().message().find("outside the plugin directories"),
            std::string::npos);
  auto info = host.Inspect(PluginHost::DefaultDirs()[0] + "/libradixserve_policy_lpm.so");
  ASSERT_TRUE(info.ok());
  ASSERT_EQ(info->params.size(), 4u);  // fcfs fallback, two dedup thresholds, aging
  EXPECT_STREQ(info->params[0].name, "fcfs_fallback_queue_len");
  EXPECT_STREQ(info->params[0].default_value, "128");
}

TEST(PluginHost, RefusesWithClearErrors) {
  PluginHost host(Dirs());
  auto unknown = host.CreatePolicy("lpm", {{"no_such_knob", "1"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("unknown parameter 'no_such_knob'"), std::string::npos)
      << unknown.status().message();

  auto range = host.CreatePolicy("lpm", {{"in_batch_check_threshold", "-7"}});
  EXPECT_EQ(range.status().code(), StatusCode::kOutOfRange) << range.status().ToString();

  auto bad = host.CreateCache("radix", {{"eviction_policy", "sometimes"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("refused its configuration"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("sometimes"), std::string::npos);

  auto abi = host.CreatePolicy("wrongabi");
  ASSERT_FALSE(abi.ok());
  EXPECT_EQ(abi.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(abi.status().message().find("ABI version 99"), std::string::npos) << abi.status().message();

  // The right ABI version but other headers behind it (the interface hash differs): refused too.
  auto other = host.CreatePolicy("otherheaders");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(other.status().message().find("built against other policy interface headers"), std::string::npos)
      << other.status().message();

  auto noentry = host.CreatePolicy("noentry");
  ASSERT_FALSE(noentry.ok());
  EXPECT_EQ(noentry.status().code(), StatusCode::kNotFound);
  EXPECT_NE(noentry.status().message().find("radixserve_plugin_descriptor"), std::string::npos);

  auto refuses = host.CreatePolicy("refuses");
  ASSERT_FALSE(refuses.ok());
  EXPECT_NE(refuses.status().message().find("mode 'broken' is not supported"), std::string::npos)
      << refuses.status().message();
  EXPECT_TRUE(host.CreatePolicy("refuses", {{"mode", "ok"}}).ok());

  auto missing = host.CreatePolicy("nonexistent");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto kind = host.CreateCache("lpm");  // a policy, asked for as a cache: no such cache file
  EXPECT_FALSE(kind.ok());
}

TEST(PluginHost, HotSwapThroughPluginsKeepsTheRunningOneOnFailure) {
  PluginHost host(Dirs());
  SchedulerConfig c;
  c.max_total_tokens = 2048;
  c.max_running_requests = 16;
  c.max_req_len = 512;
  c.check_invariants_every_iteration = true;
  testing::Harness h(c);
  auto lpm = host.CreatePolicy("lpm");
  ASSERT_TRUE(lpm.ok());
  h.sched->SwapPolicy(std::move(lpm).value());
  for (uint64_t i = 0; i < 8; ++i) h.Submit(i, testing::Prompt(i % 2, 40), 20, true);
  ASSERT_TRUE(h.driver->Step().ok());
  EXPECT_EQ(h.sched->policy().name(), "lpm");

  // A refused plugin never reaches the scheduler.
  auto refused = host.CreatePolicy("wrongabi");
  EXPECT_FALSE(refused.ok());
  ASSERT_TRUE(h.driver->Step().ok());
  EXPECT_EQ(h.sched->policy().name(), "lpm");

  auto dfs = host.CreatePolicy("dfs-weight");
  ASSERT_TRUE(dfs.ok());
  h.sched->SwapPolicy(std::move(dfs).value());
  EXPECT_EQ(h.sched->policy().name(), "lpm");
  ASSERT_TRUE(h.driver->Step().ok());
  EXPECT_EQ(h.sched->policy().name(), "dfs-weight");

  auto chunk = host.CreateCache("chunk");
  ASSERT_TRUE(chunk.ok());
  std::string report;
  h.sched->SwapCache(std::move(chunk).value(), CacheSwapMode::kDrain,
                     [&](const Status& s, const std::string& r) { report = s.ok() ? r : s.ToString(); });
  h.Run();
  EXPECT_EQ(h.sched->cache().name(), "chunk");
  EXPECT_EQ(report.rfind("drained", 0), 0u) << report;
  for (uint64_t i = 0; i < 8; ++i) EXPECT_EQ(h.out[i].tokens, h.Expected(testing::Prompt(i % 2, 40), 20, true));
}

}  // namespace
}  // namespace radixserve::sched
