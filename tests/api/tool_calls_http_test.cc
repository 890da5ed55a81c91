// Tool calls through the HTTP server (fake backend, real chat template: Qwen2.5's, of the Hermes
// family): the prompt shows the tools, the engine gets the grammar of the calls, the answer comes
// back as message.tool_calls / streamed delta.tool_calls with reasoning_content apart, the same
// whatever the size of the pieces the engine streams; and the precise 400s for what cannot work.
#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/api/http_server.h"
#include "tests/api/fake_backend.h"

namespace radixserve::api {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing::FakeBackend;

std::string ReadShared(const std::string& name) {
  std::ifstream in(std::string(RADIXSERVE_SHARED_DIR) + "/templates/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr const char* kTools = R"([{"type": "function", "function": {"name": "get_weather",
    "description": "Weather of a city.", "parameters": {"type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["city"]}}}, {"type": "function", "function": {"name": "search",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}])";

constexpr const char* kAnswer =
    "<think>The user wants weather.</think>Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
    "{\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"search\", "
    "\"arguments\": {\"query\": \"Paris events\"}}\n</tool_call>";

class ToolCallsHttpTest : public ::testing::Test {
 protected:
  void StartServer(std::string chat_template) {
    backend_.context_length = 1 << 20;  // the fake's tokens are bytes
    HttpServerOptions options;
    options.port = 0;
    options.chat_template_text = std::move(chat_template);
    server_ = std::make_unique<HttpServer>(options, &backend_);
    ASSERT_TRUE(server_->Start().ok());
  }
  void SetUp() override { StartServer(ReadShared("Qwen-Qwen2.5-7B-Instruct.jinja")); }
  void TearDown() override { server_->Stop(); }
  std::pair<int, std::string> Post(const std::string& path, const std::string& body) {
    httplib::Client cli("127.0.0.1", server_->port());
    cli.set_read_timeout(60, 0);
    auto res = cli.Post(path.c_str(), body, "application/json");
    if (!res) return {-1, "no response"};
    return {res->status, res->body};
  }
  static std::string Chat(const std::string& extra) {
    return R"({"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": )" + std::string(kTools) +
           R"(, "max_tokens": 400)" + extra + "}";
  }
  // The chunks of a stream assembled the way the openai SDK does it.
  static json Assemble(const std::string& sse, std::string* finish_reason, int* tool_deltas) {
    json message = {{"content", ""}, {"reasoning_content", ""}, {"tool_calls", json::array()}};
    *tool_deltas = 0;
    size_t pos = 0;
    while ((pos = sse.find("data: ", pos)) != std::string::npos) {
      const size_t end = sse.find("\n\n", pos);
      const std::string payload = sse.substr(pos + 6, end - pos - 6);
      pos = end;
      if (payload == "[DONE]") break;
      const json chunk = json::parse(payload);
      const json& c = chunk["choices"][0];
      if (!c["finish_reason"].is_null()) *finish_reason = c["finish_reason"];
      const json& d = c["delta"];
      if (d.contains("content")) message["content"] = message["content"].get<std::string>() + d["content"].get<std::string>();
      if (d.contains("reasoning_content"))
        message["reasoning_content"] =
            message["reasoning_content"].get<std::string>() + d["reasoning_content"].get<std::string>();
      for (const json& t : d.value("tool_calls", json::array())) {
        ++*tool_deltas;
        const size_t i = t["index"];
        json& calls = message["tool_calls"];
        if (i == calls.size()) {  // a call's first delta carries its id, type and name
          EXPECT_TRUE(t.contains("id") && t["type"] == "function" && t["function"].contains("name")) << t;
          calls.push_back({{"id", t["id"]}, {"type", "function"},
                           {"function", {{"name", t["function"]["name"]}, {"arguments", ""}}}});
        } else {
          EXPECT_FALSE(t.contains("id")) << t;
        }
        calls[i]["function"]["arguments"] =
            calls[i]["function"]["arguments"].get<std::string>() + t["function"]["arguments"].get<std::string>();
      }
    }
    return message;
  }

  FakeBackend backend_{std::chrono::microseconds(50)};
  std::unique_ptr<HttpServer> server_;
};

void ExpectTheTwoCalls(const json& message) {
  EXPECT_EQ(message["content"], "Checking.");
  EXPECT_EQ(message["reasoning_content"], "The user wants weather.");
  ASSERT_EQ(message["tool_calls"].size(), 2u) << message;
  const json& a = message["tool_calls"][0];
  EXPECT_EQ(a["type"], "function");
  EXPECT_EQ(a["id"].get<std::string>().rfind("call_", 0), 0u);
  EXPECT_EQ(a["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(a["function"]["arguments"].get<std::string>()), json({{"city", "Paris"}, {"unit", "celsius"}}));
  EXPECT_EQ(message["tool_calls"][1]["function"]["name"], "search");
  EXPECT_NE(message["tool_calls"][1]["id"], a["id"]);
}

TEST_F(ToolCallsHttpTest, AnAnswerWithCallsIsReadIntoToolCallsAndReasoning) {
  backend_.set_script(kAnswer, 5);
  auto [status, body] = Post("/v1/chat/completions", Chat(""));
  ASSERT_EQ(status, 200) << body;
  json j = json::parse(body);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
  ExpectTheTwoCalls(j["choices"][0]["message"]);

  // What the engine was given: the tools in the prompt, the lazy grammar of the calls, special
  // tokens kept in the output text (the markup may be control tokens; the parser removes it).
  GenerateRequest sent = backend_.submitted().back();
  EXPECT_THAT(sent.text, HasSubstr("<tools>"));
  EXPECT_THAT(sent.text, HasSubstr("\"name\": \"get_weather\""));
  ASSERT_EQ(sent.spec.grammar.kind, grammar::GrammarKind::kStructural);
  json spec = json::parse(sent.spec.grammar.text);
  EXPECT_EQ(spec["trigger"], "<tool_call>");
  EXPECT_EQ(spec["calls"].size(), 2u);
  EXPECT_EQ(spec["max_calls"], -1);
  EXPECT_FALSE(sent.spec.sampling.skip_special_tokens);
}

TEST_F(ToolCallsHttpTest, StreamedCallsDoNotDependOnHowTheOutputIsCut) {
  for (size_t piece : {1, 2, 7, 64, 1000}) {
    backend_.set_script(kAnswer, piece);
    auto [status, body] = Post("/v1/chat/completions", Chat(R"(, "stream": true)"));
    ASSERT_EQ(status, 200) << body;
    std::string finish;
    int tool_deltas = 0;
    json message = Assemble(body, &finish, &tool_deltas);
    SCOPED_TRACE("piece " + std::to_string(piece));
    EXPECT_EQ(finish, "tool_calls");
    ExpectTheTwoCalls(message);
    EXPECT_GE(tool_deltas, 2);
    EXPECT_EQ(body.find("<tool_call>"), std::string::npos);  // markup never reaches the client
    EXPECT_EQ(body.find("<think>"), std::string::npos);
  }
}

TEST_F(ToolCallsHttpTest, ACallCutByMaxTokensIsStillReturnedWithFinishLength) {
  backend_.set_script(kAnswer, 1);
  auto [status, body] = Post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "q"}], "tools": )" +
                                                         std::string(kTools) + R"(, "max_tokens": 110})");
  ASSERT_EQ(status, 200) << body;
  json j = json::parse(body);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  const json& m = j["choices"][0]["message"];
  ASSERT_EQ(m["tool_calls"].size(), 1u) << m;
  EXPECT_EQ(m["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(m["tool_calls"][0]["function"]["arguments"], "{\"city\": \"Par");  // as far as it got

  // Reasoning cut by max_tokens is still reasoning.
  auto [s2, b2] = Post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "q"}], "max_tokens": 15})");
  ASSERT_EQ(s2, 200) << b2;
  json m2 = json::parse(b2)["choices"][0]["message"];
  EXPECT_EQ(m2["reasoning_content"], "The user");
  EXPECT_EQ(m2["content"], "");
}

TEST_F(ToolCallsHttpTest, ToolChoiceShapesTheGrammar) {
  backend_.set_script("<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}\n</tool_call>", 9);
  auto [status, body] = Post("/v1/chat/completions",
                             Chat(R"(, "tool_choice": {"type": "function", "function": {"name": "search"}},
                                     "parallel_tool_calls": false)"));
  ASSERT_EQ(status, 200) << body;
  json spec = json::parse(backend_.submitted().back().spec.grammar.text);
  EXPECT_FALSE(spec.contains("trigger"));  // constrained from the first token
  ASSERT_EQ(spec["calls"].size(), 1u);
  EXPECT_EQ(spec["calls"][0]["begin"], "<tool_call>\n{\"name\": \"search\", \"arguments\": ");
  EXPECT_EQ(spec["max_calls"], 1);
  EXPECT_EQ(json::parse(body)["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "search");

  // "none": the model is not shown the tools and nothing is constrained.
  backend_.set_script("Sunny.", 2);
  auto [s2, b2] = Post("/v1/chat/completions", Chat(R"(, "tool_choice": "none")"));
  ASSERT_EQ(s2, 200) << b2;
  GenerateRequest sent = backend_.submitted().back();
  EXPECT_FALSE(sent.spec.grammar.active());
  EXPECT_EQ(sent.text.find("get_weather"), std::string::npos);
  json m = json::parse(b2)["choices"][0]["message"];
  EXPECT_EQ(m["content"], "Sunny.");
  EXPECT_FALSE(m.contains("tool_calls"));
  EXPECT_EQ(json::parse(b2)["choices"][0]["finish_reason"], "stop");
}

TEST_F(ToolCallsHttpTest, ASecondTurnRendersTheCallAndItsResult) {
  auto [status, body] = Post("/apply-template", R"({"messages": [
      {"role": "user", "content": "Weather in Paris?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "18 C"}], "tools": )" + std::string(kTools) + "}");
  ASSERT_EQ(status, 200) << body;
  const std::string prompt = json::parse(body)["prompt"];
  EXPECT_THAT(prompt, HasSubstr("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"));
  EXPECT_THAT(prompt, HasSubstr("<tool_response>\n18 C\n</tool_response>"));
  EXPECT_THAT(prompt, HasSubstr("<tools>"));
}

TEST_F(ToolCallsHttpTest, BadToolRequestsArePrecise400sAndTheServerServesOn) {
  struct Case {
    std::string body;
    const char* param;
    const char* message;
  };
  const std::vector<Case> cases = {
      {Chat(R"(, "tool_choice": {"type": "function", "function": {"name": "fly"}})"), "tool_choice.function.name",
       "names no function of tools: \"fly\""},
      {R"({"messages": [{"role": "user", "content": "q"}, {"role": "tool", "content": "18 C"}]})",
       "messages[1].tool_call_id", "is required in a tool message"},
      {R"({"messages": [{"role": "user", "content": "q"}], "tools": [{"type": "function", "function": {"name": "f",
          "parameters": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 1}}}}}]})",
       "tools[0].function.parameters/properties/n/maximum",
       "tools[0].function.parameters/properties/n/maximum: the upper bound 1 is below the lower bound 5"},
      {Chat(R"(, "response_format": {"type": "json_object"})"), "response_format",
       "cannot be combined with tools"},
      {Chat(R"(, "tool_choice": "required", "ignore_eos": true)"), "ignore_eos", "ignore_eos"},
  };
  for (const Case& c : cases) {
    auto [status, body] = Post("/v1/chat/completions", c.body);
    EXPECT_EQ(status, 400) << c.body << "\n" << body;
    json e = json::parse(body)["error"];
    EXPECT_EQ(e["param"], c.param) << body;
    EXPECT_THAT(e["message"].get<std::string>(), HasSubstr(c.message)) << body;
  }
  backend_.set_script("fine", 4);
  auto [status, body] = Post("/v1/chat/completions", Chat(""));
  EXPECT_EQ(status, 200) << body;
}

