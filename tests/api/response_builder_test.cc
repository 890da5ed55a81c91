// Response and SSE builders: OpenAI shapes (usage, finish_reason, logprobs), chunks, native output.
#include "core/api/response_builder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace radixserve::api {
namespace {

using nlohmann::json;

const ResponseContext kCtx{"cmpl-r1", "llama", 1700000000};

TokenLogprob Lp(int32_t id, float lp, std::string tok, std::vector<TopLogprob> top = {}) {
  return TokenLogprob{id, lp, std::move(tok), std::move(top)};
}

std::vector<ChoiceResult> TwoChoices() {
  std::vector<ChoiceResult> c(2);
  GenerateOutput a;
  a.text_delta = "Hi";
  a.token_ids = {10, 11};
  a.logprobs = {Lp(10, -0.5f, "H", {{10, -0.5f, "H"}, {12, -1.5f, "h"}}), Lp(11, -0.25f, "i", {{11, -0.25f, "i"}})};
  a.prompt_tokens = 5;
  a.completion_tokens = 2;
  a.cached_tokens = 3;
  a.finish.kind = FinishKind::kMatchedToken;
  a.finish.matched_token = 2;
  c[0].rid = "r1-0";
  c[0].Append(a);
  GenerateOutput b;
  b.text_delta = "Yo!";
  b.token_ids = {20, 21, 22};
  b.prompt_tokens = 5;
  b.completion_tokens = 3;
  b.finish.kind = FinishKind::kLength;
  b.finish.length = 3;
  c[1].rid = "r1-1";
  c[1].Append(b);
  return c;
}

TEST(ResponseBuilder, CompletionWithUsageAndLogprobs) {
  json j = json::parse(BuildCompletionResponse(kCtx, TwoChoices(), true));
  EXPECT_EQ(j["id"], "cmpl-r1");
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["created"], 1700000000);
  EXPECT_EQ(j["model"], "llama");
  ASSERT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["choices"][0]["index"], 0);
  EXPECT_EQ(j["choices"][0]["text"], "Hi");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["choices"][1]["index"], 1);
  EXPECT_EQ(j["choices"][1]["finish_reason"], "length");
  const json& lp = j["choices"][0]["logprobs"];
  EXPECT_EQ(lp["tokens"], json({"H", "i"}));
  EXPECT_EQ(lp["token_logprobs"], json({-0.5, -0.25}));
  EXPECT_EQ(lp["text_offset"], json({0, 1}));
  EXPECT_EQ(lp["top_logprobs"][0], json({{"H", -0.5}, {"h", -1.5}}));
  EXPECT_EQ(j["usage"], json({{"prompt_tokens", 5},
                              {"completion_tokens", 5},
                              {"total_tokens", 10},
                              {"prompt_tokens_details", {{"cached_tokens", 3}}}}));
  json no_lp = json::parse(BuildCompletionResponse(kCtx, TwoChoices(), false));
  EXPECT_TRUE(no_lp["choices"][0]["logprobs"].is_null());
}

