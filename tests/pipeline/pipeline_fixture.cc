#include "tests/pipeline/pipeline_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "transport/roudi_process.h"

namespace radixserve::pipeline_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string Stories260K() { return std::string(RADIXSERVE_SHARED_DIR) + "/models/stories260K.gguf"; }
std::string GoldenFile() { return std::string(RADIXSERVE_SHARED_DIR) + "/models/golden_stories260K.json"; }
std::string RadixserveBinary() { return std::string(RADIXSERVE_BINARY_DIR) + "/bin/radixserve"; }

// Runs a command, returns its stdout and exit status.
std::string RunCommand(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) {
    *status = -1;
    return out;
  }
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  int st = ::pclose(p);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// fork/exec `argv` in its own process group, stdout and stderr into `log`, stdin from /dev/null.
Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return Status::IOError(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // the test process died: stop too
    if (::getppid() != parent) ::_exit(126);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || in < 0) ::_exit(125);
    ::dup2(in, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before either side runs on
  return pid;
}

namespace {

std::string Tail(const std::string& text, size_t lines) {
  std::deque<std::string> last;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    last.push_back(line);
    if (last.size() > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += "    " + l + "\n";
  return out;
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  return "ended (status " + std::to_string(status) + ")";
}


bool RouDiProcessExists() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::string comm = ReadFile(e.path().string() + "/comm");
    if (comm != "iox-roudi\n") continue;
    // A zombie holds nothing: only a RouDi that still runs (or still exits) counts.
    std::string stat = ReadFile(e.path().string() + "/stat");
    auto close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() && (stat[close + 2] == 'Z' || stat[close + 2] == 'X'))
      continue;
    return true;
  }
  return false;
}

}  // namespace

bool RouDiPresent() {
  // transport::RouDiRunning checks both of iox-roudi's locks; also look for the process itself.
  return transport::RouDiRunning() || RouDiProcessExists();
}

int PickFreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

Pipeline::Pipeline(PipelineOptions options) : options_(std::move(options)) {}

Pipeline::~Pipeline() { Stop(); }

pid_t Pipeline::pid(const std::string& name) const {
  for (const auto& c : children_)
    if (c.name == name) return c.pid;
  return -1;
}

Pipeline::Child* Pipeline::Find(const std::string& name) {
  for (auto& c : children_)
    if (c.name == name) return &c;
  return nullptr;
}

bool Pipeline::Alive(const std::string& name) {
  Child* c = Find(name);
  if (!c || c->pid <= 0) return false;
  int st = 0;
  if (::waitpid(c->pid, &st, WNOHANG) == c->pid) {
    c->exit_status = st;
    c->pid = -1;
    return false;
  }
  return true;
}

std::string Pipeline::LogTails(size_t lines) const {
  std::string out;
  for (const auto& c : children_) {
    out += "--- " + c.name + " (" + c.log + ")";
    if (c.pid <= 0) out += ", " + DescribeExit(c.exit_status);
    out += ":\n" + Tail(ReadFile(c.log), lines);
  }
  return out;
}

