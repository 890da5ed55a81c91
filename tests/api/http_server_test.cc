// HttpServer against a deterministic fake backend: non-stream and stream responses for every
// endpoint, n = 2, errors that leave the server serving, API key, health, disconnect → Abort, and
// 256 concurrent streaming clients.
#include "core/api/http_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <atomic>
#include <thread>

#include "tests/api/fake_backend.h"
#include "tests/api/raw_client.h"

namespace radixserve::api {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::FakeBackend;

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(HttpServerOptions options = {}) {
    options.port = 0;
    if (options.served_model_name == "default") options.served_model_name = "fake-model";
    server_ = std::make_unique<HttpServer>(options, &backend_);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  httplib::Client Client() {
    httplib::Client cli("127.0.0.1", server_->port());
    cli.set_read_timeout(60, 0);
    return cli;
  }
  // POST and return (status, body).
  std::pair<int, std::string> Post(const std::string& path, const std::string& body,
                                   const httplib::Headers& headers = {}) {
    httplib::Client cli = Client();
    auto res = cli.Post(path.c_str(), headers, body, "application/json");
    if (!res) return {-1, "no response: " + httplib::to_string(res.error())};
    return {res->status, res->body};
  }
  // The JSON payloads of an SSE body, and whether it ended with [DONE].
  static std::vector<json> Events(const std::string& body, bool* done) {
    std::vector<json> out;
    *done = false;
    size_t pos = 0;
    while (pos < body.size()) {
      size_t end = body.find("\n\n", pos);
      EXPECT_NE(end, std::string::npos) << "unterminated event in: " << body;
      if (end == std::string::npos) break;
      std::string event = body.substr(pos, end - pos);
      pos = end + 2;
      EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
      std::string payload = event.substr(6);
      if (payload == "[DONE]") {
        *done = true;
        EXPECT_EQ(pos, body.size()) << "data after [DONE]";
        continue;
      }
      out.push_back(json::parse(payload));
    }
    return out;
  }

  FakeBackend backend_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, CompletionNonStream) {
  StartServer();
  auto [status, body] = Post("/v1/completions", R"({"model": "fake-model", "prompt": "hi", "max_tokens": 3})");
  ASSERT_EQ(status, 200) << body;
  json j = json::parse(body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["model"], "fake-model");
  EXPECT_EQ(j["choices"][0]["text"], "abc");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 3);  // BOS + 2 bytes
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);
  EXPECT_EQ(j["usage"]["total_tokens"], 6);
  std::vector<GenerateRequest> sub = backend_.submitted();
  ASSERT_EQ(sub.size(), 1u);
  EXPECT_EQ(sub[0].input_ids, (std::vector<int32_t>{1, 'h' + 3, 'i' + 3}));
  EXPECT_EQ(j["id"], "cmpl-" + sub[0].rid);
  EXPECT_EQ(sub[0].rid.size(), 32u);  // generated when the client sends none
}

TEST_F(HttpServerTest, ChatNonStreamRendersTemplateAndReturnsLogprobs) {
  HttpServerOptions options;
  // The model's Jinja template (a Llama 3 style one), with the vocabulary's BOS.
  options.chat_template_text =
      "{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n"
      "{{ m.content }}<|eot_id|>{% endfor %}{% if add_generation_prompt %}"
      "<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}";
  options.chat_template_options.bos_token = "<|begin_of_text|>";
  backend_.context_length = 1024;
  StartServer(options);
  auto [status, body] = Post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "q"}],
      "max_tokens": 2, "logprobs": true, "top_logprobs": 2, "rid": "chat1"})");
  ASSERT_EQ(status, 200) << body;
  json j = json::parse(body);
  EXPECT_EQ(j["id"], "chatcmpl-chat1");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "ab");
  EXPECT_EQ(j["choices"][0]["logprobs"]["content"].size(), 2u);
  EXPECT_EQ(j["choices"][0]["logprobs"]["content"][0]["top_logprobs"].size(), 2u);
  std::vector<GenerateRequest> sub = backend_.submitted();
  ASSERT_EQ(sub.size(), 1u);
  const std::string rendered =
      "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nq<|eot_id|>"
      "<|start_header_id|>assistant<|end_header_id|>\n\n";
  EXPECT_EQ(sub[0].text, rendered);
  ASSERT_EQ(sub[0].input_ids.size(), rendered.size());  // no extra BOS: the template carries it
  EXPECT_EQ(sub[0].input_ids[0], '<' + 3);
}

