// `radixserve launch FILE [name:=value ...]`: starts a pipeline from a launch file.
//
// Plans and validates the launch, starts an iceoryx RouDi sized for it (unless one is running),
// starts the processes in dependency order waiting for each to report ready on the node_status
// topic, prints the URL once the server takes requests, and supervises: respawns, stops everything
// when a required process or RouDi dies. SIGINT/SIGTERM stop it in order (the api node drains
// running requests first); a second signal kills everything at once.
#include <CLI/CLI.hpp>
#include <glog/logging.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <optional>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "core/builtin_model/builtin_model.h"
#include "launch/kv_budget.h"
#include "launch/launch_plan.h"
#include "launch/roudi_sizing.h"
#include "launch/supervisor.h"
#include "nodes/node.h"
#include "tools/command.h"
#include "tools/signals.h"
#include "transport/channel.h"
#include "transport/messages.h"
#include "transport/roudi_process.h"
#include "transport/topic.h"

namespace radixserve::tools {
namespace {

struct LaunchCliOptions {
  std::string file;
  std::vector<std::string> args;
  int ready_timeout_s = 300;
  int stop_timeout_s = 45;  // above the api node's drain timeout (30 s)
};

int Fail(const std::string& msg) {
  std::fprintf(stderr, "radixserve launch: %s\n", msg.c_str());
  return 1;
}

// Watches the node_status topics and answers "is every node of process X ready". The iceoryx
// side is `radixserve watch-status`, spawned as its own program reporting over a pipe: RouDi
// signals every registered process when it stops, and the launcher itself must not be one of
// them; spawning (not forking this threaded process) gives it a clean process to start in.
class ReadinessWatcher {
 public:
  ~ReadinessWatcher() { Stop(); }

  Status Start(const std::vector<std::string>& namespaces) {
    std::error_code ec;
    const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (ec) return Status::IOError("cannot find this program's path: " + ec.message());
    std::vector<std::string> args = {self, "watch-status"};
    for (const auto& ns : namespaces) {
      args.push_back("--namespace");
      args.push_back(ns);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return Status::IOError("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);  // dup2 clears CLOEXEC on the copy
    const int rc = ::posix_spawn(&pid_, self.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      pid_ = -1;
      return Status::IOError(std::string("cannot start the status watcher: ") + std::strerror(rc));
    }
    read_fd_ = fds[0];
    reader_ = std::thread([this] { ReadLoop(); });
    return Status::Ok();
  }
  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGUSR1);  // the watcher exits normally (deregistering from RouDi)
    int st = 0;
    // Deregistering waits on RouDi; never let a stuck answer hold the launcher.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (::waitpid(pid_, &st, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &st, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
    if (reader_.joinable()) reader_.join();
    ::close(read_fd_);
  }
  bool Ready(const std::vector<std::string>& nodes) {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& n : nodes) {
      auto it = state_.find(n);
      if (it == state_.end() || !it->second.first) return false;
    }
    return true;
  }
  std::string StateOf(const std::string& node) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = state_.find(node);
    return it == state_.end() ? "starting" : it->second.second;
  }

 private:
  void ReadLoop() {
    std::string buf;
    char chunk[4096];
    for (;;) {
      ssize_t n = ::read(read_fd_, chunk, sizeof(chunk));
      if (n <= 0) return;
      buf.append(chunk, static_cast<size_t>(n));
      for (size_t nl; (nl = buf.find('\n')) != std::string::npos; buf.erase(0, nl + 1)) {
        std::string line = buf.substr(0, nl);
        auto t1 = line.find('\t'), t2 = line.rfind('\t');
        if (t1 == std::string::npos || t2 == t1) continue;
        std::lock_guard<std::mutex> l(mu_);
        state_[line.substr(0, t1)] = {line.substr(t1 + 1, t2 - t1 - 1) == "1", line.substr(t2 + 1)};
      }
    }
  }

  pid_t pid_ = -1;
  int read_fd_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::map<std::string, std::pair<bool, std::string>> state_;  // node -> (ready, lifecycle state)
};

bool HasArg(const std::vector<std::string>& args, const std::string& name) {
  for (const auto& a : args)
    if (a.rfind(name + ":=", 0) == 0) return true;
  return false;
}

