// Data parallelism on the real pipeline: launch/dp2.yaml as shipped (two scheduler groups, each a
// container with its own prefix cache, worker and detokenizer, behind one api node that routes).
// Both groups give llama.cpp's greedy ids; control calls reach both and gather both answers; the
// routing policy changes while serving; cache-aware routing keeps a shared prefix on the group
// that caches it (the router learns that from the group's own cache events); a group that stops
// or is killed mid-run fails only its own requests, none hangs, and serves again once respawned.
//
// One launch for the whole program, started by a gtest Environment; the tests run in order.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <map>
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

class DpEnvironment : public LaunchEnvironment {
 protected:
  LauncherOptions Options() override {
    return LaunchOf(LaunchDir() + "/dp2.yaml", {"model:=" + pipeline_test::Stories260K(), "routing:=round-robin",
                                                "port:=" + std::to_string(pipeline_test::PickFreePort())});
  }
};

DpEnvironment* const g_env = static_cast<DpEnvironment*>(::testing::AddGlobalTestEnvironment(new DpEnvironment));

int Port() { return g_env->launcher().port(); }
const std::vector<std::string> kGroups = {"dp0", "dp1"};


// The router's counters of the group (from /get_server_info).
json RouterGroup(const std::string& group) {
  HttpReply r = Get(Port(), "/get_server_info");
  if (r.status != 200 || !r.json.contains("router")) return json::object();
  return r.json["router"]["groups"].value(group, json::object());
}
uint64_t Routed(const std::string& group) { return RouterGroup(group).value("routed", uint64_t(0)); }

// The group that served one request: the one whose routed counter moved.
std::string ServedBy(const std::function<void()>& send) {
  std::map<std::string, uint64_t> before;
  for (const auto& g : kGroups) before[g] = Routed(g);
  send();
  std::string served;
  for (const auto& g : kGroups)
    if (Routed(g) != before[g]) served += served.empty() ? g : "," + g;
  return served;
}

json Admin(const std::string& path, const json& body = nullptr) {
  HttpReply r = body.is_null() ? Get(Port(), path) : PostJson(Port(), path, body);
  EXPECT_EQ(r.status, 200) << path << ": " << r.body;
  return r.json;
}

pid_t GroupPid(const std::string& group) {
  json nodes = Admin("/admin/nodes");
  return nodes["nodes"].value(group + "/scheduler", json::object()).value("pid", 0);
}

bool GroupReady(const std::string& group) {
  json n = Admin("/admin/nodes")["nodes"];
  for (const char* node : {"scheduler", "worker", "detokenizer"})
    if (!n.value(group + "/" + node, json::object()).value("ready", false)) return false;
  return true;
}

// Every group's scheduler reports no request running (a failure guard: a response can reach the
// client an iteration before its scheduler lets the request go, and a flush is refused while any runs).
bool WaitIdle() {
  return WaitFor(
      [] {
        json info = Get(Port(), "/get_server_info").json;
        for (const auto& g : kGroups)
          if (!info.contains("groups") || info["groups"][g]["scheduler"]["stats"].value("num_running_reqs", -1) != 0) return false;
        return true;
      },
      std::chrono::seconds(30));
}

// Flushes both caches (once idle) and waits until the router has heard of it from both.
bool FlushBoth() {
  if (!WaitIdle()) return false;
  if (!Admin("/admin/cache/flush", json::object()).value("success", false)) return false;
  return WaitFor([] { return RouterGroup("dp0").value("cached_tokens", -1) == 0 &&
                             RouterGroup("dp1").value("cached_tokens", -1) == 0; },
                 std::chrono::seconds(10));
}

TEST(DataParallel, BothGroupsGiveLlamaCppsGreedyIdsAndShareTheLoadInTurn) {
  const auto golden = GoldenCases();
  ASSERT_EQ(golden.size(), 5u);
  ASSERT_TRUE(WaitFor([] { return GroupReady("dp0") && GroupReady("dp1"); }, std::chrono::seconds(30)));
  const uint64_t before0 = Routed("dp0"), before1 = Routed("dp1");
  for (int round = 0; round < 2; ++round)
    for (const auto& g : golden) EXPECT_EQ(GenerateIds(Port(), g.prompt_ids, 32), g.completion_ids);
  // Round robin over two healthy groups: five each.
  EXPECT_EQ(Routed("dp0") - before0, 5u);
  EXPECT_EQ(Routed("dp1") - before1, 5u);
}

TEST(DataParallel, ControlCallsReachEveryGroupAndGatherTheirAnswers) {
  // Reads: one answer per group, by namespace.
  json info = Get(Port(), "/get_server_info").json;
  for (const auto& g : kGroups) {
    ASSERT_TRUE(info["groups"].contains(g)) << info.dump();
    EXPECT_EQ(info["groups"][g]["scheduler"]["policy"], "lpm") << g;
    EXPECT_EQ(info["groups"][g]["scheduler"]["cache"], "radix") << g;
  }
  json stats = Admin("/admin/cache/stats");
  for (const auto& g : kGroups) EXPECT_TRUE(stats["result"]["groups"][g].contains("num_running_reqs")) << stats.dump();
  // Changes: every group applies them and answers.
  json swapped = Admin("/admin/policy/swap", {{"name", "fcfs"}});
  EXPECT_EQ(swapped["success"], true);
  json policy = Admin("/admin/policy");
  for (const auto& g : kGroups) EXPECT_EQ(policy["groups"][g]["policy"], "fcfs") << policy.dump();
  EXPECT_EQ(Admin("/admin/policy/swap", {{"name", "lpm"}})["success"], true);
  // A flush empties both caches, and the router learns it from their events.
  ASSERT_TRUE(WaitIdle());
  json flushed = Admin("/admin/cache/flush", json::object());
  EXPECT_EQ(flushed["message"], "cache flushed | cache flushed") << flushed.dump();
  for (const auto& g : kGroups)
    EXPECT_TRUE(WaitFor([&] { return RouterGroup(g).value("cached_tokens", int64_t(-1)) == 0; },
                        std::chrono::seconds(10)))
        << g << ": " << RouterGroup(g).dump();
  // A bad change is refused by the schedulers, with their message.
  HttpReply bad = PostJson(Port(), "/admin/policy/swap", {{"name", "no-such-policy"}});
  EXPECT_EQ(bad.status, 400) << bad.body;
}

