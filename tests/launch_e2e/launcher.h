// Launcher: runs `radixserve launch FILE ARGS...` as a child of the test, the way a user would,
// for acceptance tests of the launcher, runtime control and fault handling.
//
// Start() waits (up to roudi_wait) until no other iceoryx RouDi runs on the machine (one per
// machine), spawns the launcher in a process group of its own with stdout and stderr in one log
// file, and waits for its "radixserve is ready" line. The test process becomes a child
// subreaper, so whatever the launcher leaves behind when it dies is re-parented to the test:
// Leftovers() finds every remaining descendant, and Kill() (also run by the destructor) kills
// them all and removes what a killed RouDi leaves in /dev/shm. Not thread-safe: use it from the
// test's main thread (Output() may be read from any thread).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/util/status.h"

namespace radixserve::launch_test {

// The repository's launch/ folder, the build's lib/ and test_plugins/ folders.
std::string LaunchDir();
std::string LibDir();
std::string TestPluginDir();

struct LauncherOptions {
  std::string file;                       // launch file
  std::vector<std::string> args;          // name:=value
  std::vector<std::string> flags;         // launcher flags, e.g. --stop-timeout 10
  std::chrono::seconds roudi_wait{60};    // how long another RouDi may keep the machine
  std::chrono::seconds ready_timeout{90}; // failure guard for the ready line
  bool wait_for_other_roudi = true;       // false: a test started a RouDi on purpose, or the
                                          // launcher runs on a host of its own (`wrapper`)
  // Runs the launcher through this command (its argv follows), e.g. into a network namespace.
  std::vector<std::string> wrapper;
};

// Options for launching `file` with `args` (everything else default).
LauncherOptions LaunchOf(std::string file, std::vector<std::string> args);

class Launcher {
 public:
  Launcher();
  ~Launcher();
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  // Spawns the launcher and waits for the ready line. Fails (with the log) when it exits first.
  Status Start(const LauncherOptions& options);
  // Spawns the launcher without waiting for readiness (start-up failure tests).
  Status Spawn(const LauncherOptions& options);
  // Waits for the ready line (or the launcher's exit, an error).
  Status WaitReady(std::chrono::seconds timeout);

  // Sends `sig` to the launcher process only.
  void Signal(int sig);
  // Waits up to `timeout` for the launcher to exit; its wait status, or nullopt if it still runs.
  std::optional<int> WaitExit(std::chrono::seconds timeout);
  bool Exited() const { return exited_; }

  // Everything the launcher wrote so far (stdout and stderr).
  std::string Output() const;
  const std::string& log_path() const { return log_; }
  // A private temporary folder, removed with the Launcher (generated launch files).
  const std::string& dir() const { return dir_; }
  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // pid of the launched process running `component` ("worker", ..., or "container"), -1 if none.
  pid_t ProcessPid(const std::string& component) const;
  // pid of the iox-roudi the launcher started, -1 if none.
  pid_t RouDiPid() const;
  // How many pipeline processes (`radixserve node` / `container` children) the launcher runs.
  int ProcessCount() const;

  // A description of every process still running below the test (besides `except`) and of
  // iceoryx's shared memory left in /dev/shm; empty when nothing remains. Reaps exited children.
  std::string Leftovers(const std::vector<pid_t>& except = {});
  // SIGKILL to the launcher and everything below it, reaped; removes RouDi's leftovers. A wrapped
  // launcher (a host of its own) loses its own process tree only.
  void Kill();

 private:
  std::string dir_;
  std::string log_;
  pid_t pid_ = -1;
  bool exited_ = false;
  bool wrapped_ = false;  // started through LauncherOptions::wrapper
  int exit_status_ = 0;
  int port_ = 0;
};

// Descendants of this process (not zombies), deepest last.
std::vector<pid_t> Descendants(pid_t root = 0);  // 0: the test process
// argv of a process ("" entries when unreadable).
std::vector<std::string> CmdLine(pid_t pid);
// Reaps exited children of this process other than `keep` (re-parented orphans).
void ReapOrphans(pid_t keep);
// The JSON printed by `radixserve ctl --url URL WORDS...` (stdout), its exit code in *rc.
std::string RunCtl(const std::string& url, const std::string& words, int* rc);

}  // namespace radixserve::launch_test
