// Invalid requests get 400 in OpenAI's error shape from the running pipeline, and the
// pipeline keeps serving valid requests after each one.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/pipeline/http_client.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::pipeline_test {
namespace {

using nlohmann::json;

PipelineEnvironment* const g_env = RegisterPipeline({});

constexpr int kContext = 512;  // stories260K

struct BadCase {
  std::string name;
  std::string path;
  std::string body;   // sent as is
  std::string param;  // the field the error must name ("" when any or none)
};

json Valid() { return {{"prompt", "Once upon a time"}, {"max_tokens", 8}, {"temperature", 0}}; }

std::string With(const char* key, json value) {
  json j = Valid();
  j[key] = std::move(value);
  return j.dump();
}

std::string Chat(json messages) {
  return json{{"messages", std::move(messages)}, {"max_tokens", 8}, {"temperature", 0}}.dump();
}

std::vector<BadCase> Cases() {
  std::vector<int32_t> too_long(kContext + 10, 300);
  too_long[0] = 1;
  std::string long_text;
  for (int i = 0; i < kContext; ++i) long_text += " Once upon a time";
  return {
      {"truncated JSON", "/v1/completions", R"({"prompt": "Once upon", "max_tokens": )", ""},
      {"not JSON at all", "/v1/completions", "prompt=Once upon a time", ""},
      {"a JSON array body", "/v1/chat/completions", "[1, 2, 3]", ""},
      {"malformed JSON on /generate", "/generate", R"({"text": "Once", "sampling_params": {)", ""},
      {"prompt of the wrong type", "/v1/completions", With("prompt", json{{"a", 1}}), "prompt"},
      {"max_tokens as a string", "/v1/completions", With("max_tokens", "ten"), "max_tokens"},
      {"temperature as a string", "/v1/completions", With("temperature", "hot"), "temperature"},
      {"stream as a string", "/v1/completions", With("stream", "yes"), "stream"},
      {"messages as a string", "/v1/chat/completions", Chat("hello"), "messages"},
      {"a message without content", "/v1/chat/completions", Chat(json::array({{{"role", "user"}}})), ""},
      {"sampling_params as an array", "/generate", R"({"text": "Once", "sampling_params": [1]})", "sampling_params"},
      {"temperature -1", "/v1/completions", With("temperature", -1), "temperature"},
      {"top_p 2", "/v1/completions", With("top_p", 2), "top_p"},
      {"n 0", "/v1/completions", With("n", 0), "n"},
      {"negative max_tokens", "/v1/completions", With("max_tokens", -5), "max_tokens"},
      {"prompt ids longer than the context", "/generate",
       json{{"input_ids", too_long}, {"sampling_params", {{"max_new_tokens", 4}}}}.dump(), ""},
      {"prompt text longer than the context", "/v1/completions", With("prompt", long_text), ""},
      {"unknown model name", "/v1/completions", With("model", "gpt-4o"), "model"},
      {"unknown model name (chat)", "/v1/chat/completions",
       json{{"model", "llama-70b"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}}.dump(), "model"},
  };
}

void ExpectOpenAiError(const HttpReply& r, const BadCase& c) {
  ASSERT_EQ(r.status, 400) << c.name << ": " << Describe(r);
  ASSERT_TRUE(r.json.is_object()) << c.name << ": " << r.body;
  ASSERT_TRUE(r.json.contains("error")) << c.name << ": " << r.body;
  const json& e = r.json["error"];
  ASSERT_TRUE(e.is_object()) << r.body;
  ASSERT_TRUE(e.contains("message") && e["message"].is_string()) << r.body;
  EXPECT_FALSE(e["message"].get<std::string>().empty()) << r.body;
  EXPECT_EQ(e["type"], "invalid_request_error") << c.name << ": " << r.body;
  ASSERT_TRUE(e.contains("param")) << r.body;
  EXPECT_TRUE(e["param"].is_null() || e["param"].is_string()) << r.body;
  ASSERT_TRUE(e.contains("code")) << r.body;
  EXPECT_EQ(e["code"], 400) << r.body;
  if (!c.param.empty()) {
    EXPECT_EQ(e["param"], c.param) << c.name << ": " << r.body;
  }
}

TEST(InvalidInput, EachGets400InOpenAiShapeAndTheServerKeepsServing) {
  const int port = g_env->port();
  HttpReply reference = PostJson(port, "/v1/completions", Valid());
  ASSERT_EQ(reference.status, 200) << Describe(reference);
  for (const BadCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    ExpectOpenAiError(PostRaw(port, c.path, c.body), c);
    HttpReply ok = PostJson(port, "/v1/completions", Valid());
    ASSERT_EQ(ok.status, 200) << "after '" << c.name << "': " << Describe(ok);
    EXPECT_EQ(ok.json["choices"][0]["text"], reference.json["choices"][0]["text"]);
  }
  // Nothing invalid reached the scheduler.
  json stats = SchedulerStats(port);
  EXPECT_EQ(stats["num_running_reqs"], 0) << stats.dump();
  EXPECT_EQ(stats["aborted"], 0) << stats.dump();
}

// input_ids outside the vocabulary are refused by the api (400) before they can reach the worker,
// where one bad id would fail a whole forward batch.
TEST(InvalidInput, TokenIdOutsideTheVocabularyIsRefused) {
  BadCase c{"token id outside the vocabulary", "/generate",
            json{{"input_ids", {1, 100000}}, {"sampling_params", {{"max_new_tokens", 4}}}}.dump(), "input_ids"};
  ExpectOpenAiError(PostRaw(g_env->port(), c.path, c.body), c);
}

// The api admits a prompt of context - 1 tokens (one position left for the output) and the
// scheduler agrees: it generates that one token.
TEST(InvalidInput, PromptOfContextMinusOneTokensGetsOneToken) {
  std::vector<int32_t> ids(kContext - 1, 300);
  ids[0] = 1;
  HttpReply r = PostJson(g_env->port(), "/generate",
                         {{"input_ids", ids}, {"sampling_params", {{"max_new_tokens", 1}, {"temperature", 0}}}});
  ASSERT_EQ(r.status, 200) << Describe(r);
  EXPECT_EQ(r.json["meta_info"]["completion_tokens"], 1) << r.body;
}

}  // namespace
}  // namespace radixserve::pipeline_test