// Every node must know the largest chunk RouDi offers: append it as a parameter.
void AddMaxPayload(launch::ProcessPlan& p, uint32_t max_payload) {
  for (const auto& n : p.nodes) {
    p.argv.push_back("-p");
    std::string prefix = p.kind == launch::ProcessPlan::Kind::kContainer ? n.name + "." : "";
    p.argv.push_back(prefix + "max_payload:=" + std::to_string(max_payload));
  }
}

// The launcher's own arguments (never the launch file's): namespace:=, kv_memory:=, kv_tokens:=,
// max_running_requests:=.
struct ReservedArgs {
  std::string ns;
  std::optional<int64_t> kv_memory_mib, kv_tokens, max_running_requests;
};

Result<ReservedArgs> TakeReservedArgs(std::vector<std::string>* args) {
  ReservedArgs r;
  std::vector<std::string> rest;
  for (const auto& a : *args) {
    auto eq = a.find(":=");
    std::string key = eq == std::string::npos ? "" : a.substr(0, eq), value = eq == std::string::npos ? "" : a.substr(eq + 2);
    if (key == "namespace") {
      if (Status s = transport::ValidateTopic({value, "x"}); !s.ok() || value.empty() || value == "default")
        return Status::InvalidArgument("namespace:=" + value + ": " +
                                       (s.ok() ? "give a name other than '' and 'default'" : s.message()));
      r.ns = value;
    } else if (key == "kv_memory" || key == "kv_tokens" || key == "max_running_requests") {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(value.c_str(), &end, 10);
      const char* what = key == "kv_memory" ? "MiB of KV pool" : key == "kv_tokens" ? "KV slots" : "requests at once";
      if (value.empty() || errno != 0 || *end != '\0' || v <= 0)
        return Status::InvalidArgument(key + ":=" + value + " is not a positive integer (" + what + ")");
      (key == "kv_memory" ? r.kv_memory_mib : key == "kv_tokens" ? r.kv_tokens : r.max_running_requests) = v;
    } else {
      rest.push_back(a);
    }
  }
  *args = std::move(rest);
  return r;
}

// One launcher per namespace on a machine: iceoryx refuses a second runtime of the same name,
// and the nodes' runtime names come from their namespaces. The launcher holds an exclusive lock
// on /tmp/radixserve-launch-<ns>.lock for each namespace of its plan while it runs (the kernel
// drops it when the launcher dies), with its pid written inside for the message.
class NamespaceLocks {
 public:
  ~NamespaceLocks() {
    for (int fd : fds_) ::close(fd);
  }
  Status Take(const std::string& ns) {
    const std::string path = "/tmp/radixserve-launch-" + ns + ".lock";
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return Status::IOError("cannot open " + path + ": " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      char buf[32] = {0};
      ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
      ::close(fd);
      std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
      while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
      return Status::FailedPrecondition(
          "a radixserve pipeline is already running in namespace '" + ns + "'" +
          (pid.empty() ? std::string() : " (launcher pid " + pid + ")") +
          (transport::RouDiRunning() ? ", with the iceoryx RouDi this one would share" : std::string()) +
          "; launch this one with namespace:=<name> (and its own port:=), or stop that one first");
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0)
      LOG(WARNING) << "cannot write the launcher's pid into " << path;
    fds_.push_back(fd);
    return Status::Ok();
  }

 private:
  std::vector<int> fds_;
};

