// Hostile requests against the real HttpServer (fake backend): oversized bodies and headers,
// 10^5-deep JSON, invalid UTF-8, out-of-range and non-finite numbers, thousands of stop strings,
// n and logprobs past the limits, wrong types everywhere. Each gets a precise 4xx naming the
// field, the server keeps serving, and its memory returns to its idle size. Also the overload
// answers: 503 with Retry-After from a refusing backend and at the connection limit.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/api/http_server.h"
#include "tests/api/fake_backend.h"
#include "tests/api/raw_client.h"

namespace radixserve::api {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// A fake backend that can refuse submissions as the api node does when its queue is full.
class OverloadableBackend : public testing::FakeBackend {
 public:
  std::atomic<bool> overloaded{false};
  Status Submit(const GenerateRequest& request, std::shared_ptr<ResponseSink> sink) override {
    if (overloaded) return Status::Unavailable("the server is overloaded: 1024 requests in flight");
    return FakeBackend::Submit(request, std::move(sink));
  }
};

// Sends raw bytes, then the end of input, and reads the whole response.
std::string RawExchange(int port, const std::string& bytes) {
  return testing::RawExchange(port, bytes, /*half_close=*/true);
}

int StatusOf(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0) return -1;
  return std::stoi(response.substr(9, 3));
}

size_t RssBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

class HostileRequestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpServerOptions options;
    options.port = 0;
    options.served_model_name = "fake-model";
    options.limits.max_body_bytes = 1 << 20;
    server_ = std::make_unique<HttpServer>(options, &backend_);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override { server_->Stop(); }

  // POST and expect `status` with an OpenAI error body naming `param` (when not empty).
  void ExpectError(const std::string& path, const std::string& body, int status, const std::string& param,
                   const std::string& message_part = "") {
    SCOPED_TRACE(path + " " + body.substr(0, 120));
    httplib::Client cli("127.0.0.1", server_->port());
    cli.set_read_timeout(30, 0);
    auto res = cli.Post(path.c_str(), body, "application/json");
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->status, status) << res->body;
    json j = json::parse(res->body, nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("error")) << res->body;
    EXPECT_EQ(j["error"]["code"], status);
    if (!param.empty()) {
      EXPECT_EQ(j["error"]["param"], param) << res->body;
    }
    if (!message_part.empty()) {
      EXPECT_THAT(j["error"]["message"].get<std::string>(), HasSubstr(message_part));
    }
  }
  // The server still answers a normal request.
  void ExpectServing() {
    httplib::Client cli("127.0.0.1", server_->port());
    cli.set_read_timeout(30, 0);
    auto res = cli.Post("/v1/completions", R"({"prompt": "hi", "max_tokens": 2})", "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
  }

  OverloadableBackend backend_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HostileRequestTest, BodyOverTheLimitIs413WithoutReadingIt) {
  // Declared size over the limit: refused from the headers alone.
  std::string head = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Content-Length: 1073741824\r\n\r\n";
  std::string response = RawExchange(server_->port(), head);
  EXPECT_EQ(StatusOf(response), 413) << response;
  // Sent in full: the same.
  std::string big(2 << 20, 'a');
  std::string full = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(big.size()) +
                     "\r\n\r\n" + big;
  EXPECT_EQ(StatusOf(RawExchange(server_->port(), full)), 413);
  ExpectServing();
}

TEST_F(HostileRequestTest, HeaderLimitsAndMalformedRequests) {
  std::string huge_header = "GET /health HTTP/1.1\r\nX-Big: " + std::string(100 * 1024, 'h') + "\r\n\r\n";
  EXPECT_EQ(StatusOf(RawExchange(server_->port(), huge_header)), 431);
  EXPECT_EQ(StatusOf(RawExchange(server_->port(), "NONSENSE\r\n\r\n")), 400);
  EXPECT_EQ(StatusOf(RawExchange(server_->port(), "GET / HTTP/2.0\r\n\r\n")), 400);
  EXPECT_EQ(StatusOf(RawExchange(server_->port(), "GET / HTTP/1.1\r\nNoColonHere\r\n\r\n")), 400);
  EXPECT_EQ(StatusOf(RawExchange(server_->port(), "POST /generate HTTP/1.1\r\nContent-Length: -1\r\n\r\n")), 400);
  EXPECT_EQ(StatusOf(RawExchange(server_->port(),
                                 "POST /generate HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n")),
            400);
  EXPECT_EQ(StatusOf(RawExchange(server_->port(),
                                 "POST /generate HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")),
            501);
  ExpectServing();
}

