// Channels over a real RouDi: a message crosses a process boundary unchanged, oversize loans are
// errors, a Waiter wakes on data and on Wake(), and a malformed chunk is rejected by validation.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "transport/channel.h"
#include "transport/message_layout.h"
#include "tests/transport/own_roudi_main.h"
#include "transport/roudi_process.h"

namespace radixserve::transport {
namespace {

struct Ping {
  static constexpr MessageKind kKind = MessageKind::kTest;
  static constexpr uint16_t kLayoutVersion = 1;
  MessageHeader header;
  uint32_t seq;
  ArrayRef payload;  // uint8
};

// Child process: publishes `n` Ping messages of growing payload once the parent subscribed.
[[noreturn]] void RunPublisherChild(int n) {
  if (!InitRuntime("channel_test_child").ok()) _exit(10);
  auto pub = Publisher::Create({"test", "ping"}, ChannelOptions{1 << 20});
  if (!pub.ok()) _exit(11);
  for (int i = 0; i < 500 && !(*pub)->HasSubscribers(); ++i) usleep(10000);
  for (int i = 0; i < n; ++i) {
    size_t len = 1000 * static_cast<size_t>(i + 1);
    auto chunk = (*pub)->Loan(MessageSize<Ping>({len}));
    if (!chunk.ok()) _exit(12);
    MessageWriter<Ping> w(*chunk, MessageSize<Ping>({len}));
    w.msg()->seq = static_cast<uint32_t>(i);
    auto bytes = w.Append<uint8_t>(w.msg()->payload, len);
    for (size_t k = 0; k < len; ++k) bytes[k] = static_cast<uint8_t>((k + i) & 0xff);
    (*pub)->Publish(*chunk);
  }
  usleep(200000);  // let the parent take everything before this runtime goes away
  pub->reset();
  std::exit(0);  // a normal exit deregisters this runtime from RouDi
}

TEST(Channel, MessagesCrossAProcessBoundaryUnchanged) {
  constexpr int kCount = 50;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) RunPublisherChild(kCount);

  ASSERT_TRUE(InitRuntime("channel_test_parent").ok());
  auto sub = Subscriber::Create({"test", "ping"}, ChannelOptions{1 << 20});
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  auto waiter = Waiter::Create();
  ASSERT_TRUE(waiter.ok());
  ASSERT_TRUE((*waiter)->Attach(**sub).ok());

  int received = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (received < kCount && std::chrono::steady_clock::now() < deadline) {
    (*waiter)->Wait(std::chrono::milliseconds(100));
    while (Received r = (*sub)->TryTake()) {
      ASSERT_TRUE(ValidateHeader<Ping>(r.data(), r.size()).ok());
      const auto* m = static_cast<const Ping*>(r.data());
      ASSERT_TRUE(ValidateArray<uint8_t>(m, m->payload, 1 << 20, "payload").ok());
      EXPECT_EQ(m->seq, static_cast<uint32_t>(received));
      auto p = ArrayOf<uint8_t>(m, m->payload);
      ASSERT_EQ(p.size(), 1000u * (received + 1));
      for (size_t k = 0; k < p.size(); k += 97) ASSERT_EQ(p[k], static_cast<uint8_t>((k + received) & 0xff));
      ++received;
    }
  }
  EXPECT_EQ(received, kCount);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(Channel, OversizeLoanIsAnErrorNotAnAbort) {
  ASSERT_TRUE(RuntimeInitialized());
  auto pub = Publisher::Create({"test", "big"}, ChannelOptions{1 << 20});
  ASSERT_TRUE(pub.ok());
  auto r = (*pub)->Loan((1 << 20) + 1);
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(r.status().message().find("exceeds the largest shared-memory chunk"), std::string::npos);
}

TEST(Channel, MalformedChunkIsRejectedAndTheNextOneStillArrives) {
  auto pub = Publisher::Create({"test", "mixed"}, ChannelOptions{1 << 20});
  auto sub = Subscriber::Create({"test", "mixed"}, ChannelOptions{1 << 20});
  ASSERT_TRUE(pub.ok() && sub.ok());
  std::vector<uint8_t> garbage(64, 0xAB);
  ASSERT_TRUE((*pub)->PublishCopy(garbage).ok());
  std::vector<uint8_t> good(MessageSize<Ping>({0}));
  MessageWriter<Ping> w(good.data(), good.size());
  w.msg()->seq = 7;
  ASSERT_TRUE((*pub)->PublishCopy(good).ok());
  Received a = (*sub)->TryTake();
  ASSERT_TRUE(a);
  EXPECT_FALSE(ValidateHeader<Ping>(a.data(), a.size()).ok());
  Received b = (*sub)->TryTake();
  ASSERT_TRUE(b);
  ASSERT_TRUE(ValidateHeader<Ping>(b.data(), b.size()).ok());
  EXPECT_EQ(static_cast<const Ping*>(b.data())->seq, 7u);
}

TEST(Channel, WaiterWakesOnWakeAndTimesOut) {
  auto waiter = Waiter::Create();
  ASSERT_TRUE(waiter.ok());
  EXPECT_FALSE((*waiter)->Wait(std::chrono::milliseconds(20)));
  std::thread t([&] { (*waiter)->Wake(); });
  EXPECT_TRUE((*waiter)->Wait(std::chrono::seconds(10)));
  t.join();
}

TEST(Channel, RejectsBadTopics) {
  EXPECT_FALSE(Publisher::Create({"test", ""}, {}).ok());
  EXPECT_FALSE(Subscriber::Create({"bad ns", "x"}, {}).ok());
  TopicRemap remap;
  ASSERT_TRUE(remap.Add("requests", "other/requests2").ok());
  Topic t = remap.Apply({"default", "requests"});
  EXPECT_EQ(t.ns, "other");
  EXPECT_EQ(t.name, "requests2");
  EXPECT_EQ(remap.Apply({"default", "control"}).name, "control");
  EXPECT_FALSE(remap.Add("a b", "c").ok());
}

}  // namespace
}  // namespace radixserve::transport

// RouDi sends SIGTERM to every process still registered when it stops, so the tests, which
// register, run in a child process that exits (and deregisters) before this parent stops RouDi.
int main(int argc, char** argv) {
  return radixserve::transport::RunTestsWithOwnRouDi(argc, argv, "radixserve_channel_test_roudi.toml", 1 << 20);
}
