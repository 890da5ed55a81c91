// The whole pipeline (api → scheduler → worker → detokenizer → api, four processes over
// iceoryx) reproduces llama.cpp's greedy stories260K completions exactly, through every
// endpoint, streamed or not.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/pipeline/http_client.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::pipeline_test {
namespace {

using nlohmann::json;

PipelineEnvironment* const g_env = RegisterPipeline({});

struct GoldenCase {
  std::string prompt;
  std::vector<int32_t> prompt_ids;  // with BOS
  std::vector<int32_t> completion_ids;
  std::string completion_text;      // full_text is prompt + completion_text
};

std::vector<GoldenCase> LoadGolden() {
  std::ifstream in(GoldenFile());
  json j = json::parse(in, nullptr, false);
  std::vector<GoldenCase> out;
  if (j.is_discarded()) return out;
  for (const auto& c : j["cases"])
    out.push_back({c["prompt"], c["prompt_ids"], c["completion_ids"], c["completion_text"]});
  return out;
}

const std::vector<GoldenCase>& Golden() {
  static const std::vector<GoldenCase> cases = LoadGolden();
  return cases;
}

json Greedy32() { return {{"temperature", 0}, {"max_new_tokens", 32}, {"ignore_eos", true}}; }

// Concatenates choices[0].text (completions) or choices[0].delta.content (chat) of SSE events.
std::string Concat(const std::vector<json>& events, bool chat, std::string* finish_reason) {
  std::string text;
  for (const auto& e : events) {
    if (!e.is_object() || !e.contains("choices")) continue;
    for (const auto& c : e["choices"]) {
      if (chat) {
        if (c.contains("delta") && c["delta"].contains("content") && c["delta"]["content"].is_string())
          text += c["delta"]["content"].get<std::string>();
      } else if (c.contains("text") && c["text"].is_string()) {
        text += c["text"].get<std::string>();
      }
      if (c.contains("finish_reason") && c["finish_reason"].is_string()) *finish_reason = c["finish_reason"];
    }
  }
  return text;
}

TEST(Golden, FileHasCases) { ASSERT_EQ(Golden().size(), 5u) << GoldenFile(); }

TEST(Golden, GenerateWithGoldenIdsGivesGoldenIds) {
  for (const auto& g : Golden()) {
    HttpReply r = PostJson(g_env->port(), "/generate", {{"input_ids", g.prompt_ids}, {"sampling_params", Greedy32()}});
    ASSERT_EQ(r.status, 200) << Describe(r);
    EXPECT_EQ(r.json["output_ids"].get<std::vector<int32_t>>(), g.completion_ids) << g.prompt;
    EXPECT_EQ(r.json["text"], g.completion_text) << g.prompt;
    EXPECT_EQ(r.json["meta_info"]["prompt_tokens"], g.prompt_ids.size());
    EXPECT_EQ(r.json["meta_info"]["completion_tokens"], 32);
  }
}

TEST(Golden, CompletionOfGoldenPromptTextGivesGoldenText) {
  for (const auto& g : Golden()) {
    HttpReply r = PostJson(g_env->port(), "/v1/completions",
                           {{"prompt", g.prompt}, {"max_tokens", 32}, {"temperature", 0}, {"ignore_eos", true}});
    ASSERT_EQ(r.status, 200) << Describe(r);
    ASSERT_EQ(r.json["choices"].size(), 1u);
    EXPECT_EQ(r.json["choices"][0]["text"], g.completion_text) << g.prompt;
    EXPECT_EQ(r.json["choices"][0]["finish_reason"], "length");
    // The api adds BOS to text prompts, as the golden prompt ids have it.
    EXPECT_EQ(r.json["usage"]["prompt_tokens"], g.prompt_ids.size());
    EXPECT_EQ(r.json["usage"]["completion_tokens"], 32);
  }
}

TEST(Golden, StreamedCompletionEqualsNonStreamed) {
  for (const auto& g : Golden()) {
    json req = {{"prompt", g.prompt}, {"max_tokens", 32}, {"temperature", 0}, {"ignore_eos", true}};
    HttpReply plain = PostJson(g_env->port(), "/v1/completions", req);
    ASSERT_EQ(plain.status, 200) << Describe(plain);
    req["stream"] = true;
    HttpReply streamed = PostStream(g_env->port(), "/v1/completions", req, [](std::string_view) { return true; });
    ASSERT_EQ(streamed.status, 200) << Describe(streamed);
    bool done = false;
    auto events = ParseSse(streamed.body, &done);
    EXPECT_TRUE(done) << "no [DONE] event:\n" << streamed.body;
    EXPECT_GT(events.size(), 2u) << "the text came in one piece:\n" << streamed.body;
    std::string finish;
    EXPECT_EQ(Concat(events, /*chat=*/false, &finish), plain.json["choices"][0]["text"].get<std::string>());
    EXPECT_EQ(finish, "length");
  }
}

TEST(Golden, StreamedChatEqualsNonStreamedChat) {
  for (const auto& g : Golden()) {
    json req = {{"messages", json::array({{{"role", "user"}, {"content", g.prompt}}})},
                {"max_tokens", 32},
                {"temperature", 0},
                {"ignore_eos", true}};
    HttpReply plain = PostJson(g_env->port(), "/v1/chat/completions", req);
    ASSERT_EQ(plain.status, 200) << Describe(plain);
    ASSERT_EQ(plain.json["choices"].size(), 1u);
    std::string content = plain.json["choices"][0]["message"]["content"];
    EXPECT_FALSE(content.empty());
    EXPECT_EQ(plain.json["choices"][0]["message"]["role"], "assistant");
    EXPECT_EQ(plain.json["usage"]["completion_tokens"], 32);
    req["stream"] = true;
    HttpReply streamed = PostStream(g_env->port(), "/v1/chat/completions", req, [](std::string_view) { return true; });
    ASSERT_EQ(streamed.status, 200) << Describe(streamed);
    bool done = false;
    auto events = ParseSse(streamed.body, &done);
    EXPECT_TRUE(done) << streamed.body;
    std::string finish;
    EXPECT_EQ(Concat(events, /*chat=*/true, &finish), content) << g.prompt;
    EXPECT_EQ(finish, "length");
  }
}


// The single-process `radixserve generate` and the four-process pipeline agree on greedy text.
TEST(Golden, PipelineMatchesTheGenerateCommand) {
  int st = 0;
  RunCommand(ShellQuote(RadixserveBinary()) + " generate --help >/dev/null 2>&1", &st);
  ASSERT_EQ(st, 0) << "`radixserve generate --help` failed";
  const std::vector<std::pair<std::string, int>> prompts = {
      {"Once upon a time", 40}, {"The cat sat on the mat.", 24}, {"Sue and her mom", 60}};
  for (const auto& [prompt, n] : prompts) {
    std::string out = RunCommand(ShellQuote(RadixserveBinary()) + " generate --model " + ShellQuote(Stories260K()) +
                                     " --prompt " + ShellQuote(prompt) + " --max-tokens " + std::to_string(n) +
                                     " --temperature 0 2>/dev/null",
                                 &st);
    ASSERT_EQ(st, 0) << "radixserve generate failed for '" << prompt << "': " << out;
    HttpReply r = PostJson(g_env->port(), "/v1/completions", {{"prompt", prompt}, {"max_tokens", n}, {"temperature", 0}});
    ASSERT_EQ(r.status, 200) << Describe(r);
    std::string text = r.json["choices"][0]["text"];
    ASSERT_FALSE(text.empty());
    // The command prints the completion and a newline on stdout (figures go to stderr).
    ASSERT_FALSE(out.empty());
    ASSERT_EQ(out.back(), '\n');
    out.pop_back();
    EXPECT_EQ(out, text) << "prompt '" << prompt << "'";
  }
}

}  // namespace
}  // namespace radixserve::pipeline_test
