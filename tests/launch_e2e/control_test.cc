// Runtime control of a launched pipeline through /admin: policy swaps under load (no request
// lost, the new policy visible at once, its counters growing), bad swaps refused with a precise
// message while the old policy keeps serving, cache swaps radix <-> chunk in drain and flush mode
// during requests, and cache flushes refused while busy.
//
// One launch for the whole program: launch/edge.yaml with the scheduler's plugin_dirs extended by
// the build's test_plugins folder (deliberately broken plugins) and by the folder of the example
// plugin built out of tree against the installed SDK (tests/sdk/build_example_plugin.sh, a ctest
// fixture of this test), started by a gtest Environment.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "tests/launch_e2e/launch_environment.h"
#include "tests/launch_e2e/launcher.h"
#include "tests/launch_e2e/requests.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::launch_test {
namespace {

using nlohmann::json;
using pipeline_test::Get;
using pipeline_test::HttpReply;
using pipeline_test::PostJson;
using pipeline_test::WaitFor;
namespace fs = std::filesystem;

std::string SdkExamplePluginDir();

class ControlEnvironment : public LaunchEnvironment {
 public:
  void TearDown() override {
    LaunchEnvironment::TearDown();
    fs::remove(file_);
  }

 protected:
  LauncherOptions Options() override {
    // edge.yaml as shipped, plus the test plugins' folder for the scheduler.
    std::ifstream in(LaunchDir() + "/edge.yaml");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    const std::string anchor = "cache: \"$(var cache)\"";
    auto at = text.find(anchor);
    EXPECT_NE(at, std::string::npos) << "edge.yaml changed shape: the scheduler has no cache parameter";
    if (at != std::string::npos)
      text.insert(at + anchor.size(),
                  ", plugin_dirs: \"" + LibDir() + ":" + TestPluginDir() + ":" + SdkExamplePluginDir() + "\"");
    file_ = (fs::temp_directory_path() / ("radixserve_control_test_" + std::to_string(::getpid()) + ".yaml")).string();
    std::ofstream(file_) << text;
    return LaunchOf(file_, {"model:=" + pipeline_test::Stories260K(),
                            "port:=" + std::to_string(pipeline_test::PickFreePort())});
  }