TEST_F(ToolCallsHttpTest, ATemplateThatRaisesIsA400WithItsMessage) {
  // Mistral Nemo's template refuses tool call ids that are not 9 letters and digits.
  TearDown();
  StartServer(ReadShared("mistralai-Mistral-Nemo-Instruct-2407.jinja"));
  auto [status, body] = Post("/v1/chat/completions", R"({"messages": [
      {"role": "user", "content": "Weather?"},
      {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "18 C"}], "tools": )" + std::string(kTools) + "}");
  EXPECT_EQ(status, 400) << body;
  EXPECT_THAT(body, HasSubstr("the chat template raised: Tool call IDs should be alphanumeric strings with length 9!"));
  // The ids the server makes for this family are the ones its template takes back.
  backend_.set_script("[TOOL_CALLS][{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}]", 3);
  auto [s2, b2] = Post("/v1/chat/completions", Chat(""));
  ASSERT_EQ(s2, 200) << b2;
  const std::string id = json::parse(b2)["choices"][0]["message"]["tool_calls"][0]["id"];
  EXPECT_EQ(id.size(), 9u) << b2;
}

TEST_F(ToolCallsHttpTest, APromptThatOpensTheReasoningBlockIsReadFromInsideIt) {
  // Qwen3.5's generation prompt ends in "<think>\n": the output starts inside the block, unless
  // enable_thinking is false, which closes it in the prompt.
  TearDown();
  StartServer(ReadShared("Qwen3.5-4B.jinja"));
  backend_.set_script("Short question.\n</think>\n\nHello!", 4);
  auto [status, body] = Post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "hi"}]})");
  ASSERT_EQ(status, 200) << body;
  json m = json::parse(body)["choices"][0]["message"];
  EXPECT_EQ(m["reasoning_content"], "Short question.");
  EXPECT_EQ(m["content"], "Hello!");
  EXPECT_TRUE(backend_.submitted().back().output_starts_in_reasoning);

  backend_.set_script("Hello!", 4);
  auto [s2, b2] = Post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "hi"}],
      "chat_template_kwargs": {"enable_thinking": false}})");
  ASSERT_EQ(s2, 200) << b2;
  json m2 = json::parse(b2)["choices"][0]["message"];
  EXPECT_EQ(m2["content"], "Hello!");
  EXPECT_FALSE(m2.contains("reasoning_content"));
  GenerateRequest sent = backend_.submitted().back();
  EXPECT_FALSE(sent.output_starts_in_reasoning);
  EXPECT_THAT(sent.text, HasSubstr("<think>\n\n</think>\n\n"));

  // Streamed, reasoning arrives as delta.reasoning_content.
  backend_.set_script("Short question.\n</think>\n\nHello!", 3);
  auto [s3, b3] = Post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "hi"}], "stream": true})");
  ASSERT_EQ(s3, 200) << b3;
  std::string finish;
  int tool_deltas = 0;
  json m3 = Assemble(b3, &finish, &tool_deltas);
  EXPECT_EQ(m3["reasoning_content"], "Short question.");
  EXPECT_EQ(m3["content"], "Hello!");
  EXPECT_EQ(finish, "stop");
  EXPECT_EQ(tool_deltas, 0);
}

TEST(ToolCallsHttpNoFamily, ToolsWithATemplateOfNoKnownFamilyAreA400) {
  FakeBackend backend;
  HttpServerOptions options;
  options.port = 0;  // no template in the file: ChatML, which renders no tools
  HttpServer server(options, &backend);
  ASSERT_TRUE(server.Start().ok());
  httplib::Client cli("127.0.0.1", server.port());
  auto res = cli.Post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "q"}], "tools": )" +
                                                  std::string(kTools) + "}",
                      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  json e = json::parse(res->body)["error"];
  EXPECT_EQ(e["param"], "tools");
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("writes no tool-call syntax radixserve knows"));
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("hermes"));
  server.Stop();
}

}  // namespace
}  // namespace radixserve::api