TEST_F(HostileRequestTest, DeeplyNestedJsonIsRefusedWithoutOverflowingTheStack) {
  const int kLevels = 100000;
  for (const char* path : {"/v1/completions", "/v1/chat/completions", "/generate", "/tokenize", "/detokenize"}) {
    std::string arrays = std::string(kLevels, '[') + std::string(kLevels, ']');
    ExpectError(path, arrays, 400, "", "deeper than");
    // Nested inside a field, where a copy or an error message would recurse.
    std::string in_field = R"({"prompt": )" + arrays + "}";
    ExpectError(path, in_field, 400, "", "deeper than");
    std::string objects;
    for (int i = 0; i < kLevels; ++i) objects += R"({"a":)";
    objects += "1" + std::string(kLevels, '}');
    ExpectError(path, R"({"messages": [{"role": "user", "content": )" + objects + "}]}", 400, "", "deeper than");
  }
  // Brackets inside strings do not count.
  ExpectServing();
  httplib::Client cli("127.0.0.1", server_->port());
  auto res = cli.Post("/v1/completions", R"({"prompt": ")" + std::string(5000, '[') + R"(", "max_tokens": 1})",
                      "application/json");
  ASSERT_TRUE(res);
  EXPECT_NE(res->status, 500);
}

TEST_F(HostileRequestTest, InvalidUtf8IsRefused) {
  ExpectError("/v1/completions", "{\"prompt\": \"ab\xff\xfe\", \"max_tokens\": 1}", 400, "", "not valid JSON");
  ExpectError("/v1/completions", "{\"prompt\": \"a\", \"stop\": [\"\xc3\"]}", 400, "", "not valid JSON");
  ExpectError("/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", \"content\": \"\xed\xa0\x80\"}]}", 400, "",
              "not valid JSON");
  // A lone surrogate escape is not a character either.
  ExpectError("/v1/completions", R"({"prompt": "\ud800", "max_tokens": 1})", 400, "", "not valid JSON");
  ExpectServing();
}

TEST_F(HostileRequestTest, NumbersOutOfRangeNegativeAndNonFinite) {
  const std::string c = "/v1/completions";
  ExpectError(c, R"({"prompt": "a", "max_tokens": -1})", 400, "max_tokens");
  ExpectError(c, R"({"prompt": "a", "max_tokens": 0})", 400, "max_tokens");
  ExpectError(c, R"({"prompt": "a", "max_tokens": 2147483648})", 400, "max_tokens");
  ExpectError(c, R"({"prompt": "a", "max_tokens": 1.5})", 400, "max_tokens");
  ExpectError(c, R"({"prompt": "a", "max_tokens": 1e999})", 400, "");
  ExpectError(c, R"({"prompt": "a", "temperature": 1e999})", 400, "");
  ExpectError(c, R"({"prompt": "a", "temperature": -0.5})", 400, "temperature");
  ExpectError(c, R"({"prompt": "a", "temperature": NaN})", 400, "", "not valid JSON");
  ExpectError(c, R"({"prompt": "a", "top_p": 0})", 400, "top_p");
  ExpectError(c, R"({"prompt": "a", "top_k": 0})", 400, "top_k");
  ExpectError(c, R"({"prompt": "a", "frequency_penalty": -1e308})", 400, "frequency_penalty");
  ExpectError(c, R"({"prompt": "a", "seed": 1e30})", 400, "seed");
  ExpectError(c, R"({"prompt": [-5]})", 400, "prompt[0]");
  ExpectError(c, R"({"prompt": [99999999999]})", 400, "prompt[0]");
  ExpectError("/detokenize", R"({"tokens": [1, -2]})", 400, "tokens[1]");
  ExpectServing();
}

TEST_F(HostileRequestTest, CountsPastTheLimits) {
  const std::string c = "/v1/completions";
  std::string stops = "[";
  for (int i = 0; i < 5000; ++i) stops += (i ? ",\"s" : "\"s") + std::to_string(i) + "\"";
  stops += "]";
  ExpectError(c, R"({"prompt": "a", "stop": )" + stops + "}", 400, "stop");
  ExpectError(c, R"({"prompt": "a", "stop": [")" + std::string(5000, 'x') + R"("]})", 400, "stop[0]");
  ExpectError(c, R"({"prompt": "a", "n": 5000})", 400, "n");
  ExpectError(c, R"({"prompt": "a", "n": 0})", 400, "n");
  ExpectError(c, R"({"prompt": "a", "logprobs": 1000})", 400, "logprobs");
  ExpectError("/v1/chat/completions",
              R"({"messages": [{"role": "user", "content": "a"}], "logprobs": true, "top_logprobs": 1000})", 400,
              "top_logprobs");
  ExpectError("/generate", R"({"text": "a", "top_logprobs_num": 21, "return_logprob": true})", 400,
              "top_logprobs_num");
  std::string ids = "[";
  for (int i = 0; i < 5000; ++i) ids += (i ? ",1" : "1");
  ids += "]";
  ExpectError(c, R"({"prompt": "a", "stop_token_ids": )" + ids + "}", 400, "stop_token_ids");
  ExpectError(c, R"({"prompt": )" + ids + "}", 400, "prompt", "served context");
  ExpectServing();
}

