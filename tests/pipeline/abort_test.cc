// A client that hangs up aborts its request: the scheduler goes idle and every KV slot
// returns to the free pool or the prefix cache, for streaming and non-streaming requests.
//
// The pipeline runs a generated model with a 4096-token context so that an ignore_eos
// request of ~4000 tokens is still running when its client disconnects.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/pipeline/http_client.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::pipeline_test {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr int kContext = 4096;
constexpr int kLongRequest = 4000;

const std::string& ModelPath() {
  static const std::string path =
      (fs::temp_directory_path() / ("radixserve_abort_test_" + std::to_string(::getpid()) + ".gguf")).string();
  return path;
}

// Writes the generated model before the pipeline starts (environments set up in registration order).
class ModelEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    std::string cmd = RadixserveBinary() + " gen-model --size tiny --context " + std::to_string(kContext) + " -o " +
                      ModelPath() + " > /dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  void TearDown() override { fs::remove(ModelPath()); }
};

::testing::Environment* const g_model_env = ::testing::AddGlobalTestEnvironment(new ModelEnvironment);

PipelineOptions Options() {
  PipelineOptions o;
  o.model = ModelPath();
  o.kv_slots = 8192;
  return o;
}
PipelineEnvironment* const g_env = RegisterPipeline(Options());

json LongRequest(bool stream) {
  return {{"prompt", "The quick brown fox jumps over the lazy dog."},
          {"max_tokens", kLongRequest},
          {"temperature", 0},
          {"ignore_eos", true},
          {"stream", stream}};
}

int64_t Int(const json& stats, const char* key) {
  return stats.contains(key) && stats[key].is_number() ? stats[key].get<int64_t>() : -1;
}

bool Idle(const json& s) {
  return Int(s, "num_running_reqs") == 0 && Int(s, "num_queue_reqs") == 0 && Int(s, "kv_protected") == 0 &&
         Int(s, "kv_available") + Int(s, "kv_evictable") == Int(s, "kv_total") && Int(s, "kv_total") > 0;
}

// Waits (as a failure guard) until the scheduler is idle with all KV back; returns the last stats.
json WaitIdle(int port) {
  json stats;
  WaitFor([&] { return Idle(stats = SchedulerStats(port)); }, std::chrono::seconds(20));
  return stats;
}

void ExpectValidRequestSucceeds(int port) {
  HttpReply r = PostJson(port, "/v1/completions", {{"prompt", "Hello"}, {"max_tokens", 8}, {"temperature", 0}});
  EXPECT_EQ(r.status, 200) << Describe(r);
}

TEST(Abort, StreamingClientThatHangsUpAbortsItsRequest) {
  const int port = g_env->port();
  json before = WaitIdle(port);
  ASSERT_TRUE(Idle(before)) << before.dump();
  int events = 0;
  HttpReply r = PostStream(port, "/v1/completions", LongRequest(true), [&](std::string_view piece) {
    for (size_t p = piece.find("data:"); p != std::string_view::npos; p = piece.find("data:", p + 1)) ++events;
    return events < 3;  // a few tokens, then hang up
  });
  EXPECT_EQ(r.status, 200);
  EXPECT_GE(events, 3) << Describe(r);
  json after = WaitIdle(port);
  EXPECT_TRUE(Idle(after)) << "the scheduler did not go idle with all KV back: " << after.dump();
  EXPECT_EQ(Int(after, "aborted"), Int(before, "aborted") + 1) << after.dump();
  EXPECT_EQ(Int(after, "finished"), Int(before, "finished")) << "it ran to the end instead: " << after.dump();
  ExpectValidRequestSucceeds(port);
}

TEST(Abort, NonStreamingClientThatHangsUpAbortsItsRequest) {
  const int port = g_env->port();
  json before = WaitIdle(port);
  ASSERT_TRUE(Idle(before)) << before.dump();

  // A raw socket: send the request, wait until the scheduler runs it, close without reading.
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  std::string body = LongRequest(false).dump();
  std::string req = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  json running;
  bool started = WaitFor([&] { return Int(running = SchedulerStats(port), "num_running_reqs") == 1; },
                         std::chrono::seconds(20));
  ::close(fd);
  ASSERT_TRUE(started) << "the request never ran: " << running.dump();

  json after = WaitIdle(port);
  EXPECT_TRUE(Idle(after)) << "the scheduler did not go idle with all KV back: " << after.dump();
  EXPECT_EQ(Int(after, "aborted"), Int(before, "aborted") + 1) << after.dump();
  EXPECT_EQ(Int(after, "finished"), Int(before, "finished")) << "it ran to the end instead: " << after.dump();
  ExpectValidRequestSucceeds(port);
}

double ApiMetric(int port, const std::string& name) { return MetricValue(Get(port, "/metrics").body, name); }

// A client that hangs up while the server compiles its grammar (a pattern of some 40 ms to
// compile, sent on a raw socket closed at once): the api compiles it, submits it, finds the
// client gone and aborts it; the worker, compiling it at its first step, ends it there. The
// request ends as aborted (never finished), every KV slot comes back, the server serves on.
TEST(Abort, ClientThatHangsUpWhileItsGrammarCompilesLeavesNothingBehind) {
  const int port = g_env->port();
  json before = WaitIdle(port);
  ASSERT_TRUE(Idle(before)) << before.dump();
  const double aborted_before = ApiMetric(port, "radixserve_requests_aborted_total");
  ASSERT_GE(aborted_before, 0);
  // Any answer ends only after 12 letters past the last '-', up to 2000 characters: left alone
  // it would run for seconds.
  const json schema = {{"type", "string"}, {"pattern", "^([a-z]+-)*[a-z]{12}$"}, {"maxLength", 2000}};
  const json format = {{"type", "json_schema"}, {"json_schema", {{"name", "n"}, {"schema", schema}}}};
  const std::string body =
      json{{"prompt", "Name:"}, {"max_tokens", kLongRequest}, {"temperature", 1}, {"seed", 7}, {"response_format", format}}
          .dump();
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  const std::string req = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                          "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  ::close(fd);

  double aborted = aborted_before;
  EXPECT_TRUE(WaitFor([&] { return (aborted = ApiMetric(port, "radixserve_requests_aborted_total")) > aborted_before; },
                      std::chrono::seconds(20)))
      << "the request never ended as aborted";
  EXPECT_EQ(aborted, aborted_before + 1);
  json after = WaitIdle(port);
  EXPECT_TRUE(Idle(after)) << "the scheduler did not go idle with all KV back: " << after.dump();
  EXPECT_EQ(Int(after, "finished"), Int(before, "finished")) << "it ran to the end instead: " << after.dump();
  EXPECT_EQ(ApiMetric(port, "radixserve_requests_in_flight"), 0);
  ExpectValidRequestSucceeds(port);
  // The same grammar from a client that stays: it compiles and answers.
  HttpReply r = PostJson(port, "/v1/completions", {{"prompt", "Name:"}, {"max_tokens", 8}, {"response_format", format}});
  EXPECT_EQ(r.status, 200) << Describe(r);
}

}  // namespace
}  // namespace radixserve::pipeline_test
