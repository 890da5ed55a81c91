#include "launch/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "launch/launch_plan.h"

extern char** environ;

namespace radixserve::launch {

using Clock = std::chrono::steady_clock;

SupervisedProcess FromPlan(const ProcessPlan& p) {
  return SupervisedProcess{p.name, p.argv, p.respawn, p.respawn_delay, p.required};
}

struct Supervisor::Child {
  SupervisedProcess spec;
  pid_t pid = -1;
  int restarts = 0;
  int exits = 0;
  bool spawned_once = false;
  bool restart_pending = false;
  bool done = false;  // exited and will not be restarted
  Clock::time_point restart_at;
};

// Forwards one process's output line by line until both pipes reach EOF.
struct Supervisor::Reader {
  std::thread thread;
  std::shared_ptr<std::atomic<bool>> finished;
  pid_t pgid;
};

namespace {

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return "was killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
  }
  return "ended with status " + std::to_string(status);
}

void ReadLines(int out_fd, int err_fd, const std::string& prefix,
               const std::function<void(const std::string&, bool)>& sink, std::atomic<bool>* finished) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string pending[2];
  char buf[4096];
  int open = 2;
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (!pending[i].empty()) sink(prefix + pending[i], i == 1);
        pending[i].clear();
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
        continue;
      }
      pending[i].append(buf, static_cast<size_t>(n));
      size_t start = 0, nl;
      while ((nl = pending[i].find('\n', start)) != std::string::npos) {
        sink(prefix + pending[i].substr(start, nl - start), i == 1);
        start = nl + 1;
      }
      pending[i].erase(0, start);
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  finished->store(true);
}

}  // namespace

Supervisor::Supervisor(SupervisorOptions options) : options_(std::move(options)) {
  if (!options_.output) {
    options_.output = [this](const std::string& line, bool is_stderr) {
      std::lock_guard<std::mutex> l(output_mu_);
      std::FILE* f = is_stderr ? stderr : stdout;
      std::fwrite(line.data(), 1, line.size(), f);
      std::fputc('\n', f);
      std::fflush(f);
    };
  }
  if (!options_.events) {
    options_.events = [this](const std::string& line) {
      std::lock_guard<std::mutex> l(output_mu_);
      std::fprintf(stderr, "[launch] %s\n", line.c_str());
    };
  }
}

Supervisor::~Supervisor() {
  Stop();
  if (monitor_.joinable()) monitor_.join();
}

void Supervisor::Event(const std::string& line) { options_.events(line); }

Supervisor::Child* Supervisor::FindLocked(const std::string& name) const {
  for (const auto& c : children_)
    if (c->spec.name == name) return c.get();
  return nullptr;
}

pid_t Supervisor::pid(const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  Child* c = FindLocked(name);
  return c ? c->pid : -1;
}

int Supervisor::restarts(const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  Child* c = FindLocked(name);
  return c ? c->restarts : 0;
}

bool Supervisor::running(const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  Child* c = FindLocked(name);
  return c && c->pid > 0;
}

Status Supervisor::Spawn(Child& c) {
  if (c.spec.argv.empty()) return Status::InvalidArgument("process '" + c.spec.name + "' has an empty argv");
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Status::IOError(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return Status::IOError(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char*> argv;
  for (auto& a : c.spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Own process group: terminal Ctrl-C reaches only us, and we stop children in order.
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t empty, defaults;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attr, &empty);  // the launcher blocks SIGINT/SIGTERM in its threads
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    return Status::IOError("cannot start '" + c.spec.name + "' (" + c.spec.argv[0] + "): " + std::strerror(rc));
  }
  c.pid = pid;
  c.spawned_once = true;
  auto r = std::make_unique<Reader>();
  r->finished = std::make_shared<std::atomic<bool>>(false);
  r->pgid = pid;
  r->thread = std::thread(ReadLines, out[0], err[0], "[" + c.spec.name + "] ", options_.output, r->finished.get());
  readers_.push_back(std::move(r));
  return Status::Ok();
}

void Supervisor::ReapLocked() {
  for (auto& cp : children_) {
    Child& c = *cp;
    if (c.pid <= 0) continue;
    int status = 0;
    pid_t r = ::waitpid(c.pid, &status, WNOHANG);
    if (r == 0) continue;
    c.pid = -1;
    ++c.exits;
    std::string what = c.spec.name + " " + (r < 0 ? "vanished" : DescribeExit(status));
    if (stop_requested_) continue;
    if (c.spec.required) {
      Event(what + "; it is required, stopping everything");
      if (result_.ok()) result_ = Status::Unavailable("required process '" + c.spec.name + "' " + what.substr(c.spec.name.size() + 1));
      stop_requested_ = true;
    } else if (c.spec.respawn) {
      double delay = std::max(0.0, c.spec.respawn_delay);
      Event(what + ", restarting in " + std::to_string(delay) + " s");
      c.restart_pending = true;
      c.restart_at = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(std::llround(delay * 1e6)));
    } else {
      Event(what);
      c.done = true;
    }
  }
}

void Supervisor::RestartDueLocked() {
  auto now = Clock::now();
  for (auto& cp : children_) {
    Child& c = *cp;
    if (!c.restart_pending || now < c.restart_at || stop_requested_) continue;
    c.restart_pending = false;
    if (Status s = Spawn(c); !s.ok()) {
      Event("cannot restart " + c.spec.name + ": " + s.message());
      c.done = true;
      if (c.spec.required) {
        if (result_.ok()) result_ = s;
        stop_requested_ = true;
      }
      continue;
    }
    ++c.restarts;
  }
}