// A template the Jinja engine cannot use: chat requests are refused saying why and where;
// completions still work.
TEST_F(HttpServerTest, UnusableChatTemplateIsNamedInTheChatError) {
  HttpServerOptions options;
  options.chat_template_text = "{% for m in messages %}\n{% include 'turn.jinja' %}{% endfor %}";
  StartServer(options);
  auto [status, body] = Post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "q"}],
      "max_tokens": 2})");
  EXPECT_EQ(status, 400) << body;
  EXPECT_NE(body.find("the chat template (the GGUF's tokenizer.chat_template) cannot be used"), std::string::npos)
      << body;
  EXPECT_NE(body.find("line 2"), std::string::npos) << body;
  EXPECT_NE(body.find("include"), std::string::npos) << body;
  auto [cstatus, cbody] = Post("/v1/completions", R"({"prompt": "hi", "max_tokens": 2})");
  EXPECT_EQ(cstatus, 200) << cbody;
}

TEST_F(HttpServerTest, ChatStreamWithUsage) {
  StartServer();
  auto [status, body] = Post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "q"}],
      "max_tokens": 4, "stream": true, "stream_options": {"include_usage": true}})");
  ASSERT_EQ(status, 200) << body;
  bool done;
  std::vector<json> events = Events(body, &done);
  EXPECT_TRUE(done);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[0]["choices"][0]["delta"]["role"], "assistant");
  std::string text;
  int finishes = 0;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    const json& c = events[i]["choices"][0];
    EXPECT_EQ(events[i]["object"], "chat.completion.chunk");
    EXPECT_TRUE(events[i]["usage"].is_null());
    if (c["delta"].contains("content")) text += c["delta"]["content"].get<std::string>();
    if (!c["finish_reason"].is_null()) {
      ++finishes;
      EXPECT_EQ(c["finish_reason"], "length");
      EXPECT_EQ(i + 2, events.size()) << "finish_reason must be on the choice's last chunk";
    }
  }
  EXPECT_EQ(text, "abcd");
  EXPECT_EQ(finishes, 1);
  const json& usage = events.back();
  EXPECT_EQ(usage["choices"], json::array());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 4);
}

TEST_F(HttpServerTest, CompletionStreamWithTwoChoices) {
  StartServer();
  auto [status, body] = Post("/v1/completions",
                             R"({"prompt": "p", "max_tokens": 5, "n": 2, "seed": 7, "stream": true, "rid": "two"})");
  ASSERT_EQ(status, 200) << body;
  bool done;
  std::vector<json> events = Events(body, &done);
  EXPECT_TRUE(done);
  std::string text[2];
  int finishes[2] = {0, 0};
  for (const json& e : events) {
    EXPECT_EQ(e["id"], "cmpl-two");
    int index = e["choices"][0]["index"];
    ASSERT_TRUE(index == 0 || index == 1);
    text[index] += e["choices"][0]["text"].get<std::string>();
    if (!e["choices"][0]["finish_reason"].is_null()) ++finishes[index];
  }
  EXPECT_EQ(text[0], "abcde");
  EXPECT_EQ(text[1], "abcde");
  EXPECT_EQ(finishes[0], 1);
  EXPECT_EQ(finishes[1], 1);
  std::vector<GenerateRequest> sub = backend_.submitted();
  ASSERT_EQ(sub.size(), 2u);
  EXPECT_EQ(sub[0].rid, "two-0");
  EXPECT_EQ(sub[1].rid, "two-1");
  EXPECT_EQ(sub[0].n, 1);
  EXPECT_EQ(sub[0].spec.sampling.seed, 7u);
  EXPECT_EQ(sub[1].spec.sampling.seed, 8u);  // distinct seeds so the choices can differ
}

TEST_F(HttpServerTest, CompletionNonStreamTwoChoices) {
  StartServer();
  auto [status, body] = Post("/v1/completions", R"({"prompt": "p", "max_tokens": 2, "n": 2})");
  ASSERT_EQ(status, 200) << body;
  json j = json::parse(body);
  ASSERT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["choices"][1]["index"], 1);
  EXPECT_EQ(j["choices"][1]["text"], "ab");
  EXPECT_EQ(j["usage"]["completion_tokens"], 4);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 2);
}

