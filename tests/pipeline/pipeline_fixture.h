// Pipeline: a real four-process radixserve pipeline for end-to-end tests.
//
// Start() waits for any other RouDi on the machine to go away (one per machine),
// starts `radixserve roudi`, then the worker, detokenizer, scheduler and api nodes
// (fork/exec of the radixserve binary), each with its stdout/stderr in a log file
// under a private temp dir, and waits until GET /health answers 200. Stop() (also
// run by the destructor) sends SIGTERM, then SIGKILL after a grace period, to every
// child's process group and removes what a killed RouDi leaves in /dev/shm. Children
// get SIGTERM from the kernel if the test process dies (PR_SET_PDEATHSIG).
//
// PipelineEnvironment wraps one Pipeline in a gtest Environment: a test program
// registers it once and its tests talk to Env()->port(). Neither class is thread-safe:
// Start/Stop from the thread that runs the tests.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/util/status.h"

namespace radixserve::pipeline_test {

// The test model and its reference outputs.
std::string Stories260K();
std::string GoldenFile();
// ${RADIXSERVE_BINARY_DIR}/bin/radixserve.
std::string RadixserveBinary();
// Runs a shell command; its stdout, and its exit status in *status (-1: it did not exit).
std::string RunCommand(const std::string& cmd, int* status);
// `s` in single quotes for the shell.
std::string ShellQuote(const std::string& s);
// The whole file as bytes ("" when it cannot be read).
std::string ReadFile(const std::string& path);
// fork/exec `argv` in its own process group (SIGTERM when the test process dies), stdout and stderr
// into `log`, stdin from /dev/null.
Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::string& log);

struct PipelineOptions {
  std::string model = Stories260K();
  int kv_slots = 4096;  // the scheduler's max_total_tokens; the worker gets the same
  // Extra "name:=value" parameters per node, e.g. scheduler: {"policy:=fcfs"}.
  std::vector<std::string> worker_params;
  std::vector<std::string> scheduler_params;
  std::vector<std::string> detokenizer_params;
  std::vector<std::string> api_params;
  std::chrono::seconds roudi_wait{60};     // how long another RouDi may keep the machine
  std::chrono::seconds ready_timeout{30};  // until /health answers 200
};

class Pipeline {
 public:
  explicit Pipeline(PipelineOptions options);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // On failure the message carries the tail of every log; whatever started is stopped.
  Status Start();
  // Idempotent. Returns a description of anything that had to be killed or cleaned up.
  std::string Stop();

  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // pid of "roudi", "worker", "detokenizer", "scheduler" or "api"; -1 when not running.
  pid_t pid(const std::string& name) const;
  // True while that child has not exited (reaps it when it has).
  bool Alive(const std::string& name);
  const std::string& dir() const { return dir_; }
  // The last `lines` lines of every child's log, each under a header.
  std::string LogTails(size_t lines = 25) const;

 private:
  struct Child {
    std::string name;
    pid_t pid = -1;
    std::string log;
    int exit_status = 0;
  };
  Status StartRouDi();
  Status StartNode(const std::string& component, std::vector<std::string> params);
  Status WaitHealthy();
  Child* Find(const std::string& name);
  void StopChildren(std::vector<Child*> children, std::chrono::milliseconds grace, std::string* report);

  PipelineOptions options_;
  std::string dir_;
  int port_ = 0;
  std::vector<Child> children_;  // start order: roudi first
  bool started_ = false;
  pid_t owner_ = -1;  // the process that started the children; only it stops them
};

// One Pipeline for a whole test program. When any test failed, TearDown prints the node log tails.
class PipelineEnvironment : public ::testing::Environment {
 public:
  explicit PipelineEnvironment(PipelineOptions options) : options_(std::move(options)) {}
  void SetUp() override;
  void TearDown() override;
  Pipeline& pipeline() { return *pipeline_; }
  int port() const { return pipeline_->port(); }

 private:
  PipelineOptions options_;
  std::unique_ptr<Pipeline> pipeline_;
};

// Registers a PipelineEnvironment with gtest (call from a namespace-scope initializer) and
// remembers it for Env().
PipelineEnvironment* RegisterPipeline(PipelineOptions options);
PipelineEnvironment* Env();

// True when any iceoryx RouDi is running or starting on this machine.
bool RouDiPresent();

// A free TCP port on 127.0.0.1 (bound, read back, released).
int PickFreePort();

}  // namespace radixserve::pipeline_test
