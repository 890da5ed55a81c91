// Past one machine: two hosts made on this machine, each a network namespace with a private
// /tmp, /dev/shm and process tree (so a RouDi of its own), joined only by a veth pair the test
// creates and removes. Host A runs launch/two_host_a.yaml (the api node, group dp0 and a DDS
// bridge), host B runs launch/two_host_b.yaml (group dp1 and its bridge); the bridges carry dp1's
// topics over Cyclone DDS on the veth link. Requests sent to host A and routed to dp1 are served
// on host B with llama.cpp's greedy ids; control calls and cache events cross too; and when host B
// is killed mid-run, its requests end with an error (none hangs) while host A serves on; booted
// again, it rejoins.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "tests/launch_e2e/launcher.h"
#include "tests/launch_e2e/requests.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::launch_test {
namespace {

using nlohmann::json;
using pipeline_test::Get;
using pipeline_test::WaitFor;
namespace fs = std::filesystem;

// The two namespaces and the link; names carry the test's pid so that runs never meet.
struct Link {
  std::string a, b, veth_a, veth_b;
  const std::string addr_a = "10.213.0.1", addr_b = "10.213.0.2";
  Link() {
    const std::string id = std::to_string(::getpid() % 100000);
    a = "rs2h_a" + id;
    b = "rs2h_b" + id;
    veth_a = "rsva" + id;
    veth_b = "rsvb" + id;
  }
};

int Sh(const std::string& cmd) {
  const int rc = std::system((cmd + " 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// The full path of a program (the launcher is spawned without a shell), also from the sbin folders.
std::string Which(const std::string& program) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  std::stringstream ss(path + ":/usr/sbin:/sbin:/usr/bin:/bin");
  for (std::string d; std::getline(ss, d, ':');)
    if (!d.empty() && ::access((d + "/" + program).c_str(), X_OK) == 0) return d + "/" + program;
  return program;
}

// `radixserve launch` as a host of its own: in the namespace `ns`, with fresh /tmp and /dev/shm
// (iceoryx's sockets, locks and shared memory) and its own process tree, whose init it is: when
// it is killed, the kernel kills everything it started. The build, the sources and the shared
// models stay where they are, also when they live under /tmp (a fresh clone may): the old /tmp
// is parked on /mnt while those folders are bound back into the new one.
std::vector<std::string> HostWrapper(const std::string& ns) {
  std::string script = "mount --bind /tmp /mnt && mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs /dev/shm";
  for (std::string keep : {fs::path(pipeline_test::RadixserveBinary()).parent_path().parent_path().string(),
                           fs::path(LaunchDir()).parent_path().string(),
                           std::string(RADIXSERVE_SHARED_DIR)}) {
    keep = fs::absolute(keep).lexically_normal().string();
    if (keep.rfind("/tmp/", 0) != 0) continue;
    script += " && mkdir -p '" + keep + "' && mount --bind '/mnt" + keep.substr(4) + "' '" + keep + "'";
  }
  script += " && umount /mnt && exec \"$@\"";
  return {Which("ip"), "netns", "exec", ns, "unshare", "--mount", "--pid", "--fork", "--mount-proc", "--propagation", "private",
          "sh", "-c", script, "host"};
}

class TwoHosts : public ::testing::Environment {
 public:
  void SetUp() override {
    const Link& l = link_;
    ASSERT_TRUE(fs::is_directory("/mnt")) << "a host's wrapper parks the old /tmp on /mnt, which is missing";
    ASSERT_EQ(Sh("ip netns add " + l.a + " && ip netns add " + l.b + " && ip link add " + l.veth_a +
                 " type veth peer name " + l.veth_b + " && ip link set " + l.veth_a + " netns " + l.a +
                 " && ip link set " + l.veth_b + " netns " + l.b + " && ip -n " + l.a + " addr add " + l.addr_a +
                 "/24 dev " + l.veth_a + " && ip -n " + l.b + " addr add " + l.addr_b + "/24 dev " + l.veth_b +
                 " && ip -n " + l.a + " link set lo up && ip -n " + l.b + " link set lo up && ip -n " + l.a +
                 " link set " + l.veth_a + " up && ip -n " + l.b + " link set " + l.veth_b + " up"),
              0)
        << "could not make the two network namespaces (this test needs root)";
    made_ = true;
    const std::string model = "model:=" + pipeline_test::Stories260K();
    host_b_options_ = LaunchOf(LaunchDir() + "/two_host_b.yaml", {model, "interface:=" + l.veth_b, "peer:=" + l.addr_a});
    host_b_options_.wrapper = HostWrapper(l.b);
    host_b_options_.wait_for_other_roudi = false;  // its RouDi is its host's
    Status sb = host_b_.Start(host_b_options_);
    ASSERT_TRUE(sb.ok()) << sb.ToString();
    LauncherOptions a = LaunchOf(LaunchDir() + "/two_host_a.yaml",
                                 {model, "interface:=" + l.veth_a, "peer:=" + l.addr_b, "routing:=round-robin",
                                  "port:=" + std::to_string(30000 + ::getpid() % 20000)});
    a.wrapper = HostWrapper(l.a);
    a.wait_for_other_roudi = false;
    Status sa = host_a_.Start(a);
    ASSERT_TRUE(sa.ok()) << sa.ToString();
    // The test's client talks to host A from inside A's namespace (threads started later follow).
    const int fd = ::open(("/run/netns/" + l.a).c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::setns(fd, CLONE_NEWNET), 0);
    ::close(fd);
  }
  void TearDown() override {
    host_a_.Kill();
    host_b_.Kill();
    if (made_) Sh("ip netns del " + link_.a + "; ip netns del " + link_.b);  // the veth pair goes with them
  }
  Launcher& host_a() { return host_a_; }
  Launcher& host_b() { return host_b_; }
  // Host B booted again after a kill: a fresh RouDi, fresh processes, the same launch file.
  Status RestartHostB() {
    host_b_.Kill();
    return host_b_.Start(host_b_options_);
  }

 private:
  Link link_;
  LauncherOptions host_b_options_;
  bool made_ = false;
  Launcher host_a_, host_b_;
};

TwoHosts* const g_env = static_cast<TwoHosts*>(::testing::AddGlobalTestEnvironment(new TwoHosts));

int Port() { return g_env->host_a().port(); }
json Info() { return Get(Port(), "/get_server_info").json; }
json RouterGroup(const std::string& g) {
  json info = Info();
  return info.contains("router") ? info["router"]["groups"].value(g, json::object()) : json::object();
}
// Host B's group as host A's router sees it: all three nodes ready, their status fresh (the api
// node counts a node silent for 3 s as gone).
bool RemoteGroupReady() {
  json n = Get(Port(), "/admin/nodes").json["nodes"];
  for (const char* name : {"dp1/scheduler", "dp1/worker", "dp1/detokenizer"})
    if (!n.contains(name) || !n[name].value("ready", false) || n[name].value("last_seen_s", 1e9) > 3.0) return false;
  return true;
}

TEST(TwoHosts, RequestsToHostARoutedToHostBGiveLlamaCppsGreedyIds) {
  ASSERT_TRUE(WaitFor(RemoteGroupReady, std::chrono::seconds(60))) << g_env->host_a().Output();
  const auto golden = GoldenCases();
  ASSERT_EQ(golden.size(), 5u);
  const uint64_t before = RouterGroup("dp1").value("routed", uint64_t(0));
  for (int round = 0; round < 2; ++round)  // round robin: every case once on each host
    for (const auto& g : golden) EXPECT_EQ(GenerateIds(Port(), g.prompt_ids, 32), g.completion_ids);
  EXPECT_GE(RouterGroup("dp1").value("routed", uint64_t(0)) - before, 5u) << Info().dump();
  // A control call fans out over the bridge and back: host B's scheduler reports what it finished.
  json dp1 = Info()["groups"]["dp1"]["scheduler"]["stats"];
  EXPECT_GE(dp1.value("finished", 0), 5) << Info().dump();
  // And the router's view of dp1's cache is kept by dp1's own events, carried from host B.
  EXPECT_TRUE(WaitFor([] { return RouterGroup("dp1").value("cached_tokens", 0) > 0; }, std::chrono::seconds(10)))
      << RouterGroup("dp1").dump();
}

TEST(TwoHosts, HostBKilledMidRunEndsItsRequestsAndHostAServesOn) {
  ASSERT_TRUE(WaitFor(RemoteGroupReady, std::chrono::seconds(60)));
  constexpr int kTokens = 500;  // of stories260K's 512-token context
  // Round robin: half of them run on host B, 4,000 tokens of work there, far more than the moments
  // between the first of them starting and the kill.
  std::vector<CompletionResult> results(16);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < results.size(); ++i)
    clients.emplace_back([&, i] { results[i] = StreamComplete(Port(), "Once upon a time", kTokens); });
  ASSERT_TRUE(WaitFor([] { return RouterGroup("dp1").value("in_flight", 0) > 0; }, std::chrono::seconds(10)));
  g_env->host_b().Kill();  // the whole host: its launcher, RouDi and every node
  const auto killed = std::chrono::steady_clock::now();
  for (auto& c : clients) c.join();  // every request ends, with its tokens or an error: none hangs
  const double ended_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  int failed = 0, finished = 0;
  for (const auto& r : results) {
    if (r.status == 200 && r.completion_tokens == kTokens && r.error.empty()) {
      ++finished;
    } else {
      ++failed;
      EXPECT_NE(r.error.find("dp1/"), std::string::npos) << Describe(r);  // says which group's node went silent
      if (failed == 1) std::printf("a request on host B ended with: %s\n", r.error.c_str());
    }
  }
  std::printf("host B killed: %d requests failed, %d finished on host A; all ended %.1f s after the kill\n", failed,
              finished, ended_s);
  EXPECT_GE(failed, 1);
  EXPECT_GE(finished, 1);
  // Host A serves every new request itself now.
  EXPECT_TRUE(WaitFor([] { return !RemoteGroupReady(); }, std::chrono::seconds(10)));
  for (const auto& g : GoldenCases()) EXPECT_EQ(GenerateIds(Port(), g.prompt_ids, 32), g.completion_ids);
  EXPECT_EQ(Get(Port(), "/health").status, 200);
}

TEST(TwoHosts, HostBBootedAgainRejoinsAndServesWithItsOwnCache) {
  if (RemoteGroupReady()) g_env->host_b().Kill();  // the test alone: start from a dead host B
  ASSERT_TRUE(WaitFor([] { return !RemoteGroupReady(); }, std::chrono::seconds(10)));
  Status s = g_env->RestartHostB();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(WaitFor(RemoteGroupReady, std::chrono::seconds(60))) << g_env->host_a().Output();
  const uint64_t before = RouterGroup("dp1").value("routed", uint64_t(0));
  for (int round = 0; round < 2; ++round)
    for (const auto& g : GoldenCases()) EXPECT_EQ(GenerateIds(Port(), g.prompt_ids, 32), g.completion_ids);
  EXPECT_GE(RouterGroup("dp1").value("routed", uint64_t(0)) - before, 5u) << Info().dump();
  // The router forgot what the old dp1 cached and learns the new one's cache from its events.
  EXPECT_TRUE(WaitFor([] { return RouterGroup("dp1").value("cached_tokens", 0) > 0; }, std::chrono::seconds(10)))
      << RouterGroup("dp1").dump();
}

}  // namespace
}  // namespace radixserve::launch_test