 private:
  std::string file_;
};

ControlEnvironment* const g_env =
    static_cast<ControlEnvironment*>(::testing::AddGlobalTestEnvironment(new ControlEnvironment));

int Port() { return g_env->launcher().port(); }

std::string SdkExamplePluginDir() { return std::string(RADIXSERVE_BINARY_DIR) + "/sdk_example/plugins"; }

json SchedulerInfo() {
  HttpReply r = Get(Port(), "/get_server_info");
  if (r.status != 200 || !r.json.is_object() || !r.json.contains("scheduler")) return json::object();
  return r.json["scheduler"];
}

std::string Policy() { return SchedulerInfo().value("policy", ""); }
std::string Cache() { return SchedulerInfo().value("cache", ""); }

int64_t Counter(const json& sched, const char* name) {
  if (!sched.contains("policy_stats") || !sched["policy_stats"].is_object()) return -1;
  const json& s = sched["policy_stats"];
  return s.contains(name) && s[name].is_number() ? s[name].get<int64_t>() : -1;
}

std::string Message(const HttpReply& r) {
  if (!r.json.is_object()) return r.body;
  if (r.json.contains("error")) return r.json["error"].value("message", r.body);
  return r.json.value("message", r.body);
}

// Greedy reference text of a prompt (exactly `tokens` tokens).
std::string Reference(const std::string& prompt, int tokens) {
  CompletionResult r = Complete(Port(), prompt, tokens);
  EXPECT_EQ(r.status, 200) << Describe(r);
  return r.text;
}

// Sends streamed requests from `threads` clients until told to stop (and at least `min_requests`),
// cycling through `prompts`; records every result.
class Load {
 public:
  Load(std::vector<std::string> prompts, int tokens, int threads, int min_requests)
      : prompts_(std::move(prompts)), tokens_(tokens), min_requests_(min_requests) {
    for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { Run(); });
  }
  ~Load() { Finish(); }
  int completed() const { return completed_.load(); }
  // Lets the clients stop once min_requests were sent; waits for them.
  void Finish() {
    stop_.store(true);
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  // (prompt index, result) of every request.
  const std::vector<std::pair<int, CompletionResult>>& results() const { return results_; }

 private:
  void Run() {
    constexpr int kCap = 3000;  // a failure guard against a runaway loop
    while (true) {
      int i = next_.fetch_add(1);
      if ((stop_.load() && i >= min_requests_) || i >= kCap) return;
      int p = i % static_cast<int>(prompts_.size());
      CompletionResult r = StreamComplete(Port(), prompts_[p], tokens_);
      {
        std::lock_guard<std::mutex> l(mu_);
        results_.emplace_back(p, std::move(r));
      }
      completed_.fetch_add(1);
    }
  }
  std::vector<std::string> prompts_;
  int tokens_;
  int min_requests_;
  std::atomic<int> next_{0};
  std::atomic<int> completed_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::pair<int, CompletionResult>> results_;
  std::vector<std::thread> threads_;
};

std::vector<std::string> SharedPrefixPrompts() {
  const std::string base = "Once upon a time, there was a little girl named Lily. She loved to play outside. ";
  return {base + "One day", base + "She saw a big", base + "Her mom said", base + "The sun was",
          base + "Lily wanted to", base + "They went to the park", base + "A dog came", base + "Then"};
}

// Waits (failure guard) until the active policy's `counter` exceeds `above`.
bool CounterGrows(const char* counter, int64_t above) {
  return WaitFor([&] { return Counter(SchedulerInfo(), counter) > above; }, std::chrono::seconds(60));
}

// The worker names its CPU features, kernels and GEMM core at start-up, and server info says the same.
TEST(LaunchControl, WorkerLogsAndServerInfoShowTheKernelsChosen) {
  HttpReply r = Get(Port(), "/get_server_info");
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_TRUE(r.json.contains("system_info")) << r.body;
  const std::string info = r.json["system_info"].get<std::string>();
  for (const char* part : {"cpu: ", "AVX2 = ", "AMX_INT8 = ", "kernels: ", "gemm: OpenBLAS", "quantised prefill: "})
    EXPECT_NE(info.find(part), std::string::npos) << part << " missing in " << info;
  const std::string log = g_env->launcher().Output();
  EXPECT_NE(log.find("worker: " + info), std::string::npos) << "the worker did not log the same line:\n" << log;
}

TEST(LaunchControl, PolicySwapUnderLoadLosesNoRequest) {
  ASSERT_EQ(Policy(), "lpm");
  const std::vector<std::string> prompts = SharedPrefixPrompts();
  constexpr int kTokens = 12;
  std::vector<std::string> reference;
  for (const auto& p : prompts) reference.push_back(Reference(p, kTokens));

  Load load(prompts, kTokens, /*threads=*/16, /*min_requests=*/200);
  // lpm, as launched: its counters grow under the load.
  EXPECT_TRUE(CounterGrows("orders", 0)) << SchedulerInfo().dump();

  HttpReply swap1 = PostJson(Port(), "/admin/policy/swap", {{"name", "fcfs"}});
  ASSERT_EQ(swap1.status, 200) << swap1.body;
  EXPECT_NE(Message(swap1).find("lpm -> fcfs"), std::string::npos) << swap1.body;
  // The swap takes effect at the scheduler's next iteration boundary, just after the reply.
  json info;
  EXPECT_TRUE(WaitFor([&] { return (info = SchedulerInfo()).value("policy", "") == "fcfs"; },
                      std::chrono::seconds(10)))
      << info.dump();
  EXPECT_TRUE(CounterGrows("orders", Counter(info, "orders"))) << SchedulerInfo().dump();
  EXPECT_EQ(Counter(SchedulerInfo(), "fcfs_fallbacks"), -1) << "fcfs reports lpm's counters";

  HttpReply swap2 = PostJson(Port(), "/admin/policy/swap",
                             {{"name", "lpm"},
                              {"params", {{"in_batch_check_threshold", "16"}, {"in_batch_deprioritize_threshold", "8"}}}});
  ASSERT_EQ(swap2.status, 200) << swap2.body;
  EXPECT_NE(Message(swap2).find("fcfs -> lpm"), std::string::npos) << swap2.body;
  EXPECT_TRUE(WaitFor([&] { return (info = SchedulerInfo()).value("policy", "") == "lpm"; },
                      std::chrono::seconds(10)))
      << info.dump();
  EXPECT_GE(Counter(info, "fcfs_fallbacks"), 0) << info.dump();
  EXPECT_TRUE(CounterGrows("orders", Counter(info, "orders"))) << SchedulerInfo().dump();

  // The policies of SCHEDULER_SPEC 13, one after the other under the same load, then lpm again.
  std::string from = "lpm";
  for (const char* to : {"hrrn", "shortest-prefill-first", "routing-key", "lpm"}) {
    HttpReply swap = PostJson(Port(), "/admin/policy/swap", {{"name", to}});
    ASSERT_EQ(swap.status, 200) << swap.body;
    EXPECT_NE(Message(swap).find(from + " -> " + to), std::string::npos) << swap.body;
    EXPECT_TRUE(WaitFor([&] { return (info = SchedulerInfo()).value("policy", "") == to; }, std::chrono::seconds(10)))
        << info.dump();
    EXPECT_TRUE(CounterGrows("orders", Counter(info, "orders"))) << to << ": " << SchedulerInfo().dump();
    from = to;
  }

  load.Finish();
  ASSERT_GE(load.results().size(), 200u);
  int failed = 0;
  for (const auto& [p, r] : load.results()) {
    bool ok = r.status == 200 && r.done && r.error.empty() && r.completion_tokens == kTokens &&
              r.finish_reason == "length" && r.text == reference[p];
    if (!ok && ++failed <= 5)
      ADD_FAILURE() << "prompt " << p << " (reference '" << reference[p] << "'): " << Describe(r);
  }
  EXPECT_EQ(failed, 0) << "of " << load.results().size() << " requests";
}

// Tenants (cache_salt) sharing a prompt share no cached prefix, a tenant repeating does; /metrics
// shows hit rates per salt (by hash, never the salt) and latencies per priority class; fair
// prefill is a parameter that can be set while serving.
TEST(LaunchControl, SaltsClassesAndFairPrefillOnTheRealPipeline) {
  const std::string prompt = SharedPrefixPrompts()[0];
  auto cached = [&](const char* salt, const char* priority) {
    HttpReply r = PostJson(Port(), "/v1/completions",
                           {{"prompt", prompt}, {"max_tokens", 4}, {"temperature", 0}, {"cache_salt", salt},
                            {"priority", priority}});
    EXPECT_EQ(r.status, 200) << r.body;
    if (r.status != 200) return int64_t(-1);
    return r.json["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>();
  };
  const std::string salt_a = "tenant-a-" + std::to_string(::getpid()), salt_b = "tenant-b-" + std::to_string(::getpid());
  EXPECT_EQ(cached(salt_a.c_str(), "bulk"), 0);
  EXPECT_EQ(cached(salt_b.c_str(), "interactive"), 0);  // same prompt, other tenant: nothing shared
  EXPECT_GT(cached(salt_a.c_str(), "bulk"), 10);         // the same tenant again: its prefix is cached

  HttpReply metrics = Get(Port(), "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.body.find(salt_a), std::string::npos) << "a salt leaked into /metrics";
  EXPECT_NE(metrics.body.find("radixserve_salt_cache_hit_rate{salt=\""), std::string::npos) << metrics.body;
  for (const char* cls : {"interactive", "default", "bulk"})
    EXPECT_NE(metrics.body.find(std::string("radixserve_class_time_to_first_token_seconds_count{class=\"") + cls),
              std::string::npos)
        << cls;
  EXPECT_EQ(metrics.body.find("radixserve_class_e2e_request_latency_seconds_count{class=\"bulk\"} 0"),
            std::string::npos)
      << "the bulk requests were not counted";

  HttpReply set = PostJson(Port(), "/admin/params/scheduler", {{"name", "fair_prefill_chunk"}, {"value", "64"}});
  ASSERT_EQ(set.status, 200) << set.body;
  json stats;
  EXPECT_TRUE(WaitFor(
      [&] {
        stats = Get(Port(), "/admin/cache/stats").json;
        return stats.is_object() && stats.contains("result") && stats["result"].value("fair_prefill_chunk", -1) == 64;
      },
      std::chrono::seconds(10)))
      << stats.dump();
  EXPECT_EQ(Reference(prompt, 8), Reference(prompt, 8));  // still serving, same greedy output
  ASSERT_EQ(PostJson(Port(), "/admin/params/scheduler", {{"name", "fair_prefill_chunk"}, {"value", "0"}}).status, 200);
}

// examples/policy_plugin, built out of tree against `cmake --install --component sdk` (the ctest
// fixture), hot-swaps into the running pipeline: loaded, named, serving the same greedy output,
// its parameters checked against its own schema; then lpm again.
TEST(LaunchControl, AnOutOfTreePluginBuiltAgainstTheInstalledSdkSwapsIn) {
  ASSERT_EQ(Policy(), "lpm");
  const std::string plugin = SdkExamplePluginDir() + "/libradixserve_policy_shortest_job_first.so";
  ASSERT_TRUE(fs::exists(plugin)) << plugin << " is missing: run this test through ctest (its fixture builds it)";
  HttpReply load = PostJson(Port(), "/admin/plugin/load", {{"path", plugin}});
  ASSERT_EQ(load.status, 200) << load.body;
  EXPECT_NE(load.body.find("shortest-job-first"), std::string::npos) << load.body;

  const std::vector<std::string> prompts = SharedPrefixPrompts();
  constexpr int kTokens = 10;
  std::vector<std::string> reference;
  for (const auto& p : prompts) reference.push_back(Reference(p, kTokens));
  Load traffic(prompts, kTokens, /*threads=*/8, /*min_requests=*/60);
  HttpReply refused = PostJson(Port(), "/admin/policy/swap",
                               {{"name", "shortest-job-first"}, {"params", {{"prompt_weight", "-1"}}}});
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_NE(Message(refused).find("prompt_weight"), std::string::npos) << refused.body;
  HttpReply swap = PostJson(Port(), "/admin/policy/swap",
                            {{"name", "shortest-job-first"}, {"params", {{"prompt_weight", "0.5"}}}});
  ASSERT_EQ(swap.status, 200) << swap.body;
  EXPECT_NE(Message(swap).find("lpm -> shortest-job-first"), std::string::npos) << swap.body;
  EXPECT_TRUE(WaitFor([] { return Policy() == "shortest-job-first"; }, std::chrono::seconds(10)))
      << SchedulerInfo().dump();
  // Requests admitted in the new order still give the greedy output.
  std::vector<CompletionResult> under_it;
  for (size_t i = 0; i < prompts.size(); ++i) under_it.push_back(Complete(Port(), prompts[i], kTokens));
  traffic.Finish();
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(under_it[i].status, 200) << Describe(under_it[i]);
    EXPECT_EQ(under_it[i].text, reference[i]) << i;
  }
  for (const auto& [p, r] : traffic.results()) {
    EXPECT_EQ(r.status, 200) << Describe(r);
    EXPECT_EQ(r.text, reference[static_cast<size_t>(p)]) << p;
  }
  HttpReply back = PostJson(Port(), "/admin/policy/swap", {{"name", "lpm"}});
  ASSERT_EQ(back.status, 200) << back.body;
  EXPECT_TRUE(WaitFor([] { return Policy() == "lpm"; }, std::chrono::seconds(10))) << SchedulerInfo().dump();
}

TEST(LaunchControl, BadPolicySwapsAreRefusedAndTheOldPolicyServes) {
  ASSERT_EQ(Policy(), "lpm");
  const std::string reference = Reference("Once upon a time", 8);
  struct Case {
    const char* what;
    json body;
    std::vector<std::string> message_parts;
  };
  const std::vector<Case> cases = {
      {"unknown plugin name", {{"name", "nosuchpolicy"}}, {"no policy plugin 'nosuchpolicy'"}},
      {"a plugin path that does not exist",
       {{"name", "/no/such/dir/libradixserve_policy_x.so"}},
       {"no policy plugin '/no/such/dir/libradixserve_policy_x.so'"}},
      {"wrong ABI", {{"name", "wrongabi"}}, {"libradixserve_policy_wrongabi.so", "ABI version 99"}},
      {"no entry point", {{"name", "noentry"}}, {"libradixserve_policy_noentry.so", "does not export"}},
      {"unknown parameter",
       {{"name", "lpm"}, {"params", {{"no_such_param", "1"}}}},
       {"unknown parameter 'no_such_param'", "in_batch_check_threshold"}},
      {"out-of-range parameter",
       {{"name", "lpm"}, {"params", {{"in_batch_check_threshold", "-5"}}}},
       {"in_batch_check_threshold", "-5", "outside"}},
      {"non-integer parameter",
       {{"name", "lpm"}, {"params", {{"in_batch_deprioritize_threshold", "many"}}}},
       {"in_batch_deprioritize_threshold", "not an integer"}},
      {"failing configure", {{"name", "refuses"}}, {"refused its configuration", "mode 'broken' is not supported"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    HttpReply r = PostJson(Port(), "/admin/policy/swap", c.body);
    EXPECT_EQ(r.status, 400) << r.body;
    for (const auto& part : c.message_parts) EXPECT_NE(Message(r).find(part), std::string::npos) << r.body;
    EXPECT_EQ(Policy(), "lpm");
    CompletionResult after = Complete(Port(), "Once upon a time", 8);
    EXPECT_EQ(after.status, 200) << Describe(after);
    EXPECT_EQ(after.text, reference) << Describe(after);
  }
  // The same broken libraries by path through plugin/load: refused, nothing changes.
  HttpReply outside = PostJson(Port(), "/admin/plugin/load", {{"path", "/no/such/dir/libradixserve_policy_x.so"}});
  EXPECT_EQ(outside.status, 400) << outside.body;
  EXPECT_NE(Message(outside).find("is outside the plugin directories"), std::string::npos) << outside.body;
  HttpReply missing = PostJson(Port(), "/admin/plugin/load", {{"path", TestPluginDir() + "/libradixserve_policy_x.so"}});
  EXPECT_EQ(missing.status, 400) << missing.body;
  EXPECT_NE(Message(missing).find("cannot load plugin " + TestPluginDir() + "/libradixserve_policy_x.so"),
            std::string::npos)
      << missing.body;
  HttpReply abi = PostJson(Port(), "/admin/plugin/load", {{"path", TestPluginDir() + "/libradixserve_policy_wrongabi.so"}});
  EXPECT_EQ(abi.status, 400) << abi.body;
  EXPECT_NE(Message(abi).find("ABI version 99"), std::string::npos) << abi.body;
  EXPECT_EQ(Policy(), "lpm");
}

// Streamed requests of `prompts` (exactly `tokens` each) on their own threads; Started() once every
// one has received data.
class Batch {
 public:
  Batch(const std::vector<std::string>& prompts, int tokens) : results_(prompts.size()) {
    for (size_t i = 0; i < prompts.size(); ++i)
      threads_.emplace_back([this, i, p = prompts[i], tokens] {
        bool counted = false;
        results_[i] = StreamComplete(Port(), p, tokens, [&](std::string_view) {
          if (!counted) started_.fetch_add(1);
          counted = true;
          return true;
        });
      });
  }
  ~Batch() { Join(); }
  bool WaitStarted() {
    return WaitFor([&] { return started_.load() == static_cast<int>(results_.size()); }, std::chrono::seconds(60));
  }
  const std::vector<CompletionResult>& Join() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
    return results_;
  }

 private:
  std::vector<CompletionResult> results_;
  std::vector<std::thread> threads_;
  std::atomic<int> started_{0};
};

TEST(LaunchControl, CacheSwapsDuringRequestsInDrainAndFlushMode) {
  ASSERT_EQ(Cache(), "radix");
  const std::vector<std::string> prompts = SharedPrefixPrompts();
  constexpr int kTokens = 200;
  std::vector<std::string> reference;
  for (const auto& p : prompts) reference.push_back(Reference(p, kTokens));

  struct Step {
    const char* cache;
    const char* mode;
    const char* reply_prefix;
  };
  for (const Step& step : {Step{"chunk", "drain", "drained"}, Step{"radix", "flush", "flushed"},
                           Step{"chunk", "flush", "flushed"}, Step{"radix", "drain", "drained"}}) {
    SCOPED_TRACE(std::string(step.cache) + " " + step.mode);
    Batch batch(prompts, kTokens);
    ASSERT_TRUE(batch.WaitStarted());
    HttpReply r = PostJson(Port(), "/admin/cache/swap", {{"name", step.cache}, {"mode", step.mode}});
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(Message(r).rfind(step.reply_prefix, 0), 0u) << r.body;
    EXPECT_EQ(Cache(), step.cache);
    const auto& results = batch.Join();
    for (size_t i = 0; i < results.size(); ++i) {
      EXPECT_EQ(results[i].status, 200) << Describe(results[i]);
      EXPECT_TRUE(results[i].done && results[i].error.empty()) << Describe(results[i]);
      EXPECT_EQ(results[i].completion_tokens, kTokens) << Describe(results[i]);
      EXPECT_EQ(results[i].text, reference[i]) << Describe(results[i]);
    }
  }
  EXPECT_EQ(Cache(), "radix");
}

TEST(LaunchControl, CacheFlushRefusedWhileBusyAcceptedWhenIdle) {
  {
    Batch busy(SharedPrefixPrompts(), 400);
    ASSERT_TRUE(busy.WaitStarted());
    HttpReply refused = PostJson(Port(), "/admin/cache/flush", json::object());
    EXPECT_EQ(refused.status, 503) << refused.body;
    EXPECT_NE(Message(refused).find("cannot flush the cache while"), std::string::npos) << refused.body;
    EXPECT_NE(Message(refused).find("requests run"), std::string::npos) << refused.body;
    for (const auto& r : busy.Join()) EXPECT_EQ(r.completion_tokens, 400) << Describe(r);
  }
  // Idle once every request has finished (a failure guard; the scheduler reports them done).
  ASSERT_TRUE(WaitFor([] { return SchedulerInfo()["stats"].value("num_running_reqs", -1) == 0; },
                      std::chrono::seconds(30)));
  HttpReply ok = PostJson(Port(), "/admin/cache/flush", json::object());
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(Message(ok), "cache flushed") << ok.body;
  EXPECT_EQ(SchedulerInfo()["stats"].value("kv_evictable", -1), 0) << SchedulerInfo().dump();
  CompletionResult after = Complete(Port(), "Once upon a time", 8);
  EXPECT_EQ(after.status, 200) << Describe(after);
}

}  // namespace
}  // namespace radixserve::launch_test
