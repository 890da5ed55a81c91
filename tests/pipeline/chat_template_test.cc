// The model's own chat template in the server: stories260K served with a real Jinja chat
// template (Mistral Nemo's, from shared/templates; its bos_token and eos_token are the same as
// stories260K's, <s> and </s>), named by the api's chat_template:= launch argument.
// POST /apply-template gives exactly what Python jinja2 renders for every conversation of the
// reference data the chat API can carry (roles and text; tools come with tool calls); a chat
// completion is rendered the same way; chat_template_kwargs reach the template and may not set
// what the server sets; a template that raises gives a 400 with its message and the server serves on.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/pipeline/http_client.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::pipeline_test {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const std::string kTemplateName = "mistralai-Mistral-Nemo-Instruct-2407";
std::string TemplatePath() { return std::string(RADIXSERVE_SHARED_DIR) + "/templates/" + kTemplateName + ".jinja"; }

PipelineOptions Options() {
  PipelineOptions o;
  o.api_params = {"chat_template:=" + TemplatePath()};
  return o;
}
PipelineEnvironment* const g_env = RegisterPipeline(Options());

ordered_json ReadJson(const std::string& name) {
  std::ifstream in(std::string(RADIXSERVE_SHARED_DIR) + "/templates/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ordered_json::parse(ss.str());
}

// Messages the chat API carries as they are: system/user/assistant turns of text.
bool PlainConversation(const ordered_json& c) {
  if (c.contains("tools")) return false;
  for (const auto& m : c["messages"]) {
    for (const auto& [k, v] : m.items())
      if (k != "role" && k != "content") return false;
    const std::string role = m["role"].get<std::string>();
    if (role != "system" && role != "user" && role != "assistant") return false;
    if (!m["content"].is_string()) return false;
  }
  return true;
}

TEST(ChatTemplate, ApplyTemplateRendersEveryPlainConversationExactlyAsJinja2) {
  const ordered_json expected = ReadJson("expected.json")[kTemplateName];
  std::map<std::string, ordered_json> cases;
  const ordered_json conversations = ReadJson("conversations.json");
  for (const auto& c : conversations["cases"]) cases[c["id"].get<std::string>()] = c;
  int compared = 0;
  for (const auto& [key, want] : expected.items()) {
    const ordered_json& c = cases.at(want["case"].get<std::string>());
    if (!PlainConversation(c)) continue;
    HttpReply r = PostJson(g_env->port(), "/apply-template",
                           json{{"messages", json::parse(c["messages"].dump())},
                                {"add_generation_prompt", want["add_generation_prompt"].get<bool>()}});
    ++compared;
    if (want.contains("rendered")) {
      ASSERT_EQ(r.status, 200) << key << ": " << Describe(r);
      EXPECT_EQ(json::parse(r.body)["prompt"].get<std::string>(), want["rendered"].get<std::string>()) << key;
    } else {
      EXPECT_EQ(r.status, 400) << key << ": " << Describe(r);
      EXPECT_NE(r.body.find(want["error"].get<std::string>()), std::string::npos) << key << ": " << r.body;
    }
  }
  EXPECT_GE(compared, 7);
}

TEST(ChatTemplate, ChatCompletionsAndTokenizeUseTheSamePrompt) {
  const json messages = json::array({{{"role", "user"}, {"content", "Once upon a time"}}});
  HttpReply applied = PostJson(g_env->port(), "/apply-template", {{"messages", messages}});
  ASSERT_EQ(applied.status, 200) << Describe(applied);
  const std::string prompt = json::parse(applied.body)["prompt"].get<std::string>();
  EXPECT_EQ(prompt, "<s>[INST]Once upon a time[/INST]");
  HttpReply by_messages = PostJson(g_env->port(), "/tokenize", {{"messages", messages}});
  HttpReply by_text = PostJson(g_env->port(), "/tokenize", {{"text", prompt}, {"add_special_tokens", false}});
  ASSERT_EQ(by_messages.status, 200) << Describe(by_messages);
  ASSERT_EQ(by_text.status, 200) << Describe(by_text);
  EXPECT_EQ(json::parse(by_messages.body)["tokens"], json::parse(by_text.body)["tokens"]);
  HttpReply chat = PostJson(g_env->port(), "/v1/chat/completions",
                            {{"messages", messages}, {"max_tokens", 8}, {"temperature", 0}});
  ASSERT_EQ(chat.status, 200) << Describe(chat);
  EXPECT_EQ(json::parse(chat.body)["usage"]["prompt_tokens"], json::parse(by_text.body)["count"]);
}

TEST(ChatTemplate, ATemplateThatRaisesIsA400WithItsMessageAndTheServerServesOn) {
  // Two user turns in a row: Mistral's template refuses them.
  const json messages = json::array({{{"role", "user"}, {"content", "a"}}, {{"role", "user"}, {"content", "b"}}});
  HttpReply r = PostJson(g_env->port(), "/v1/chat/completions", {{"messages", messages}, {"max_tokens", 4}});
  EXPECT_EQ(r.status, 400) << Describe(r);
  EXPECT_NE(r.body.find("the chat template raised: After the optional system message, conversation roles must "
                        "alternate user/assistant/user/assistant/..."),
            std::string::npos)
      << r.body;
  EXPECT_EQ(json::parse(r.body)["error"]["param"], "messages") << r.body;
  HttpReply ok = PostJson(g_env->port(), "/v1/chat/completions",
                          {{"messages", json::array({{{"role", "user"}, {"content", "a"}}})}, {"max_tokens", 4}});
  EXPECT_EQ(ok.status, 200) << Describe(ok);
}

TEST(ChatTemplate, TemplateKwargsAreCheckedAndMayNotSetWhatTheServerSets) {
  const json messages = json::array({{{"role", "user"}, {"content", "a"}}});
  HttpReply not_object =
      PostJson(g_env->port(), "/v1/chat/completions", {{"messages", messages}, {"chat_template_kwargs", 3}});
  EXPECT_EQ(not_object.status, 400) << Describe(not_object);
  EXPECT_EQ(json::parse(not_object.body)["error"]["param"], "chat_template_kwargs") << not_object.body;
  HttpReply reserved = PostJson(g_env->port(), "/apply-template",
                                {{"messages", messages}, {"chat_template_kwargs", {{"bos_token", "X"}}}});
  EXPECT_EQ(reserved.status, 400) << Describe(reserved);
  EXPECT_EQ(json::parse(reserved.body)["error"]["param"], "chat_template_kwargs.bos_token") << reserved.body;
  // An extra variable the template does not read changes nothing.
  HttpReply extra = PostJson(g_env->port(), "/apply-template",
                             {{"messages", messages}, {"chat_template_kwargs", {{"enable_thinking", false}}}});
  ASSERT_EQ(extra.status, 200) << Describe(extra);
  EXPECT_EQ(json::parse(extra.body)["prompt"], "<s>[INST]a[/INST]");
}

}  // namespace
}  // namespace radixserve::pipeline_test
