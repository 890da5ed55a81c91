#include "tests/launch_e2e/launcher.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/pipeline/pipeline_fixture.h"
#include "transport/roudi_process.h"

namespace radixserve::launch_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string LaunchDir() { return std::string(RADIXSERVE_SOURCE_DIR) + "/launch"; }
std::string LibDir() { return std::string(RADIXSERVE_BINARY_DIR) + "/lib"; }
std::string TestPluginDir() { return std::string(RADIXSERVE_BINARY_DIR) + "/test_plugins"; }

namespace {

using pipeline_test::ReadFile;

// pid -> (ppid, state) of every process visible in /proc.
std::map<pid_t, std::pair<pid_t, char>> ProcessTable() {
  std::map<pid_t, std::pair<pid_t, char>> table;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::string stat = ReadFile(e.path().string() + "/stat");
    auto close = stat.rfind(')');  // the command name may contain spaces and parentheses
    if (close == std::string::npos || close + 4 > stat.size()) continue;
    char state = stat[close + 2];
    pid_t ppid = static_cast<pid_t>(std::strtol(stat.c_str() + close + 4, nullptr, 10));
    table[static_cast<pid_t>(std::stol(name))] = {ppid, state};
  }
  return table;
}

bool HasChildren() {
  for (const auto& [pid, info] : ProcessTable())
    if (info.first == ::getpid()) return true;
  return false;
}

std::string Comm(pid_t pid) {
  std::string c = ReadFile("/proc/" + std::to_string(pid) + "/comm");
  if (!c.empty() && c.back() == '\n') c.pop_back();
  return c;
}

}  // namespace

std::vector<pid_t> Descendants(pid_t root) {
  auto table = ProcessTable();
  std::vector<pid_t> out;
  std::vector<pid_t> frontier = {root > 0 ? root : ::getpid()};
  while (!frontier.empty()) {
    pid_t parent = frontier.back();
    frontier.pop_back();
    for (const auto& [pid, info] : table) {
      if (info.first != parent) continue;
      frontier.push_back(pid);
      if (info.second != 'Z' && info.second != 'X') out.push_back(pid);
    }
  }
  return out;
}

std::vector<std::string> CmdLine(pid_t pid) {
  std::string raw = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> argv;
  std::stringstream ss(raw);
  for (std::string a; std::getline(ss, a, '\0');) argv.push_back(a);
  return argv;
}

void ReapOrphans(pid_t keep) {
  for (const auto& [pid, info] : ProcessTable()) {
    if (info.first != ::getpid() || pid == keep) continue;
    int st = 0;
    ::waitpid(pid, &st, WNOHANG);
  }
}

std::string RunCtl(const std::string& url, const std::string& words, int* rc) {
  std::string cmd = pipeline_test::RadixserveBinary() + " ctl --url " + url + " " + words + " 2>&1";
  FILE* f = ::popen(cmd.c_str(), "r");
  std::string out;
  if (f == nullptr) {
    *rc = -1;
    return out;
  }
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) out.append(buf, n);
  int st = ::pclose(f);
  *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

LauncherOptions LaunchOf(std::string file, std::vector<std::string> args) {
  LauncherOptions o;
  o.file = std::move(file);
  o.args = std::move(args);
  return o;
}

Launcher::Launcher() {
  // Orphans of the launcher (its nodes, when it dies first) become our children: we can see them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  std::string tmpl = (fs::temp_directory_path() / "radixserve_launch_e2e_XXXXXX").string();
  if (::mkdtemp(tmpl.data())) dir_ = tmpl;
  log_ = dir_ + "/launch.log";
}

