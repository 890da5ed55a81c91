// Supervisor with harmless children (sh, sleep): output prefixes, respawn, required processes,
// ordered shutdown with SIGKILL fallback, readiness waiting and start failures.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "launch/launch_plan.h"
#include "launch/supervisor.h"

namespace radixserve::launch {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Collects output lines and events from the supervisor's threads.
struct Log {
  std::mutex mu;
  std::vector<std::string> out, err, events;
  SupervisorOptions Options() {
    SupervisorOptions o;
    o.output = [this](const std::string& line, bool is_stderr) {
      std::lock_guard<std::mutex> l(mu);
      (is_stderr ? err : out).push_back(line);
    };
    o.events = [this](const std::string& line) {
      std::lock_guard<std::mutex> l(mu);
      events.push_back(line);
    };
    o.poll_interval = 5ms;
    return o;
  }
  bool Has(const std::vector<std::string>& v, const std::string& text) {
    std::lock_guard<std::mutex> l(mu);
    for (const auto& s : v)
      if (s.find(text) != std::string::npos) return true;
    return false;
  }
};

SupervisedProcess Sh(const std::string& name, const std::string& script) {
  return SupervisedProcess{name, {"sh", "-c", script}, false, 0.0, false};
}

bool Alive(pid_t pid) { return pid > 0 && ::kill(pid, 0) == 0; }

// Polls `cond` for up to 20 s (a generous bound for a loaded CI machine, not a timing assertion).
template <typename F>
bool Eventually(F cond) {
  for (int i = 0; i < 4000; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return cond();
}

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/radixserve-supervisor-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string dir_;
};

TEST_F(SupervisorTest, PrefixesEachLineAndEndsWhenEveryProcessExited) {
  Log log;
  Supervisor sup(log.Options());
  ASSERT_TRUE(sup.StartInOrder({Sh("alpha", "echo hello; echo oops >&2; printf 'no newline'"),
                                Sh("beta", "echo one; echo two")},
                               nullptr, 1s)
                  .ok());
  EXPECT_TRUE(sup.Wait().ok());
  EXPECT_TRUE(log.Has(log.out, "[alpha] hello"));
  EXPECT_TRUE(log.Has(log.out, "[alpha] no newline"));
  EXPECT_TRUE(log.Has(log.err, "[alpha] oops"));
  EXPECT_FALSE(log.Has(log.out, "[alpha] oops"));
  EXPECT_TRUE(log.Has(log.out, "[beta] one"));
  EXPECT_TRUE(log.Has(log.out, "[beta] two"));
  EXPECT_TRUE(log.Has(log.events, "beta exited with code 0"));
}

TEST_F(SupervisorTest, RespawnsAProcessThatDies) {
  Log log;
  Supervisor sup(log.Options());
  SupervisedProcess p = Sh("flaky", "echo run; exit 3");
  p.respawn = true;
  p.respawn_delay = 0.01;
  SupervisedProcess keep{"keeper", {"sleep", "30"}, false, 0.0, false};
  ASSERT_TRUE(sup.StartInOrder({keep, p}, nullptr, 1s).ok());
  EXPECT_TRUE(Eventually([&] { return sup.restarts("flaky") >= 2; }));
  EXPECT_TRUE(log.Has(log.events, "flaky exited with code 3, restarting in"));
  EXPECT_TRUE(sup.running("keeper"));
  sup.Stop();
  EXPECT_TRUE(sup.Wait().ok());
  EXPECT_FALSE(sup.running("keeper"));
}

TEST_F(SupervisorTest, RequiredProcessDeathStopsEverything) {
  Log log;
  Supervisor sup(log.Options());
  SupervisedProcess sleeper{"sleeper", {"sleep", "30"}, true, 0.0, false};  // respawn set: stopped anyway
  SupervisedProcess crasher = Sh("crasher", "while [ ! -e " + dir_ + "/go ]; do sleep 0.01; done; exit 3");
  crasher.required = true;
  ASSERT_TRUE(sup.StartInOrder({sleeper, crasher}, nullptr, 1s).ok());
  pid_t sleeper_pid = sup.pid("sleeper");
  ASSERT_TRUE(Alive(sleeper_pid));
  std::ofstream(dir_ + "/go") << "x";
  Status s = sup.Wait();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("required process 'crasher' exited with code 3"), std::string::npos) << s.message();
  EXPECT_FALSE(Alive(sleeper_pid));
  EXPECT_EQ(sup.restarts("sleeper"), 0);
}

TEST_F(SupervisorTest, StopsInReverseStartOrder) {
  Log log;
  Supervisor sup(log.Options());
  auto p = [&](const std::string& name) {
    return Sh(name, "trap 'echo " + name + " >> " + dir_ + "/order; exit 0' TERM; touch " + dir_ + "/" + name +
                        "; while :; do sleep 0.01; done");
  };
  auto ready = [&](const std::string& name) { return fs::exists(dir_ + "/" + name); };
  ASSERT_TRUE(sup.StartInOrder({p("a"), p("b"), p("c")}, ready, 20s).ok());
  sup.Stop();
  EXPECT_EQ(Read("order"), "c\nb\na\n");
  EXPECT_TRUE(sup.Wait().ok());
}