TEST_F(HttpServerTest, NativeGenerateStreamAndNonStream) {
  StartServer();
  auto [status, body] = Post("/generate", R"({"input_ids": [5, 6], "sampling_params": {"max_new_tokens": 3},
      "rid": "nat"})");
  ASSERT_EQ(status, 200) << body;
  json j = json::parse(body);
  EXPECT_EQ(j["text"], "abc");
  EXPECT_EQ(j["output_ids"], json({100, 101, 102}));
  EXPECT_EQ(j["meta_info"]["id"], "nat");
  EXPECT_EQ(j["meta_info"]["finish_reason"], json({{"type", "length"}, {"length", 3}}));
  EXPECT_EQ(j["meta_info"]["prompt_tokens"], 2);

  auto [s2, b2] = Post("/generate", R"({"text": "xy", "stream": true, "sampling_params": {"max_new_tokens": 3}})");
  ASSERT_EQ(s2, 200) << b2;
  bool done;
  std::vector<json> events = Events(b2, &done);
  EXPECT_TRUE(done);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["text"], "abc");  // cumulative
  EXPECT_EQ(events.back()["meta_info"]["finish_reason"]["type"], "length");
  for (size_t i = 1; i < events.size(); ++i)
    EXPECT_EQ(events[i]["text"].get<std::string>().rfind(events[i - 1]["text"].get<std::string>(), 0), 0u);
}

TEST_F(HttpServerTest, ErrorsKeepTheServerServing) {
  backend_.context_length = 16;
  StartServer();
  httplib::Client cli = Client();  // one keep-alive connection through all the errors
  struct Case {
    const char* path;
    const char* body;
    int status;
    const char* message;
  };
  const Case cases[] = {
      {"/v1/completions", "{oops", 400, "not valid JSON"},
      {"/v1/completions", R"({"prompt": "x", "model": "gpt-4"})", 400, "unknown model \"gpt-4\""},
      {"/v1/completions", R"({"prompt": "x", "n": 99})", 400, "n: must be in [1, 16], got 99"},
      {"/v1/completions", R"({"prompt": "this prompt is far too long"})", 400,
       "prompt: the prompt has 28 tokens, but the served context is 16"},
      {"/v1/chat/completions", R"({"messages": [{"role": "user", "content": "a long question here"}]})", 400,
       "messages: the prompt has"},
      {"/v1/completions", R"({"prompt": "FAIL"})", 400, "the fake backend refused this prompt"},
      {"/v1/nothing", "{}", 404, "no route for POST /v1/nothing"},
      {"/v1/models", "{}", 405, "POST is not allowed on /v1/models"},
      // Structured output and fields the server does not implement (response_format_test.cc has every case).
      {"/v1/chat/completions", R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]})",
       400, "tools[0].function: expected an object"},
      {"/v1/completions", R"({"prompt": "x", "guided_regex": "a", "regex": "b"})", 400,
       "regex: at most one structured-output constraint per request, got guided_regex and regex"},
      {"/v1/completions", R"j({"prompt": "x", "guided_regex": "a(?=b)"})j", 400, "guided_regex: "},
      {"/generate", R"({"text": "x", "sampling_params": {"ebnf": "root ::= missing"}})", 400, "sampling_params.ebnf: "},
  };
  for (const Case& c : cases) {
    auto res = cli.Post(c.path, c.body, "application/json");
    ASSERT_TRUE(res) << c.path << " " << c.body;
    EXPECT_EQ(res->status, c.status) << c.body << " → " << res->body;
    json j = json::parse(res->body);
    EXPECT_THAT(j["error"]["message"].get<std::string>(), HasSubstr(c.message)) << c.body;
    EXPECT_EQ(j["error"]["code"], c.status);
    const std::string message = c.message;
    if (c.status == 400 && message.find(": ") != std::string::npos) {  // a field's error names it in param
      EXPECT_EQ(j["error"]["param"], message.substr(0, message.find(": "))) << c.body;
    }
    auto ok = cli.Post("/v1/completions", R"({"prompt": "ok", "max_tokens": 1})", "application/json");
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 200) << "after " << c.body;
  }
  // A failing backend submit maps to its status; the server keeps serving.
  backend_.set_reject_submits(true);
  auto busy = cli.Post("/v1/completions", R"({"prompt": "x"})", "application/json");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 429);
  backend_.set_reject_submits(false);
  // An abort inside a stream becomes an error event followed by [DONE].
  auto streamed = cli.Post("/v1/completions", R"({"prompt": "FAIL", "stream": true})", "application/json");
  ASSERT_TRUE(streamed);
  EXPECT_EQ(streamed->status, 200);
  bool done;
  std::vector<json> events = Events(streamed->body, &done);
  EXPECT_TRUE(done);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["error"]["code"], 400);
}

