// Garbage, truncated and oversized-claim messages published on the pipeline's own topics are
// dropped by the nodes: the pipeline keeps serving and the scheduler counts what it dropped.
//
// The publisher is a child process of the test registered with RouDi as "pipeline_test":
// RouDi sends SIGTERM to every process still registered when it shuts down, so the test
// process itself stays out of iceoryx and the child deregisters (exits) before the teardown.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "tests/pipeline/http_client.h"
#include "tests/pipeline/pipeline_fixture.h"
#include "transport/channel.h"
#include "transport/messages.h"
#include "transport/topic.h"

namespace radixserve::pipeline_test {
namespace {

using nlohmann::json;
using transport::ArrayRef;
using transport::MessageHeader;
using Bytes = std::vector<uint8_t>;

PipelineEnvironment* const g_env = RegisterPipeline({});

// A message of type M with every array empty, as MessageWriter lays it out.
template <typename M>
Bytes EmptyMessage() {
  Bytes b(transport::AlignUp(sizeof(M)));
  transport::MessageWriter<M> w(b.data(), b.size());
  return b;
}

MessageHeader* HeaderOf(Bytes& b) { return reinterpret_cast<MessageHeader*>(b.data()); }

// Invalid variants of M: each must fail M's validator. `array` is one of M's ArrayRefs.
template <typename M>
std::vector<Bytes> BadVariants(ArrayRef M::*array) {
  std::vector<Bytes> out;
  Bytes truncated = EmptyMessage<M>();  // the fixed part cut in half
  truncated.resize(sizeof(M) / 2);
  out.push_back(truncated);
  Bytes claims_more = EmptyMessage<M>();  // says 1 GiB follow, sends none of it
  HeaderOf(claims_more)->total_size = 1u << 30;
  out.push_back(claims_more);
  Bytes array_outside = EmptyMessage<M>();  // an array that runs past the end of the message
  reinterpret_cast<M*>(array_outside.data())->*array = {static_cast<uint32_t>(array_outside.size()), 1000};
  out.push_back(array_outside);
  Bytes array_too_long = EmptyMessage<M>();  // an element count over every limit
  reinterpret_cast<M*>(array_too_long.data())->*array = {static_cast<uint32_t>(array_too_long.size()), 0xFFFFFFFFu};
  out.push_back(array_too_long);
  Bytes array_before_body = EmptyMessage<M>();  // an array that overlaps the fixed part
  reinterpret_cast<M*>(array_before_body.data())->*array = {0, 1};
  out.push_back(array_before_body);
  Bytes old_layout = EmptyMessage<M>();
  HeaderOf(old_layout)->layout_version = M::kLayoutVersion + 7;
  out.push_back(old_layout);
  Bytes bad_fixed_size = EmptyMessage<M>();
  HeaderOf(bad_fixed_size)->fixed_size = sizeof(M) - 8;
  out.push_back(bad_fixed_size);
  Bytes bad_magic = EmptyMessage<M>();
  HeaderOf(bad_magic)->magic ^= 0xFFu;
  out.push_back(bad_magic);
  return out;
}

// Bytes that are not a message at all.
std::vector<Bytes> Garbage() {
  std::mt19937 rng(42);
  std::vector<Bytes> out;
  for (size_t n : {size_t(1), size_t(3), size_t(15), size_t(64), size_t(4096)}) {
    Bytes b(n);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    out.push_back(b);
  }
  return out;
}

std::vector<Bytes> Concat(std::vector<Bytes> a, const std::vector<Bytes>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct TopicCase {
  const char* topic;
  std::vector<Bytes> messages;
  bool (*invalid)(const Bytes&);  // the receiving node's verdict on one message
};

std::vector<TopicCase> Cases() {
  using namespace transport;
  auto wrong_kind = EmptyMessage<NodeStatusMsg>();  // a valid message of a kind no one expects here
  std::vector<Bytes> abort_variants = {EmptyMessage<AbortRequestMsg>()};
  abort_variants[0].resize(sizeof(AbortRequestMsg) - 4);  // a truncated abort
  return {
      {topics::kRequests,
       Concat(Concat(Concat(BadVariants<TokenizedRequestMsg>(&TokenizedRequestMsg::input_ids), Garbage()),
                     abort_variants),
              {wrong_kind}),
       [](const Bytes& b) {
         return !ValidateTokenizedRequest(b.data(), b.size()).ok() && !ValidateAbortRequest(b.data(), b.size()).ok();
       }},
      {topics::kForwardBatch, Concat(BadVariants<ForwardBatchMsg>(&ForwardBatchMsg::reqs), Garbage()),
       [](const Bytes& b) { return !ValidateForwardBatch(b.data(), b.size()).ok(); }},
      {topics::kForwardResult, Concat(BadVariants<ForwardResultMsg>(&ForwardResultMsg::next_token_ids), Garbage()),
       [](const Bytes& b) { return !ValidateForwardResult(b.data(), b.size()).ok(); }},
      {topics::kTokenIdOut, Concat(BadVariants<BatchTokenIdOutMsg>(&BatchTokenIdOutMsg::entries), Garbage()),
       [](const Bytes& b) { return !ValidateBatchTokenIdOut(b.data(), b.size()).ok(); }},
      {topics::kStrOut, Concat(BadVariants<BatchStrOutMsg>(&BatchStrOutMsg::entries), Garbage()),
       [](const Bytes& b) { return !ValidateBatchStrOut(b.data(), b.size()).ok(); }},
  };
}

// The child: register, publish everything, exit (which deregisters). Exit code 0 on success.
[[noreturn]] void PublishAllAndExit() {
  auto fail = [](const std::string& why) {
    std::fprintf(stderr, "publisher child: %s\n", why.c_str());
    std::fflush(stderr);
    std::exit(1);
  };
  if (Status s = transport::InitRuntime("pipeline_test"); !s.ok()) fail(s.ToString());
  std::vector<TopicCase> cases = Cases();
  std::vector<std::unique_ptr<transport::Publisher>> pubs;
  for (const auto& c : cases) {
    auto p = transport::Publisher::Create({"default", c.topic}, transport::ChannelOptions{});
    if (!p.ok()) fail(p.status().ToString());
    pubs.push_back(std::move(*p));
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    bool connected = WaitFor([&] { return pubs[i]->HasSubscribers(); }, std::chrono::seconds(20));
    if (!connected) fail(std::string("no subscriber on ") + cases[i].topic);
    for (const Bytes& m : cases[i].messages)
      if (Status s = pubs[i]->PublishCopy(m); !s.ok()) fail(std::string(cases[i].topic) + ": " + s.ToString());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // subscribers take before this runtime goes
  pubs.clear();
  std::exit(0);
}

TEST(MalformedMessages, EveryVariantFailsValidation) {
  // Guards the test itself: nothing published below may look valid to its receiver.
  for (const auto& c : Cases()) {
    for (size_t i = 0; i < c.messages.size(); ++i) EXPECT_TRUE(c.invalid(c.messages[i])) << c.topic << " #" << i;
  }
}

TEST(MalformedMessages, NodesDropThemAndKeepServing) {
  const int port = g_env->port();
  json before = SchedulerStats(port);
  ASSERT_TRUE(before.contains("dropped_messages")) << before.dump();
  HttpReply reference = PostJson(port, "/v1/completions", {{"prompt", "Once upon a time"}, {"max_tokens", 16}, {"temperature", 0}});
  ASSERT_EQ(reference.status, 200) << Describe(reference);

  std::fflush(nullptr);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) PublishAllAndExit();
  int st = 0;
  bool exited = WaitFor([&] { return ::waitpid(child, &st, WNOHANG) == child; }, std::chrono::seconds(60));
  if (!exited) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &st, 0);
  }
  ASSERT_TRUE(exited) << "the publisher child hung";
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "the publisher child failed (status " << st << ")";

