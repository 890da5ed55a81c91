// Supervisor: runs a launch's processes and keeps them running.
//
// Start() / StartInOrder() spawn each process (posix_spawn of its argv, in a
// process group of its own, with the default signal mask and handlers) with
// stdout and stderr piped; every line it writes is passed on prefixed with
// the process name ("[worker] ..."). A process that exits is restarted after
// its respawn_delay when it has respawn set; when a required process exits,
// everything is stopped. Stop() sends SIGTERM to each process group in
// reverse start order, waits up to stop_timeout for it to exit, then sends
// SIGKILL. One monitor thread reaps children and does restarts and
// shutdowns; one reader thread per running process forwards its output.
// Thread-safe: Stop() may be called from any thread (e.g. a signal thread).
// The output and events callbacks run on the supervisor's threads (events with
// its lock held): they must not call back into the Supervisor.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/util/status.h"

namespace radixserve::launch {

struct ProcessPlan;

struct SupervisedProcess {
  std::string name;               // log prefix and the key of the readiness callback
  std::vector<std::string> argv;  // argv[0] is looked up on PATH when it has no '/'
  bool respawn = false;
  double respawn_delay = 0.0;     // seconds
  bool required = false;
};

SupervisedProcess FromPlan(const ProcessPlan& p);

struct SupervisorOptions {
  // Receives each output line, already prefixed; default: stdout / stderr of this process.
  std::function<void(const std::string& line, bool is_stderr)> output;
  // Receives the supervisor's own events ("[launch] worker exited with code 3, restarting in 1s").
  std::function<void(const std::string& line)> events;
  std::chrono::milliseconds stop_timeout{10000};  // per process, SIGTERM to SIGKILL
  std::chrono::milliseconds poll_interval{20};    // reaping and readiness polling
};

class Supervisor {
 public:
  using ReadyFn = std::function<bool(const std::string& name)>;

  explicit Supervisor(SupervisorOptions options = {});
  ~Supervisor();  // Stop()
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Starts the processes one by one in the given order. After each start, waits until
  // ready(name) is true (no wait when ready is null), at most `timeout` per process. When a
  // process cannot be spawned, exits before it is ready, or is not ready in time, everything
  // started so far is stopped and the error says which process and why. Call once.
  Status StartInOrder(const std::vector<SupervisedProcess>& processes, const ReadyFn& ready,
                      std::chrono::milliseconds timeout);

  // Blocks until the supervisor has stopped: OK after Stop() or when every process exited for
  // good; an error naming the process when a required process died (everything is then stopped).
  Status Wait();

  // Stops everything (see the header comment); idempotent; returns when all processes are gone.
  void Stop();

  // Introspection (tests, status lines). -1 when not running.
  pid_t pid(const std::string& name) const;
  int restarts(const std::string& name) const;
  bool running(const std::string& name) const;

 private:
  struct Child;
  struct Reader;

  Status Spawn(Child& c);                 // mu_ held
  void MonitorLoop();
  void ReapLocked();  // mu_ held
  void RestartDueLocked();  // mu_ held
  void ShutdownLocked(std::unique_lock<std::mutex>& lock);
  void JoinFinishedReadersLocked();
  Status Fail(Status s);
  void Event(const std::string& line);
  Child* FindLocked(const std::string& name) const;

  SupervisorOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Child>> children_;  // start order
  std::vector<std::unique_ptr<Reader>> readers_;  // may outlive their process (a grandchild holds the pipe)
  bool started_ = false;  // StartInOrder finished
  std::thread monitor_;
  bool stop_requested_ = false;
  bool stopped_ = false;  // shutdown finished
  Status result_;
  std::mutex output_mu_;  // one line at a time on the output
};

}  // namespace radixserve::launch