TEST_F(SupervisorTest, KillsAProcessThatIgnoresSigterm) {
  Log log;
  SupervisorOptions o = log.Options();
  o.stop_timeout = 100ms;
  Supervisor sup(o);
  std::string marker = dir_ + "/stubborn";
  ASSERT_TRUE(sup.StartInOrder({Sh("stubborn", "trap '' TERM; touch " + marker + "; while :; do sleep 0.01; done")},
                               [&](const std::string&) { return fs::exists(marker); }, 20s)
                  .ok());
  pid_t pid = sup.pid("stubborn");
  sup.Stop();
  EXPECT_FALSE(Alive(pid));
  EXPECT_TRUE(log.Has(log.events, "stubborn did not stop within 100 ms, killing it"));
  EXPECT_TRUE(log.Has(log.events, "stopped stubborn (was killed by signal 9"));
}

TEST_F(SupervisorTest, ChildrenGetSigtermEvenWhenTheLauncherBlocksIt) {
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &set, &old), 0);
  Log log;
  {
    Supervisor sup(log.Options());
    ASSERT_TRUE(sup.StartInOrder({SupervisedProcess{"sleeper", {"sleep", "30"}, false, 0.0, false}}, nullptr, 1s).ok());
    sup.Stop();
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  EXPECT_TRUE(log.Has(log.events, "stopped sleeper (was killed by signal 15"));
  EXPECT_FALSE(log.Has(log.events, "did not stop"));
}

TEST_F(SupervisorTest, WaitsForReadinessBeforeStartingTheNext) {
  Log log;
  Supervisor sup(log.Options());
  std::string flag = dir_ + "/first-ready";
  int asked = 0;
  auto ready = [&](const std::string& name) {
    if (name == "first") ++asked;
    return name != "first" || fs::exists(flag);
  };
  ASSERT_TRUE(sup.StartInOrder({Sh("first", "sleep 0.1; touch " + flag + "; sleep 30"),
                                Sh("second", "if [ -e " + flag + " ]; then echo saw-ready; fi; sleep 30")},
                               ready, 20s)
                  .ok());
  EXPECT_GE(asked, 1);
  EXPECT_TRUE(Eventually([&] { return log.Has(log.out, "[second] saw-ready"); }));
  sup.Stop();
}

TEST_F(SupervisorTest, StartFailuresStopWhatStarted) {
  {
    Log log;
    Supervisor sup(log.Options());
    Status s = sup.StartInOrder({SupervisedProcess{"ok", {"sleep", "30"}, false, 0.0, false},
                                 Sh("never", "sleep 30")},
                                [](const std::string& name) { return name == "ok"; }, 100ms);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("'never' was not ready within 100 ms"), std::string::npos) << s.message();
    EXPECT_FALSE(sup.running("ok"));
    EXPECT_FALSE(sup.running("never"));
    EXPECT_FALSE(sup.Wait().ok());
  }
  {
    Log log;
    Supervisor sup(log.Options());
    Status s = sup.StartInOrder({Sh("quitter", "exit 1")}, [](const std::string&) { return false; }, 20s);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("'quitter' exited before it was ready"), std::string::npos) << s.message();
  }
  {
    Log log;
    Supervisor sup(log.Options());
    Status s = sup.StartInOrder({SupervisedProcess{"ok", {"sleep", "30"}, false, 0.0, false},
                                 SupervisedProcess{"ghost", {"/nonexistent/radixserve"}, false, 0.0, false}},
                                nullptr, 1s);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("cannot start 'ghost'"), std::string::npos) << s.message();
    EXPECT_FALSE(sup.running("ok"));
  }
}

TEST_F(SupervisorTest, RunsAPlansProcesses) {
  ProcessPlan plan;
  plan.name = "edge/echo";
  plan.argv = {"sh", "-c", "echo planned"};
  plan.respawn = true;
  plan.respawn_delay = 2.5;
  plan.required = true;
  SupervisedProcess p = FromPlan(plan);
  EXPECT_EQ(p.name, "edge/echo");
  EXPECT_EQ(p.argv, plan.argv);
  EXPECT_TRUE(p.respawn);
  EXPECT_DOUBLE_EQ(p.respawn_delay, 2.5);
  EXPECT_TRUE(p.required);
  Log log;
  Supervisor sup(log.Options());
  p.required = false;
  p.respawn = false;
  ASSERT_TRUE(sup.StartInOrder({p}, nullptr, 1s).ok());
  EXPECT_TRUE(sup.Wait().ok());
  EXPECT_TRUE(log.Has(log.out, "[edge/echo] planned"));
}

}  // namespace
}  // namespace radixserve::launch