// The validated constraint travels with every choice's request to the backend.
TEST_F(HttpServerTest, StructuredOutputReachesTheBackend) {
  StartServer();
  auto [status, body] = Post("/v1/completions", R"({"prompt": "hi", "max_tokens": 2, "n": 2, "guided_regex": "[a-c]+"})");
  ASSERT_EQ(status, 200) << body;
  auto [status2, body2] = Post("/generate", R"({"text": "hi", "sampling_params": {"max_new_tokens": 2,
      "ebnf": "root ::= \"yes\" | \"no\""}, "stream": true})");
  ASSERT_EQ(status2, 200) << body2;
  std::vector<GenerateRequest> sub = backend_.submitted();
  ASSERT_EQ(sub.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(sub[i].spec.grammar.kind, grammar::GrammarKind::kRegex);
    EXPECT_EQ(sub[i].spec.grammar.text, "[a-c]+");
  }
  EXPECT_EQ(sub[2].spec.grammar.kind, grammar::GrammarKind::kGbnf);
  EXPECT_EQ(sub[2].spec.grammar.text, R"(root ::= "yes" | "no")");
}

TEST_F(HttpServerTest, ApiKey) {
  HttpServerOptions options;
  options.api_key = "sekrit";
  StartServer(options);
  const std::string body = R"({"prompt": "x", "max_tokens": 1})";
  auto [s1, b1] = Post("/v1/completions", body);
  EXPECT_EQ(s1, 401);
  EXPECT_EQ(json::parse(b1)["error"]["type"], "authentication_error");
  EXPECT_EQ(Post("/v1/completions", body, {{"Authorization", "Bearer wrong!"}}).first, 401);
  EXPECT_EQ(Post("/v1/completions", body, {{"Authorization", "Bearer sekrit"}}).first, 200);
  httplib::Client cli = Client();
  EXPECT_EQ(cli.Get("/health")->status, 200);  // exempt
  EXPECT_EQ(cli.Get("/v1/models")->status, 401);
  EXPECT_EQ(cli.Get("/v1/models", {{"Authorization", "Bearer sekrit"}})->status, 200);
}

// A tenant's key puts its requests in the tenant's cache namespace whatever the body says; the
// priority comes from the body, else X-Priority, else the default class.
TEST_F(HttpServerTest, TenantKeysSaltAndPriorityHeader) {
  HttpServerOptions options;
  options.api_key = "sekrit";
  options.tenant_keys = {{"key-a", "salt-a"}, {"key-b", "salt-b"}};
  StartServer(options);
  const std::string body = R"({"prompt": "x", "max_tokens": 1, "cache_salt": "mine"})";
  ASSERT_EQ(Post("/v1/completions", body, {{"Authorization", "Bearer key-a"}}).first, 200);
  ASSERT_EQ(Post("/v1/completions", body, {{"Authorization", "Bearer key-b"}, {"X-Priority", "bulk"}}).first, 200);
  ASSERT_EQ(Post("/v1/completions", body, {{"Authorization", "Bearer sekrit"}}).first, 200);
  ASSERT_EQ(Post("/v1/completions", R"({"prompt": "x", "max_tokens": 1, "priority": 5})",
                 {{"Authorization", "Bearer sekrit"}, {"X-Priority", "interactive"}})
                .first,
            200);
  EXPECT_EQ(Post("/v1/completions", body, {{"Authorization", "Bearer key-c"}}).first, 401);
  auto [status, err] = Post("/v1/completions", body, {{"Authorization", "Bearer key-a"}, {"X-Priority", "soon"}});
  EXPECT_EQ(status, 400);
  EXPECT_THAT(err, HasSubstr("X-Priority: priority must be interactive, default, bulk or an integer"));
  auto got = backend_.submitted();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].spec.cache_salt, "salt-a");
  EXPECT_EQ(got[0].spec.priority, InfoOf(PriorityClass::kDefault).priority);
  EXPECT_EQ(got[0].priority_class, PriorityClass::kDefault);
  EXPECT_EQ(got[1].spec.cache_salt, "salt-b");
  EXPECT_EQ(got[1].priority_class, PriorityClass::kBulk);
  EXPECT_EQ(got[2].spec.cache_salt, "mine");  // the operator's key: the body's salt stands
  EXPECT_EQ(got[3].spec.priority, 5);         // the body wins over the header
  EXPECT_EQ(got[3].priority_class, PriorityClass::kDefault);  // between bulk (0) and interactive (40)
}