Status Pipeline::Start() {
  if (started_) return Status::FailedPrecondition("the pipeline is already started");
  std::string tmpl = (fs::temp_directory_path() / "radixserve_pipeline_XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) return Status::IOError("mkdtemp failed: " + std::string(std::strerror(errno)));
  dir_ = tmpl;
  started_ = true;
  owner_ = ::getpid();
  auto fail = [this](const Status& s) {
    Status out(s.code(), s.message() + "\nnode logs (" + dir_ + "):\n" + LogTails());
    Stop();
    return out;
  };
  if (Status s = StartRouDi(); !s.ok()) return fail(s);
  port_ = PickFreePort();
  if (port_ <= 0) return fail(Status::IOError("no free TCP port"));
  const std::string model = "model:=" + options_.model;
  const std::string slots = std::to_string(options_.kv_slots);
  auto with = [](std::vector<std::string> base, const std::vector<std::string>& extra) {
    base.insert(base.end(), extra.begin(), extra.end());
    return base;
  };
  struct NodeSpec {
    const char* component;
    std::vector<std::string> params;
  };
  std::vector<NodeSpec> nodes = {
      {"worker", with({model, "kv_slots:=" + slots}, options_.worker_params)},
      {"detokenizer", with({model}, options_.detokenizer_params)},
      {"scheduler", with({model, "max_total_tokens:=" + slots}, options_.scheduler_params)},
      {"api", with({model, "port:=" + std::to_string(port_)}, options_.api_params)},
  };
  for (auto& n : nodes)
    if (Status s = StartNode(n.component, std::move(n.params)); !s.ok()) return fail(s);
  if (Status s = WaitHealthy(); !s.ok()) return fail(s);
  return Status::Ok();
}

Status Pipeline::StartRouDi() {
  auto deadline = Clock::now() + options_.roudi_wait;
  std::string log = dir_ + "/roudi.log";
  while (true) {
    // One RouDi per machine: let another test's RouDi finish first.
    bool told = false;
    while (RouDiPresent()) {
      if (!told) std::fprintf(stderr, "another iceoryx RouDi is running: waiting for it to finish\n");
      told = true;
      if (Clock::now() >= deadline)
        return Status::Unavailable("another iceoryx RouDi kept running for " +
                                   std::to_string(options_.roudi_wait.count()) + " s");
      std::this_thread::sleep_for(milliseconds(200));
    }
    children_.erase(std::remove_if(children_.begin(), children_.end(), [](const Child& c) { return c.name == "roudi"; }),
                    children_.end());
    RS_ASSIGN_OR_RETURN(pid_t pid, Spawn({RadixserveBinary(), "roudi", "--config", dir_ + "/roudi.toml"}, log));
    children_.push_back({"roudi", pid, log, 0});
    auto ready_deadline = Clock::now() + std::chrono::seconds(20);
    while (true) {
      if (ReadFile(log).find("RouDi running") != std::string::npos) return Status::Ok();
      if (!Alive("roudi")) break;
      if (Clock::now() >= ready_deadline) return Status::Unavailable("radixserve roudi did not start within 20 s");
      std::this_thread::sleep_for(milliseconds(20));
    }
    // It exited: lost a race with another RouDi (wait again), or a real failure.
    std::string text = ReadFile(log);
    // (A RouDi that is still closing its socket when ours starts shows as an "application with the
    // name roudi still running".)
    bool lost_race = text.find("already running") != std::string::npos ||
                     text.find("ROUDI_STILL_RUNNING") != std::string::npos ||
                     text.find("APP_WITH_SAME_NAME_STILL_RUNNING") != std::string::npos;
    if (!lost_race || Clock::now() >= deadline)
      return Status::Unavailable("radixserve roudi " + DescribeExit(Find("roudi")->exit_status));
  }
}

Status Pipeline::StartNode(const std::string& component, std::vector<std::string> params) {
  std::vector<std::string> argv = {RadixserveBinary(), "node", component};
  for (auto& p : params) {
    argv.push_back("-p");
    argv.push_back(std::move(p));
  }
  std::string log = dir_ + "/" + component + ".log";
  RS_ASSIGN_OR_RETURN(pid_t pid, Spawn(argv, log));
  children_.push_back({component, pid, log, 0});
  return Status::Ok();
}

Status Pipeline::WaitHealthy() {
  httplib::Client cli("127.0.0.1", port_);
  cli.set_connection_timeout(1, 0);
  cli.set_read_timeout(5, 0);
  auto deadline = Clock::now() + options_.ready_timeout;
  std::string last = "no answer";
  while (Clock::now() < deadline) {
    for (const auto& c : children_)
      if (!Alive(c.name)) return Status::Unavailable("node '" + c.name + "' " + DescribeExit(c.exit_status) +
                                                     " before the pipeline became healthy");
    if (auto res = cli.Get("/health")) {
      if (res->status == 200) return Status::Ok();
      last = "HTTP " + std::to_string(res->status) + " " + res->body;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  return Status::Unavailable("GET /health did not answer 200 within " +
                             std::to_string(options_.ready_timeout.count()) + " s (last: " + last + ")");
}

void Pipeline::StopChildren(std::vector<Child*> children, milliseconds grace, std::string* report) {
  for (Child* c : children)
    if (c->pid > 0) ::kill(c->pid, SIGTERM);
  auto deadline = Clock::now() + grace;
  auto any_alive = [&] {
    bool any = false;
    for (Child* c : children) any |= Alive(c->name);
    return any;
  };
  while (any_alive() && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(20));
  for (Child* c : children) {
    if (c->pid <= 0) continue;
    *report += c->name + " (pid " + std::to_string(c->pid) + ") ignored SIGTERM for " +
               std::to_string(grace.count()) + " ms: killed\n";
    ::kill(-c->pid, SIGKILL);  // the whole group: radixserve roudi's iox-roudi too
    int st = 0;
    ::waitpid(c->pid, &st, 0);
    c->exit_status = st;
    c->pid = -1;
  }
}

std::string Pipeline::Stop() {
  std::string report;
  // A forked child of the test (which runs static destructors at exit) must not stop the pipeline.
  if (!started_ || ::getpid() != owner_) return report;
  started_ = false;
  std::vector<Child*> nodes;
  Child* roudi = nullptr;
  for (auto& c : children_) {
    if (c.name == "roudi")
      roudi = &c;
    else
      nodes.push_back(&c);
  }
  StopChildren(nodes, milliseconds(10000), &report);
  if (roudi) {
    bool was_running = roudi->pid > 0;
    StopChildren({roudi}, milliseconds(15000), &report);
    // A killed RouDi leaves its segments and lock files: remove them once its lock is free.
    if (was_running && !(WIFEXITED(roudi->exit_status) && WEXITSTATUS(roudi->exit_status) == 0)) {
      auto deadline = Clock::now() + std::chrono::seconds(5);
      while (RouDiPresent() && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(20));
      if (!RouDiPresent()) {
        transport::RemoveRouDiLeftovers();
        report += "RouDi did not exit cleanly (" + DescribeExit(roudi->exit_status) + "): removed its leftovers\n";
      }
    }
  }
  return report;
}

// ---- gtest environment ---------------------------------------------------------------

namespace {
PipelineEnvironment* g_env = nullptr;
}

PipelineEnvironment* RegisterPipeline(PipelineOptions options) {
  g_env = new PipelineEnvironment(std::move(options));
  ::testing::AddGlobalTestEnvironment(g_env);  // gtest owns it
  return g_env;
}

PipelineEnvironment* Env() { return g_env; }

void PipelineEnvironment::SetUp() {
  pipeline_ = std::make_unique<Pipeline>(options_);
  Status s = pipeline_->Start();
  ASSERT_TRUE(s.ok()) << s.message();
}

void PipelineEnvironment::TearDown() {
  if (!pipeline_) return;
  if (::testing::UnitTest::GetInstance()->Failed())
    std::fprintf(stderr, "node logs (%s):\n%s", pipeline_->dir().c_str(), pipeline_->LogTails().c_str());
  std::string report = pipeline_->Stop();
  if (!report.empty()) std::fprintf(stderr, "stopping the pipeline:\n%s", report.c_str());
  for (const char* n : {"roudi", "worker", "detokenizer", "scheduler", "api"})
    EXPECT_FALSE(pipeline_->Alive(n)) << n << " is still running";
  // Nothing of ours may stay in /dev/shm (unless someone else's RouDi started meanwhile).
  if (!RouDiPresent()) {
    EXPECT_FALSE(fs::exists("/dev/shm/iceoryx_mgmt")) << "RouDi left /dev/shm behind";
  }
  if (!::testing::UnitTest::GetInstance()->Failed()) {
    std::error_code ec;
    fs::remove_all(pipeline_->dir(), ec);
  }
}

}  // namespace radixserve::pipeline_test