int RunLaunch(const LaunchCliOptions& o) {
  std::vector<std::string> args = o.args;
  auto reserved = TakeReservedArgs(&args);
  if (!reserved.ok()) return Fail(reserved.status().message());
  // The built-in default model when the launch takes a model and none was given.
  if (!HasArg(args, "model")) {
    auto path = builtin_model::EnsureDefaultModel();
    if (!path.ok()) return Fail(path.status().message());
    std::fprintf(stderr, "[launch] no model:= given: using the built-in default model %s (%s)\n",
                 builtin_model::kName, path->c_str());
    args.push_back("model:=" + *path);
  }
  launch::LaunchOptions lo;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  lo.plan.binary = ec ? "radixserve" : exe.string();
  lo.plan.root_namespace = reserved->ns;
  auto plan = launch::PlanLaunch(o.file, args, lo);
  if (!plan.ok()) return Fail(plan.status().message());
  for (const auto& p : plan->processes)
    if (Status s = transport::ValidateTopic({p.ns, "x"}); !s.ok())
      return Fail("namespace '" + p.ns + "' of process " + p.name + ": " + s.message());

  // Refused before anything starts when another launcher runs a namespace of this plan.
  NamespaceLocks ns_locks;
  {
    std::vector<std::string> seen;
    for (const auto& p : plan->processes) {
      if (std::find(seen.begin(), seen.end(), p.ns) != seen.end()) continue;
      seen.push_back(p.ns);
      if (Status s = ns_locks.Take(p.ns); !s.ok()) return Fail(s.message());
    }
  }

  if (reserved->max_running_requests) {
    if (Status s = launch::ApplyMaxRunningRequests(&*plan, *reserved->max_running_requests); !s.ok())
      return Fail(s.message());
  }
  // The KV pool: one number for the scheduler's max_total_tokens and every worker's kv_slots.
  auto kv = launch::ApplyKvBudget(&*plan, reserved->kv_memory_mib, reserved->kv_tokens);
  if (!kv.ok()) return Fail(kv.status().message());

  // RouDi: ours, sized for the plan, unless one is already running.
  transport::RouDiProcess roudi;
  launch::MessageBounds bounds;
  auto cfg = launch::RouDiConfigForPlan(*plan, &bounds);
  if (!cfg.ok()) return Fail(cfg.status().message());
  uint32_t max_payload = cfg->max_payload();
  std::fprintf(stderr, "[launch] %s\n",
               launch::DescribeKvBudget(*kv, double(cfg->total_bytes()) / (1 << 20)).c_str());
  if (transport::RouDiRunning()) {
    // Reuse it only when its largest chunk holds this pipeline's largest message.
    auto theirs = transport::RunningRouDiMaxPayload();
    if (!theirs.ok())
      return Fail("an iceoryx RouDi is already running and its memory pools cannot be checked (" +
                  theirs.status().message() + "); stop it or let radixserve start its own");
    if (*theirs < max_payload)
      return Fail("the running iceoryx RouDi is too small for this model: its largest chunk is " +
                  std::to_string(*theirs) + " bytes, the pipeline needs " + std::to_string(max_payload) + " (" +
                  bounds.ToString() + "); stop it so that radixserve starts one sized for the launch");
    std::fprintf(stderr, "[launch] using the iceoryx RouDi already running (largest chunk %u bytes)\n", *theirs);
    max_payload = *theirs;
  } else {
    std::string cfg_path = (std::filesystem::temp_directory_path() /
                            ("radixserve-roudi-" + std::to_string(getpid()) + ".toml")).string();
    Status s = roudi.Start(*cfg, cfg_path);
    if (!s.ok()) return Fail("cannot start RouDi: " + s.message());
    // RouDi's segments become resident as they are used (RouDiProcess::Start), or all at once
    // without the lazy-shm library: say which.
    std::string resident = std::to_string(roudi.shm_resident_bytes() >> 20) + " of " +
                           std::to_string(roudi.shm_reserved_bytes() >> 20) + " MiB of shared memory resident";
    if (!roudi.lazy_shm_status().ok()) resident += " (" + roudi.lazy_shm_status().message() + ")";
    std::fprintf(stderr, "[launch] RouDi started (largest message %u bytes, %.1f MiB of pools, %s)\n", max_payload,
                 double(cfg->total_bytes()) / (1 << 20), resident.c_str());
  }
  for (auto& p : plan->processes) AddMaxPayload(p, max_payload);

  std::atomic<bool> stopping{false};
  std::atomic<bool> roudi_stopping{false};  // RouDi signals its clients (us too) when it stops
  launch::Supervisor* sup_ptr = nullptr;
  transport::RouDiProcess* roudi_ptr = &roudi;
  InstallStopSignals(
      [&] {
        std::fprintf(stderr, "[launch] stopping: draining running requests (signal again to stop at once)\n");
        stopping.store(true);
        if (sup_ptr) sup_ptr->Stop();
      },
      [&] {
        if (roudi_stopping.load()) return;  // RouDi's own SIGTERM during our shutdown
        std::fprintf(stderr, "[launch] second signal: killing every process now\n");
        if (sup_ptr)
          for (const auto& p : plan->processes)
            if (pid_t pid = sup_ptr->pid(p.name); pid > 0) ::kill(-pid, SIGKILL);
        if (roudi_ptr->pid() > 0) ::kill(roudi_ptr->pid(), SIGKILL);
        transport::RemoveRouDiLeftovers();
        _exit(130);
      });

  std::vector<std::string> namespaces;
  for (const auto& p : plan->processes)
    if (std::find(namespaces.begin(), namespaces.end(), p.ns) == namespaces.end()) namespaces.push_back(p.ns);
  ReadinessWatcher watcher;
  if (Status s = watcher.Start(namespaces); !s.ok()) return Fail(s.message());

  std::map<std::string, std::vector<std::string>> nodes_of;
  std::vector<launch::SupervisedProcess> procs;
  for (const auto& p : plan->processes) {
    for (const auto& n : p.nodes) nodes_of[p.name].push_back(n.name);
    procs.push_back(launch::FromPlan(p));
  }
  launch::SupervisorOptions so;
  so.stop_timeout = std::chrono::seconds(o.stop_timeout_s);
  launch::Supervisor sup(so);
  sup_ptr = &sup;

  // Progress while each process loads: its nodes' lifecycle states, once a second.
  std::atomic<bool> starting{true};
  std::string current;
  std::mutex current_mu;
  std::thread progress([&] {
    auto t0 = std::chrono::steady_clock::now();
    while (starting.load()) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      std::lock_guard<std::mutex> l(current_mu);
      if (!starting.load() || current.empty()) continue;
      std::string states;
      for (const auto& n : nodes_of[current]) states += (states.empty() ? "" : ", ") + n + " " + watcher.StateOf(n);
      std::fprintf(stderr, "[launch] waiting for %s (%s) %.0f s\n", current.c_str(), states.c_str(),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  });
  auto t_start = std::chrono::steady_clock::now();
  Status started = sup.StartInOrder(
      procs,
      [&](const std::string& name) {
        {
          std::lock_guard<std::mutex> l(current_mu);
          current = name;
        }
        return watcher.Ready(nodes_of[name]);
      },
      std::chrono::seconds(o.ready_timeout_s));
  starting.store(false);
  progress.join();
  if (!started.ok()) {
    watcher.Stop();
    roudi_stopping.store(true);
    roudi.Stop();
    return Fail(started.message());
  }

  std::string port = "30000", host = "127.0.0.1";
  for (const auto* api : plan->NodesOf("api")) {
    port = api->Param("port", port);
    host = api->Param("host", host);
  }
  std::printf("radixserve is ready: http://%s:%s/v1 (%zu processes, started in %.1f s)\n", host.c_str(), port.c_str(),
              plan->processes.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count());
  std::fflush(stdout);

  // RouDi dying orphans every iceoryx client: stop the pipeline and say so.
  std::atomic<bool> roudi_died{false};
  std::thread roudi_watch([&] {
    while (!stopping.load()) {
      if (roudi.pid() > 0 && !roudi.running()) {
        roudi_died.store(true);
        std::fprintf(stderr, "[launch] RouDi died: iceoryx clients cannot reattach, stopping the pipeline\n");
        stopping.store(true);
        sup.Stop();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  Status result = sup.Wait();
  stopping.store(true);
  roudi_watch.join();
  watcher.Stop();
  roudi_stopping.store(true);
  roudi.Stop();
  if (roudi_died.load()) return Fail("stopped because RouDi died");
  if (!result.ok()) return Fail(result.message());
  std::fprintf(stderr, "[launch] stopped\n");
  return 0;
}

CommandRegistrar launch_registrar({"launch", "Start a pipeline from a launch file",
                      [](CLI::App& app) -> std::function<int()> {
                        auto o = std::make_shared<LaunchCliOptions>();
                        app.add_option("file", o->file, "Launch file (YAML)")->required();
                        app.add_option("args", o->args, "Launch arguments name:=value");
                        app.add_option("--ready-timeout", o->ready_timeout_s, "Seconds a process may take to be ready")
                            ->capture_default_str();
                        app.add_option("--stop-timeout", o->stop_timeout_s, "Seconds a process may take to stop")
                            ->capture_default_str();
                        return [o] { return RunLaunch(*o); };
                      }});

}  // namespace
}  // namespace radixserve::tools