TEST(DataParallel, CacheAwareRoutingKeepsEachSharedPrefixOnTheGroupThatCachesIt) {
  ASSERT_TRUE(FlushBoth());
  // The policy changes while serving; an unknown one is refused and the old one stays.
  HttpReply unknown = PostJson(Port(), "/admin/params/api", {{"name", "routing_policy"}, {"value", "nonsense"}});
  EXPECT_EQ(unknown.status, 400) << unknown.body;
  EXPECT_NE(unknown.body.find("no routing plugin 'nonsense'"), std::string::npos) << unknown.body;
  HttpReply bad = PostJson(Port(), "/admin/params/api", {{"name", "routing_params"}, {"value", "cache_threshold=2"}});
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(Get(Port(), "/get_server_info").json["router"]["policy"], "round-robin");
  ASSERT_EQ(Admin("/admin/params/api", {{"name", "routing_policy"}, {"value", "cache-aware"}})["success"], true);
  ASSERT_EQ(Get(Port(), "/get_server_info").json["router"]["policy"], "cache-aware");

  const std::string a = "Once upon a time, there was a little girl named Lily. She loved to play outside in the sun. ";
  const std::string b = "The big brown dog ran to the park with his red ball, and he was very happy that day. ";
  std::map<std::string, std::set<std::string>> groups_of;  // prefix -> groups that served it
  for (const std::string& tail : {"One day", "She saw", "Her mom", "Then"}) {
    for (const auto& named : {std::pair<std::string, std::string>{"a", a}, {"b", b}}) {
      const std::string prompt = named.second + tail;  // (a lambda may not capture a structured binding)
      CompletionResult r;
      std::string g = ServedBy([&] { r = Complete(Port(), prompt, 4); });
      EXPECT_EQ(r.status, 200) << Describe(r);
      groups_of[named.first].insert(g);
    }
  }
  // Each prefix stayed on one group, and the two prefixes went to different groups (the second
  // one to the group with room: nothing cached it).
  ASSERT_EQ(groups_of["a"].size(), 1u);
  ASSERT_EQ(groups_of["b"].size(), 1u);
  EXPECT_NE(*groups_of["a"].begin(), *groups_of["b"].begin());
  json stats = Get(Port(), "/get_server_info").json["router"]["policy_stats"];
  EXPECT_GE(stats.value("cache_routed", 0), 6) << stats.dump();
  // The schedulers agree: their caches served the shared prefixes.
  for (const auto& g : kGroups) {
    json s = Admin("/admin/cache/stats")["result"]["groups"][g];
    EXPECT_GT(s.value("cache_hit_rate", 0.0), 0.5) << g << ": " << s.dump();
  }
}

TEST(DataParallel, AStoppedThenKilledGroupFailsOnlyItsOwnRequestsAndServesAgainWhenRespawned) {
  ASSERT_EQ(Admin("/admin/params/api", {{"name", "routing_policy"}, {"value", "round-robin"}})["success"], true);
  const pid_t victim = GroupPid("dp1");
  ASSERT_GT(victim, 0);
  // Frozen mid-run: requests routed to it cannot progress.
  ASSERT_EQ(::kill(victim, SIGSTOP), 0);
  std::vector<CompletionResult> results(4);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < results.size(); ++i)
    clients.emplace_back([&, i] { results[i] = StreamComplete(Port(), "Once upon a time", 24); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  for (auto& c : clients) c.join();  // every request ends: none hangs
  int served = 0, failed = 0;
  for (const auto& r : results) {
    if (r.status == 200 && r.error.empty() && r.completion_tokens == 24) {
      ++served;
    } else {
      ++failed;
      EXPECT_NE(r.error.find("dp1/"), std::string::npos) << "a failure names the lost group: " << Describe(r);
    }
  }
  EXPECT_EQ(served + failed, 4);
  EXPECT_GE(served, 1) << "dp0 kept serving";
  EXPECT_GE(failed, 1) << "the requests routed to the frozen dp1 end with an error";

  // The launcher respawns the group; the router forgot its cache and sends it requests again.
  ASSERT_TRUE(WaitFor([&] { return GroupPid("dp1") > 0 && GroupPid("dp1") != victim && GroupReady("dp1"); },
                      std::chrono::seconds(60)))
      << Admin("/admin/nodes").dump();
  EXPECT_EQ(RouterGroup("dp1").value("cached_tokens", -1), 0);
  const uint64_t before1 = Routed("dp1");
  const auto golden = GoldenCases();
  for (const auto& g : golden) EXPECT_EQ(GenerateIds(Port(), g.prompt_ids, 32), g.completion_ids);
  EXPECT_GE(Routed("dp1") - before1, 2u);
}

}  // namespace
}  // namespace radixserve::launch_test