TEST(TenantKeys, ParseAndErrorsThatDoNotRepeatTheSecret) {
  auto keys = ParseTenantKeys("k1=s1,k2=s2");
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ(keys->at("k2"), "s2");
  EXPECT_TRUE(ParseTenantKeys("")->empty());
  for (const char* bad : {"secretkey", "=salt", "k1=", "k1=s1,k1=s2"}) {
    auto r = ParseTenantKeys(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("tenant_keys: entry ")) << bad;
    EXPECT_EQ(r.status().message().find("secretkey"), std::string::npos);
    EXPECT_EQ(r.status().message().find("s2"), std::string::npos);
  }
}

// A class at its class_max_in_flight gets 429 with Retry-After; another class is still served.
TEST(HttpServerClassLimit, AFullClassIsRefusedTheOthersAreServed) {
  FakeBackend slow(std::chrono::milliseconds(200));  // a 50-token request stays in flight for 10 s
  HttpServerOptions options;
  options.port = 0;
  options.class_max_in_flight[static_cast<size_t>(PriorityClass::kBulk)] = 1;
  HttpServer server(options, &slow);
  ASSERT_TRUE(server.Start().ok());
  httplib::Client cli("127.0.0.1", server.port());
  cli.set_read_timeout(60, 0);
  std::thread first([&] {
    httplib::Client own("127.0.0.1", server.port());
    own.set_read_timeout(60, 0);
    own.Post("/v1/completions", R"({"prompt": "x", "max_tokens": 50, "priority": "bulk"})", "application/json");
  });
  for (int i = 0; i < 2000 && slow.active_count() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(slow.active_count(), 1);
  EXPECT_EQ(server.class_in_flight(PriorityClass::kBulk), 1);

  auto full = cli.Post("/v1/completions", R"({"prompt": "x", "max_tokens": 1, "priority": "bulk"})",
                       "application/json");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->status, 429);
  EXPECT_EQ(full->get_header_value("Retry-After"), "1");
  EXPECT_THAT(full->body, HasSubstr("the bulk class is full: 1 of its 1 requests in flight"));
  auto other = cli.Post("/v1/completions", R"({"prompt": "x", "max_tokens": 1, "priority": "interactive"})",
                        "application/json");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 200) << other->body;
  EXPECT_EQ(server.class_rejected()[static_cast<size_t>(PriorityClass::kBulk)], 1u);
  EXPECT_EQ(server.class_rejected()[static_cast<size_t>(PriorityClass::kInteractive)], 0u);
  server.Stop();  // aborts the first request
  first.join();
  EXPECT_EQ(server.class_in_flight(PriorityClass::kBulk), 0);
}

TEST_F(HttpServerTest, HealthFollowsBackendReadiness) {
  backend_.ready = false;
  StartServer();
  httplib::Client cli = Client();
  EXPECT_EQ(cli.Get("/health")->status, 503);
  EXPECT_EQ(cli.Post("/v1/completions", R"({"prompt": "x"})", "application/json")->status, 503);
  backend_.ready = true;
  EXPECT_EQ(cli.Get("/health")->status, 200);
}