TEST(ResponseBuilder, ChatWithLogprobs) {
  ResponseContext ctx{"chatcmpl-r1", "llama", 1};
  std::vector<tool_calls::ParsedOutput> messages(2);
  messages[0].content = "Hi";
  messages[1].content = "Yo!";
  json j = json::parse(BuildChatCompletionResponse(ctx, TwoChoices(), messages, true));
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"], json({{"role", "assistant"}, {"content", "Hi"}}));
  EXPECT_EQ(j["choices"][1]["message"]["content"], "Yo!");
  const json& c0 = j["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(c0.size(), 2u);
  EXPECT_EQ(c0[0]["token"], "H");
  EXPECT_EQ(c0[0]["logprob"], -0.5);
  EXPECT_EQ(c0[0]["bytes"], json({72}));
  EXPECT_EQ(c0[0]["top_logprobs"][1], json({{"token", "h"}, {"logprob", -1.5}, {"bytes", {104}}}));
  EXPECT_EQ(j["usage"]["total_tokens"], 10);
}

TEST(ResponseBuilder, NativeOneAndMany) {
  std::vector<ChoiceResult> c = TwoChoices();
  json one = json::parse(BuildNativeGenerateResponse({c[0]}, true));
  EXPECT_EQ(one["text"], "Hi");
  EXPECT_EQ(one["output_ids"], json({10, 11}));
  EXPECT_EQ(one["meta_info"]["id"], "r1-0");
  EXPECT_EQ(one["meta_info"]["finish_reason"], json({{"type", "stop"}, {"matched", 2}}));
  EXPECT_EQ(one["meta_info"]["prompt_tokens"], 5);
  EXPECT_EQ(one["meta_info"]["completion_tokens"], 2);
  EXPECT_EQ(one["meta_info"]["cached_tokens"], 3);
  EXPECT_EQ(one["meta_info"]["output_token_logprobs"][0], json({-0.5, 10, "H"}));
  json many = json::parse(BuildNativeGenerateResponse(c, false));
  ASSERT_TRUE(many.is_array());
  EXPECT_EQ(many[1]["index"], 1);
  EXPECT_EQ(many[1]["meta_info"]["finish_reason"], json({{"type", "length"}, {"length", 3}}));
  EXPECT_FALSE(many[1]["meta_info"].contains("output_token_logprobs"));
}

// Parses "data: {json}\n\n" into the JSON.
json Event(const std::string& sse) {
  EXPECT_EQ(sse.rfind("data: ", 0), 0u) << sse;
  EXPECT_EQ(sse.substr(sse.size() - 2), "\n\n");
  return json::parse(sse.substr(6, sse.size() - 8));
}

TEST(SseBuilder, ChatChunks) {
  ResponseContext ctx{"chatcmpl-r1", "llama", 1};
  json role = Event(BuildChatRoleChunk(ctx, 1, false));
  EXPECT_EQ(role["object"], "chat.completion.chunk");
  EXPECT_EQ(role["choices"][0]["index"], 1);
  EXPECT_EQ(role["choices"][0]["delta"]["role"], "assistant");
  EXPECT_TRUE(role["choices"][0]["finish_reason"].is_null());
  EXPECT_FALSE(role.contains("usage"));

  GenerateOutput o;
  o.text_delta = "ab";
  tool_calls::OutputDelta parsed;
  parsed.content = "ab";
  json mid = Event(BuildChatChunk(ctx, 0, parsed, o, false, false, true));
  EXPECT_EQ(mid["choices"][0]["delta"], json({{"content", "ab"}}));
  EXPECT_TRUE(mid["choices"][0]["finish_reason"].is_null());
  EXPECT_TRUE(mid.contains("usage") && mid["usage"].is_null());

  GenerateOutput last;
  last.finish.kind = FinishKind::kLength;
  json end = Event(BuildChatChunk(ctx, 0, {}, last, false, false, false));
  EXPECT_EQ(end["choices"][0]["delta"], json::object());
  EXPECT_EQ(end["choices"][0]["finish_reason"], "length");

  Usage u{7, 3, 2};
  json usage = Event(BuildUsageChunk(ctx, true, u));
  EXPECT_EQ(usage["choices"], json::array());
  EXPECT_EQ(usage["usage"]["total_tokens"], 10);
  EXPECT_EQ(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 2);
  EXPECT_EQ(std::string(kSseDone), "data: [DONE]\n\n");
}

TEST(SseBuilder, CompletionChunkOffsetsContinue) {
  GenerateOutput o;
  o.text_delta = "cd";
  o.logprobs = {Lp(1, -1.0f, "c"), Lp(2, -2.0f, "d")};
  o.finish.kind = FinishKind::kMatchedToken;
  json j = Event(BuildCompletionChunk(kCtx, 0, o, true, 5, false));
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["text"], "cd");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["choices"][0]["logprobs"]["text_offset"], json({5, 6}));
}

TEST(SseBuilder, NativeEventIsCumulativeAndInvalidUtf8IsReplaced) {
  ChoiceResult c;
  c.rid = "x";
  GenerateOutput a;
  a.text_delta = "he";
  a.token_ids = {1};
  c.Append(a);
  GenerateOutput b;
  b.text_delta = "llo\xe2";  // a token ending inside a multi-byte character
  b.token_ids = {2};
  c.Append(b);
  json j = Event(BuildNativeStreamEvent(c, 0, false, false));
  EXPECT_EQ(j["text"], "hello\xef\xbf\xbd");
  EXPECT_EQ(j["output_ids"], json({1, 2}));
  EXPECT_TRUE(j["meta_info"]["finish_reason"].is_null());
  EXPECT_FALSE(j.contains("index"));
}

}  // namespace
}  // namespace radixserve::api