  size_t on_requests = 0;
  for (const auto& c : Cases())
    if (std::string(c.topic) == transport::topics::kRequests) on_requests = c.messages.size();
  const int64_t expected = before["dropped_messages"].get<int64_t>() + static_cast<int64_t>(on_requests);
  json after;
  WaitFor([&] { return (after = SchedulerStats(port)).value("dropped_messages", int64_t(0)) >= expected; },
          std::chrono::seconds(20));
  EXPECT_GE(after.value("dropped_messages", int64_t(0)), expected) << after.dump();
  EXPECT_EQ(after.value("num_running_reqs", -1), 0) << after.dump();

  // Still serving, with the same greedy answer, through all five topics.
  HttpReply again = PostJson(port, "/v1/completions", {{"prompt", "Once upon a time"}, {"max_tokens", 16}, {"temperature", 0}});
  ASSERT_EQ(again.status, 200) << Describe(again);
  EXPECT_EQ(again.json["choices"][0]["text"], reference.json["choices"][0]["text"]);
  HttpReply streamed = PostStream(port, "/v1/completions",
                                  {{"prompt", "Once upon a time"}, {"max_tokens", 16}, {"temperature", 0}, {"stream", true}},
                                  [](std::string_view) { return true; });
  EXPECT_EQ(streamed.status, 200) << Describe(streamed);
  EXPECT_EQ(Get(port, "/health").status, 200);
  for (const char* node : {"worker", "detokenizer", "scheduler", "api"})
    EXPECT_TRUE(g_env->pipeline().Alive(node)) << node << " died:\n" << g_env->pipeline().LogTails();
}

}  // namespace
}  // namespace radixserve::pipeline_test