Launcher::~Launcher() {
  Kill();
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

std::string Launcher::Output() const { return ReadFile(log_); }

Status Launcher::Spawn(const LauncherOptions& o) {
  if (pid_ > 0) return Status::FailedPrecondition("the launcher is already started");
  if (o.wait_for_other_roudi) {
    auto deadline = Clock::now() + o.roudi_wait;
    while (pipeline_test::RouDiPresent()) {
      if (Clock::now() >= deadline)
        return Status::Unavailable("another iceoryx RouDi kept running for " + std::to_string(o.roudi_wait.count()) +
                                   " s");
      std::this_thread::sleep_for(milliseconds(200));
    }
  }
  std::vector<std::string> argv = o.wrapper;
  argv.insert(argv.end(), {pipeline_test::RadixserveBinary(), "launch", o.file});
  argv.insert(argv.end(), o.args.begin(), o.args.end());
  argv.insert(argv.end(), o.flags.begin(), o.flags.end());
  RS_ASSIGN_OR_RETURN(pid_t pid, pipeline_test::Spawn(argv, log_));
  pid_ = pid;
  exited_ = false;
  wrapped_ = !o.wrapper.empty();
  return Status::Ok();
}

Status Launcher::WaitReady(std::chrono::seconds timeout) {
  static const std::regex kReady(R"(radixserve is ready: http://([0-9.]+):([0-9]+)/v1)");
  auto deadline = Clock::now() + timeout;
  while (true) {
    std::string out = Output();
    std::smatch m;
    if (std::regex_search(out, m, kReady)) {
      port_ = std::stoi(m[2].str());
      return Status::Ok();
    }
    if (WaitExit(std::chrono::seconds(0)))
      return Status::Unavailable("radixserve launch exited (status " + std::to_string(exit_status_) +
                                 ") before it was ready:\n" + out);
    if (Clock::now() >= deadline)
      return Status::Unavailable("no ready line within " + std::to_string(timeout.count()) + " s:\n" + out);
    std::this_thread::sleep_for(milliseconds(50));
  }
}

Status Launcher::Start(const LauncherOptions& o) {
  RS_RETURN_IF_ERROR(Spawn(o));
  return WaitReady(o.ready_timeout);
}

void Launcher::Signal(int sig) {
  if (pid_ > 0 && !exited_) ::kill(pid_, sig);
}

std::optional<int> Launcher::WaitExit(std::chrono::seconds timeout) {
  if (pid_ <= 0) return std::nullopt;
  if (exited_) return exit_status_;
  auto deadline = Clock::now() + timeout;
  while (true) {
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      exited_ = true;
      exit_status_ = st;
      return st;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(milliseconds(20));
  }
}

pid_t Launcher::ProcessPid(const std::string& component) const {
  if (pid_ <= 0 || exited_) return -1;
  for (const auto& [pid, info] : ProcessTable()) {
    if (info.first != pid_ || info.second == 'Z') continue;
    auto argv = CmdLine(pid);
    if (component == "container" && argv.size() > 1 && argv[1] == "container") return pid;
    if (argv.size() > 2 && argv[1] == "node" && argv[2] == component) return pid;
  }
  return -1;
}

pid_t Launcher::RouDiPid() const {
  if (pid_ <= 0 || exited_) return -1;
  for (const auto& [pid, info] : ProcessTable())
    if (info.first == pid_ && info.second != 'Z' && Comm(pid) == "iox-roudi") return pid;
  return -1;
}

int Launcher::ProcessCount() const {
  if (pid_ <= 0 || exited_) return 0;
  int n = 0;
  for (const auto& [pid, info] : ProcessTable())
    if (info.first == pid_ && info.second != 'Z') {
      auto argv = CmdLine(pid);  // not RouDi, nor the launcher's own helper child
      if (argv.size() > 1 && (argv[1] == "node" || argv[1] == "container")) ++n;
    }
  return n;
}

std::string Launcher::Leftovers(const std::vector<pid_t>& except) {
  ReapOrphans(exited_ ? -1 : pid_);
  std::string out;
  for (pid_t p : Descendants()) {
    if (std::find(except.begin(), except.end(), p) != except.end()) continue;
    std::string cmd;
    for (const auto& a : CmdLine(p)) cmd += a + " ";
    out += "process " + std::to_string(p) + " (" + Comm(p) + ") still runs: " + cmd + "\n";
  }
  if (!pipeline_test::RouDiPresent()) {
    std::vector<std::string> shm = {"/dev/shm/iceoryx_mgmt"};
    if (const group* g = ::getgrgid(::getegid())) shm.push_back(std::string("/dev/shm/") + g->gr_name);
    for (const auto& f : shm)
      if (fs::exists(f)) out += "shared memory segment " + f + " was left behind\n";
  }
  return out;
}

void Launcher::Kill() {
  if (pid_ <= 0) return;
  if (wrapped_) {
    // A host of its own: its processes are the launcher's subtree, and killing the init of its
    // process namespace among them makes the kernel kill the rest. Other hosts' processes stay.
    auto deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < deadline) {
      std::vector<pid_t> all = Descendants(pid_);
      if (!exited_) all.push_back(pid_);
      if (all.empty()) break;
      for (pid_t p : all) ::kill(p, SIGKILL);
      std::this_thread::sleep_for(milliseconds(20));
      if (!exited_) WaitExit(std::chrono::seconds(0));
    }
    pid_ = -1;
    return;
  }
  // Until nothing is left: a process may fork while we kill (the supervisor respawning a node),
  // and killed grandchildren become ours (subreaper) only once their parent is gone.
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    std::vector<pid_t> all = Descendants();
    if (all.empty()) break;
    for (pid_t p : all) ::kill(p, SIGKILL);
    std::this_thread::sleep_for(milliseconds(20));
    if (!exited_) WaitExit(std::chrono::seconds(0));
    ReapOrphans(exited_ ? -1 : pid_);
  }
  if (!exited_) WaitExit(std::chrono::seconds(1));
  // A killed multi-threaded process shows as a zombie while its other threads still exit, and
  // cannot be reaped until they are gone: reap until no child is left, or a zombie RouDi would
  // look like a running one to the next test.
  deadline = Clock::now() + std::chrono::seconds(10);
  while (true) {
    ReapOrphans(-1);
    if (!HasChildren() || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(milliseconds(20));
  }
  deadline = Clock::now() + std::chrono::seconds(5);
  while (transport::RouDiRunning() && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(20));
  if (!pipeline_test::RouDiPresent()) transport::RemoveRouDiLeftovers();
  pid_ = -1;
}

}  // namespace radixserve::launch_test