TEST_F(HostileRequestTest, WrongTypesEverywhere) {
  const std::string c = "/v1/completions";
  ExpectError(c, "[]", 400, "", "must be a JSON object");
  ExpectError(c, "\"prompt\"", 400, "", "must be a JSON object");
  ExpectError(c, "", 400, "", "not valid JSON");
  ExpectError(c, R"({"prompt": {"a": 1}})", 400, "prompt");
  ExpectError(c, R"({"prompt": "a", "max_tokens": "10"})", 400, "max_tokens");
  ExpectError(c, R"({"prompt": "a", "temperature": "hot"})", 400, "temperature");
  ExpectError(c, R"({"prompt": "a", "stream": "yes"})", 400, "stream");
  ExpectError(c, R"({"prompt": "a", "stop": 5})", 400, "stop");
  ExpectError(c, R"({"prompt": "a", "stop": [1]})", 400, "stop[0]");
  ExpectError(c, R"({"prompt": "a", "n": true})", 400, "n");
  ExpectError(c, R"({"prompt": "a", "model": 7})", 400, "model");
  ExpectError("/v1/chat/completions", R"({"messages": "hi"})", 400, "messages");
  ExpectError("/v1/chat/completions", R"({"messages": [5]})", 400, "messages[0]");
  ExpectError("/v1/chat/completions", R"({"messages": [{"role": 1, "content": "a"}]})", 400, "messages[0].role");
  ExpectError("/generate", R"({"text": "a", "sampling_params": []})", 400, "sampling_params");
  ExpectError("/generate", R"({"input_ids": "abc"})", 400, "input_ids");
  ExpectError("/tokenize", R"({"text": 5})", 400, "text");
  ExpectError("/detokenize", R"({"tokens": "abc"})", 400, "tokens");
  ExpectServing();
}

TEST_F(HostileRequestTest, MemoryReturnsToIdleAfterManyHostileRequests) {
  auto hostile_round = [&] {
    httplib::Client cli("127.0.0.1", server_->port());
    cli.set_read_timeout(30, 0);
    const std::string nested = std::string(20000, '[') + std::string(20000, ']');
    const std::string big_prompt = R"({"prompt": ")" + std::string(200000, 'x') + R"(", "max_tokens": 1})";
    std::string stops = "[";
    for (int i = 0; i < 2000; ++i) stops += (i ? ",\"s" : "\"s") + std::to_string(i) + "\"";
    stops += "]";
    for (int i = 0; i < 20; ++i) {
      EXPECT_EQ(cli.Post("/v1/completions", nested, "application/json")->status, 400);
      EXPECT_EQ(cli.Post("/v1/completions", big_prompt, "application/json")->status, 400);  // longer than context
      EXPECT_EQ(cli.Post("/v1/completions", R"({"prompt": "a", "stop": )" + stops + "}", "application/json")->status,
                400);
      EXPECT_EQ(cli.Post("/generate", "{\"text\": \"\xff\"}", "application/json")->status, 400);
      EXPECT_EQ(cli.Post("/v1/completions", R"({"prompt": "hi", "max_tokens": 2})", "application/json")->status, 200);
    }
  };
  // Warm up: thread stacks, malloc arenas and buffers reach their steady size.
  for (int i = 0; i < 3; ++i) hostile_round();
  const size_t before = RssBytes();
  for (int i = 0; i < 15; ++i) hostile_round();
  const size_t after = RssBytes();
  std::printf("RSS before %.1f MiB, after 15 x 100 more hostile requests %.1f MiB\n", before / 1048576.0,
              after / 1048576.0);
  EXPECT_LT(after, before + (16u << 20)) << "RSS grew from " << before << " to " << after << " bytes";
  ExpectServing();
}

TEST_F(HostileRequestTest, OverloadedBackendGives503WithRetryAfter) {
  backend_.overloaded = true;
  httplib::Client cli("127.0.0.1", server_->port());
  auto res = cli.Post("/v1/completions", R"({"prompt": "hi", "max_tokens": 2})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->get_header_value("Retry-After"), "1");
  EXPECT_THAT(res->body, HasSubstr("overloaded"));
  backend_.overloaded = false;
  ExpectServing();
}

TEST(HostileConnections, ConnectionLimitGives503WithRetryAfterAndAWholeBody) {
  testing::FakeBackend backend;
  HttpServerOptions options;
  options.port = 0;
  options.max_connections = 2;
  HttpServer server(options, &backend);
  ASSERT_TRUE(server.Start().ok());
  // Two idle keep-alive connections take both places.
  int a = testing::ConnectLoopback(server.port());
  int b = testing::ConnectLoopback(server.port());
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  // Wait until both are registered (the listener accepts asynchronously), then a third is refused.
  std::string response;
  for (int i = 0; i < 200 && StatusOf(response) != 503; ++i) {
    response = RawExchange(server.port(), "GET /health HTTP/1.1\r\n\r\n");
    if (StatusOf(response) != 503) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(StatusOf(response), 503) << response;
  EXPECT_THAT(response, HasSubstr("Retry-After: 1\r\n"));
  size_t body_at = response.find("\r\n\r\n");
  ASSERT_NE(body_at, std::string::npos);
  std::string body = response.substr(body_at + 4);
  EXPECT_THAT(response, HasSubstr("Content-Length: " + std::to_string(body.size()) + "\r\n"));
  EXPECT_TRUE(json::parse(body, nullptr, false).is_object()) << body;
  close(a);
  close(b);
  server.Stop();
}

}  // namespace
}  // namespace radixserve::api
