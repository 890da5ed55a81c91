// RouDi outlives a publisher killed while it publishes: a process killed with SIGKILL in the
// middle of Publish() holds its port's shared-memory lock forever, and without the robust-mutex
// preload (transport/robust_ipc_preload.cc) RouDi blocks on that lock when it removes the dead
// process's ports, so a successor registering under the same name is never answered (shown by
// RADIXSERVE_ROBUST_IPC=0: the second or third round fails), and a successor that pushes into a
// queue the dead one held aborts (POPO__CHUNK_LOCKING_ERROR) or blocks.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>

#include "transport/channel.h"
#include "transport/message_layout.h"
#include "transport/robust_ipc.h"
#include "tests/transport/own_roudi_main.h"
#include "transport/roudi_process.h"

namespace radixserve::transport {
namespace {

struct Tick {
  static constexpr MessageKind kKind = MessageKind::kTest;
  static constexpr uint16_t kLayoutVersion = 1;
  MessageHeader header;
  uint32_t seq;
};

constexpr int kSubscribers = 16;  // each Publish() walks all of their queues under the port's lock
const Topic kTopic{"robustness", "tick"};

// Child: registers as `name` and publishes as fast as it can until it is killed.
[[noreturn]] void RunPublisher(const char* name) {
  if (!InitRuntime(name, std::chrono::seconds(5)).ok()) _exit(10);
  ChannelOptions o{1024};
  o.block_when_full = false;  // never wait for the parent: spend the time inside Publish()
  auto pub = Publisher::Create(kTopic, o);
  if (!pub.ok()) _exit(11);
  for (uint32_t seq = 0;; ++seq) {
    auto chunk = (*pub)->Loan(MessageSize<Tick>({}));
    if (!chunk.ok()) continue;
    MessageWriter<Tick> w(*chunk, MessageSize<Tick>({}));
    w.msg()->seq = seq;
    (*pub)->Publish(*chunk);
  }
}

TEST(RouDiRobustness, SuccessorRegistersAfterAPublisherIsKilledMidPublish) {
  ASSERT_TRUE(InitRuntime("roudi_robustness_parent").ok());
  ChannelOptions o{1024};
  o.queue_capacity = 4;
  o.block_when_full = false;
  std::vector<std::unique_ptr<Subscriber>> subs;
  for (int i = 0; i < kSubscribers; ++i) {
    auto s = Subscriber::Create(kTopic, o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    subs.push_back(std::move(*s));
  }
  std::mt19937 rng(7);
  constexpr int kRounds = 40;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round + 1) + " of " + std::to_string(kRounds));
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // a fresh process image (this one holds a runtime), under the preload as radixserve's are
      auto lib = RobustIpcLibrary();
      if (RobustIpcWanted() && lib.ok()) ::setenv("LD_PRELOAD", lib->c_str(), 1);
      ::execl("/proc/self/exe", "roudi_robustness_test", "--publisher", "roudi_robustness_publisher",
              static_cast<char*>(nullptr));  // the same name every round
      _exit(127);
    }
    // Its first message proves it registered (for round > 0: that RouDi answered it).
    bool heard = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!heard && std::chrono::steady_clock::now() < deadline) {
      for (auto& s : subs)
        while (Received r = s->TryTake()) heard = true;
      if (!heard) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
    ::kill(child, SIGKILL);
    int st = 0;
    ::waitpid(child, &st, 0);
    ASSERT_TRUE(heard) << "the publisher never got through: RouDi did not answer its registration";
    ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << "the publisher exited by itself, status " << st;
    for (auto& s : subs)
      while (Received r = s->TryTake()) {
      }
  }
}

}  // namespace
}  // namespace radixserve::transport

int main(int argc, char** argv) {
  using namespace radixserve::transport;
  if (argc == 3 && std::string(argv[1]) == "--publisher") RunPublisher(argv[2]);
  return RunTestsWithOwnRouDi(argc, argv, "radixserve_roudi_robustness_test.toml", 1 << 16);
}