TEST_F(HttpServerTest, ControlAndTokenEndpoints) {
  StartServer();
  httplib::Client cli = Client();
  json models = json::parse(cli.Get("/v1/models")->body);
  EXPECT_EQ(models["object"], "list");
  EXPECT_EQ(models["data"][0]["id"], "fake-model");
  EXPECT_EQ(models["data"][0]["max_model_len"], 64);
  EXPECT_EQ(json::parse(cli.Get("/get_server_info")->body)["model"], "fake");
  auto metrics = cli.Get("/metrics");
  EXPECT_EQ(metrics->status, 200);
  EXPECT_THAT(metrics->body, HasSubstr("radixserve_num_running_reqs"));
  EXPECT_EQ(cli.Post("/flush_cache", "", "application/json")->status, 200);
  EXPECT_EQ(backend_.flushes_.load(), 1);

  json tok = json::parse(cli.Post("/tokenize", R"({"text": "ab"})", "application/json")->body);
  EXPECT_EQ(tok["tokens"], json({1, 'a' + 3, 'b' + 3}));
  EXPECT_EQ(tok["count"], 3);
  json detok = json::parse(cli.Post("/detokenize", R"({"tokens": [1, 100, 101]})", "application/json")->body);
  EXPECT_EQ(detok["text"], "ab");
  auto bad = cli.Post("/detokenize", R"({"tokens": [100000]})", "application/json");
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("outside the vocabulary"));
}

TEST_F(HttpServerTest, StreamingClientDisconnectAbortsRequest) {
  StartServer();
  httplib::Client cli = Client();
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = R"({"prompt": "x", "max_tokens": 1000000, "stream": true, "rid": "gone"})";
  req.set_header("Content-Type", "application/json");
  size_t received = 0;
  req.content_receiver = [&](const char*, size_t n, uint64_t, uint64_t) {
    received += n;
    return false;  // hang up after the first bytes
  };
  cli.send(req);
  EXPECT_GT(received, 0u);
  EXPECT_TRUE(backend_.WaitForAbort("gone"));
}

// A raw client that sends a request and closes without reading the answer.
void SendAndHangUp(int port, const std::string& body) {
  int fd = testing::ConnectLoopback(port);
  ASSERT_GE(fd, 0);
  std::string request = "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  close(fd);
}

TEST_F(HttpServerTest, NonStreamingClientDisconnectAbortsRequest) {
  StartServer();
  SendAndHangUp(server_->port(), R"({"prompt": "x", "max_tokens": 1000000, "rid": "left"})");
  EXPECT_TRUE(backend_.WaitForAbort("left"));
  // Every sub-request of an n > 1 request is aborted.
  SendAndHangUp(server_->port(), R"({"prompt": "x", "max_tokens": 1000000, "rid": "pair", "n": 2})");
  EXPECT_TRUE(backend_.WaitForAbort("pair-0"));
  EXPECT_TRUE(backend_.WaitForAbort("pair-1"));
}

TEST_F(HttpServerTest, StalledClientDoesNotBlockOthers) {
  StartServer();
  // A client that sends half a request line and then nothing holds only its own connection.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_GT(send(fd, "POST /v1/comp", 13, MSG_NOSIGNAL), 0);
  EXPECT_EQ(Post("/v1/completions", R"({"prompt": "x", "max_tokens": 2})").first, 200);
  close(fd);
}

TEST_F(HttpServerTest, ManyConcurrentStreamingClients) {
  StartServer();
  constexpr int kClients = 256;
  constexpr int kTokens = 16;
  std::vector<std::thread> threads;
  std::vector<std::string> texts(kClients);
  std::vector<int> statuses(kClients, 0);
  std::vector<char> dones(kClients, 0);  // not vector<bool>: each thread writes its own element
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      httplib::Client cli("127.0.0.1", server_->port());
      cli.set_read_timeout(120, 0);
      cli.set_connection_timeout(60, 0);
      auto res = cli.Post("/v1/chat/completions",
                          R"({"messages": [{"role": "user", "content": "hi"}], "stream": true, "max_tokens": )" +
                              std::to_string(kTokens) + "}",
                          "application/json");
      if (!res) return;
      statuses[i] = res->status;
      bool done = false;
      for (const json& e : Events(res->body, &done)) {
        const json& delta = e["choices"][0]["delta"];
        if (delta.contains("content")) texts[i] += delta["content"].get<std::string>();
      }
      dones[i] = done;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kClients; ++i) {
    EXPECT_EQ(statuses[i], 200) << "client " << i;
    EXPECT_EQ(texts[i], "abcdefghijklmnop") << "client " << i;
    EXPECT_TRUE(dones[i]) << "client " << i;
  }
  EXPECT_EQ(backend_.submitted().size(), static_cast<size_t>(kClients));
}

// Sends raw bytes without half-closing (the server decides when to close) and reads until it does.
std::string RawExchange(int port, const std::string& bytes) {
  return testing::RawExchange(port, bytes, /*half_close=*/false);
}