void Supervisor::JoinFinishedReadersLocked() {
  for (auto it = readers_.begin(); it != readers_.end();) {
    if ((*it)->finished->load()) {
      (*it)->thread.join();
      it = readers_.erase(it);
    } else {
      ++it;
    }
  }
}

void Supervisor::MonitorLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    ReapLocked();
    if (stop_requested_) break;
    RestartDueLocked();
    JoinFinishedReadersLocked();
    bool all_done = started_ && !children_.empty();
    for (const auto& c : children_) all_done = all_done && c->done;
    if (all_done) {
      Event("every process has exited");
      break;
    }
    cv_.wait_for(lock, options_.poll_interval, [this] { return stop_requested_; });
  }
  ShutdownLocked(lock);
}

void Supervisor::ShutdownLocked(std::unique_lock<std::mutex>& lock) {
  stop_requested_ = true;
  for (auto it = children_.rbegin(); it != children_.rend(); ++it) {
    Child& c = **it;
    c.restart_pending = false;
    if (c.pid <= 0) continue;
    ::kill(-c.pid, SIGTERM);
    auto deadline = Clock::now() + options_.stop_timeout;
    int status = 0;
    pid_t r = 0;
    while ((r = ::waitpid(c.pid, &status, WNOHANG)) == 0 && Clock::now() < deadline) {
      lock.unlock();
      std::this_thread::sleep_for(std::min<Clock::duration>(options_.poll_interval, std::chrono::milliseconds(5)));
      lock.lock();
    }
    if (r == 0) {
      Event(c.spec.name + " did not stop within " + std::to_string(options_.stop_timeout.count()) +
            " ms, killing it");
      ::kill(-c.pid, SIGKILL);
      r = ::waitpid(c.pid, &status, 0);
    }
    Event("stopped " + c.spec.name + " (" + (r > 0 ? DescribeExit(status) : std::string("already gone")) + ")");
    c.pid = -1;
    c.done = true;
  }
  // A reader still running means something in that process group holds the pipe open.
  for (auto& r : readers_)
    if (!r->finished->load()) ::kill(-r->pgid, SIGKILL);
  std::vector<std::unique_ptr<Reader>> readers = std::move(readers_);
  readers_.clear();
  lock.unlock();
  for (auto& r : readers) r->thread.join();
  lock.lock();
  stopped_ = true;
  cv_.notify_all();
}

Status Supervisor::Fail(Status s) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (result_.ok()) result_ = s;
  }
  Stop();
  return s;
}

Status Supervisor::StartInOrder(const std::vector<SupervisedProcess>& processes, const ReadyFn& ready,
                                std::chrono::milliseconds timeout) {
  for (const SupervisedProcess& spec : processes) {
    Child* c = nullptr;
    int exits_before = 0;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stop_requested_ || stopped_) break;
      if (FindLocked(spec.name)) {
        if (result_.ok()) result_ = Status::InvalidArgument("two processes are named '" + spec.name + "'");
        stop_requested_ = true;
        cv_.notify_all();
        break;
      }
      children_.push_back(std::make_unique<Child>());
      c = children_.back().get();
      c->spec = spec;
      if (Status s = Spawn(*c); !s.ok()) {
        c->done = true;
        if (result_.ok()) result_ = s;
        stop_requested_ = true;
      }
      if (!monitor_.joinable()) monitor_ = std::thread(&Supervisor::MonitorLoop, this);
      if (stop_requested_) {
        cv_.notify_all();
      } else {
        Event("started " + spec.name + " (pid " + std::to_string(c->pid) + ")");
      }
      exits_before = c->exits;
    }
    if (!ready) continue;
    auto deadline = Clock::now() + timeout;
    while (true) {
      bool exited = false;
      {
        std::lock_guard<std::mutex> l(mu_);
        if (stop_requested_ || stopped_) break;
        exited = c->exits != exits_before;
      }
      if (exited) return Fail(Status::Unavailable("'" + spec.name + "' exited before it was ready"));
      if (ready(spec.name)) break;
      if (Clock::now() >= deadline)
        return Fail(Status::Unavailable("'" + spec.name + "' was not ready within " +
                                        std::to_string(timeout.count()) + " ms"));
      std::this_thread::sleep_for(options_.poll_interval);
    }
  }
  std::unique_lock<std::mutex> l(mu_);
  if (stop_requested_ || stopped_) {
    Status s = result_.ok() ? Status::Unavailable("stopped while starting") : result_;
    l.unlock();
    Stop();
    return s;
  }
  started_ = true;
  return Status::Ok();
}

Status Supervisor::Wait() {
  std::unique_lock<std::mutex> l(mu_);
  if (!monitor_.joinable()) return result_;
  cv_.wait(l, [this] { return stopped_; });
  return result_;
}

void Supervisor::Stop() {
  std::unique_lock<std::mutex> l(mu_);
  if (!monitor_.joinable()) {
    stopped_ = true;
    return;
  }
  stop_requested_ = true;
  cv_.notify_all();
  cv_.wait(l, [this] { return stopped_; });
}

}  // namespace radixserve::launch