TEST_F(HttpServerTest, MalformedHttpIsAnsweredAndClosed) {
  HttpServerOptions options;
  options.limits.max_body_bytes = 1000;
  StartServer(options);
  const int port = server_->port();
  EXPECT_THAT(RawExchange(port, "GARBAGE\r\n\r\n"), HasSubstr("HTTP/1.1 400 Bad Request"));
  EXPECT_THAT(RawExchange(port, "GET /health HTTP/2.0\r\n\r\n"), HasSubstr("400"));
  EXPECT_THAT(RawExchange(port, "GET /health HTTP/1.1\r\nNoColonHere\r\n\r\n"), HasSubstr("400"));
  EXPECT_THAT(RawExchange(port, "GET /health HTTP/1.1\r\nX: " + std::string(70000, 'a') + "\r\n\r\n"),
              HasSubstr("431"));
  EXPECT_THAT(RawExchange(port, "POST /v1/completions HTTP/1.1\r\nContent-Length: 5000\r\n\r\n"), HasSubstr("413"));
  EXPECT_THAT(RawExchange(port, "POST /v1/completions HTTP/1.1\r\nContent-Length: -1\r\n\r\n"), HasSubstr("400"));
  EXPECT_THAT(RawExchange(port, "POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
              HasSubstr("501"));
  // HTTP/1.0 without keep-alive: one response, then the server closes (RawExchange returns).
  std::string r10 = RawExchange(port, "GET /health HTTP/1.0\r\n\r\n");
  EXPECT_THAT(r10, HasSubstr("HTTP/1.1 200 OK"));
  EXPECT_THAT(r10, HasSubstr("Connection: close"));
  // Expect: 100-continue gets the interim response before the client sends the body.
  const std::string body = R"({"prompt": "x", "max_tokens": 1})";
  {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    std::string head = "POST /v1/completions HTTP/1.1\r\nExpect: 100-continue\r\nConnection: close\r\n"
                       "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    char buf[4096];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    ASSERT_GT(n, 0);
    EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), "HTTP/1.1 100 Continue\r\n\r\n");
    send(fd, body.data(), body.size(), MSG_NOSIGNAL);
    std::string rest;
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) rest.append(buf, static_cast<size_t>(n));
    close(fd);
    EXPECT_EQ(rest.rfind("HTTP/1.1 200 OK", 0), 0u) << rest;
  }
  // Two pipelined requests on one connection are both answered.
  std::string two = RawExchange(port, "GET /health HTTP/1.1\r\n\r\nGET /health HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(std::count(two.begin(), two.end(), '{'), 2) << two;
  EXPECT_EQ(Post("/v1/completions", body).first, 200);  // and the server still serves
}

// A drain waits for active_requests() to reach 0: a stream counts until its answer is written.
TEST_F(HttpServerTest, ActiveRequestsCountsAnswersUntilWritten) {
  StartServer();
  EXPECT_EQ(server_->active_requests(), 0);
  std::atomic<bool> got_data{false};
  std::atomic<bool> release{false};
  std::thread client([&] {
    httplib::Client cli("127.0.0.1", server_->port());
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.body = R"({"prompt": "x", "max_tokens": 40, "stream": true, "rid": "counted"})";
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) {
      got_data = true;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a slow reader
      return true;
    };
    cli.send(req);
  });
  while (!got_data) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(server_->active_requests(), 1);
  release = true;
  client.join();
  // The handler returns just after the client saw the last byte.
  auto settles_at_zero = [&] {
    for (int i = 0; i < 2000 && server_->active_requests() != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return server_->active_requests() == 0;
  };
  EXPECT_TRUE(settles_at_zero());
  EXPECT_EQ(Post("/v1/completions", R"({"prompt": "x", "max_tokens": 2})").first, 200);
  EXPECT_TRUE(settles_at_zero());
}

TEST_F(HttpServerTest, StopAbortsInFlightStreams) {
  StartServer();
  std::thread client([&] {
    httplib::Client cli("127.0.0.1", server_->port());
    cli.Post("/v1/completions", R"({"prompt": "x", "max_tokens": 1000000, "stream": true, "rid": "stop"})",
             "application/json");
  });
  while (backend_.submitted().empty()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  server_->Stop();
  client.join();
  EXPECT_TRUE(backend_.WaitForAbort("stop"));
}

}  // namespace
}  // namespace radixserve::api
