// The tool fields of chat requests (tool_request.h): what is accepted, how it is kept, and the
// precise 400 for each mistake.
#include "core/api/tool_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/api/request_parser.h"

namespace radixserve::api {
namespace {

using ::testing::HasSubstr;

constexpr const char* kTool = R"({"type": "function", "function": {"name": "get_weather", "description": "Weather.",
    "parameters": {"type": "object", "properties": {"unit": {"type": "string"}, "city": {"type": "string"}},
                   "required": ["city"]}}})";

std::string Body(const std::string& extra) {
  return R"({"messages": [{"role": "user", "content": "hi"}], "tools": [)" + std::string(kTool) +
         R"(, {"type": "function", "function": {"name": "search"}}])" + extra + "}";
}

TEST(ToolRequest, ToolsKeepTheirKeysInTheOrderWritten) {
  GenerateRequest r;
  ApiError e;
  ASSERT_TRUE(ParseChatCompletionRequest(Body(""), ApiLimits{}, &r, &e)) << e.message;
  ASSERT_EQ(r.tools.size(), 2u);
  const auto& props = r.tools[0]["function"]["parameters"]["properties"];
  ASSERT_EQ(props.size(), 2u);
  EXPECT_EQ(props.begin().key(), "unit");  // as written, not sorted: the calls follow this order
  EXPECT_EQ(r.tool_choice.mode, ToolChoice::Mode::kAuto);
  EXPECT_TRUE(r.parallel_tool_calls);
  EXPECT_EQ(CallableToolNames(r), (std::vector<std::string>{"get_weather", "search"}));
}

TEST(ToolRequest, ToolChoiceForms) {
  struct Case {
    const char* choice;
    ToolChoice::Mode mode;
    std::vector<std::string> callable;
  };
  const std::vector<Case> cases = {
      {R"("auto")", ToolChoice::Mode::kAuto, {"get_weather", "search"}},
      {R"("none")", ToolChoice::Mode::kNone, {"get_weather", "search"}},
      {R"("required")", ToolChoice::Mode::kRequired, {"get_weather", "search"}},
      {R"({"type": "function", "function": {"name": "search"}})", ToolChoice::Mode::kRequired, {"search"}},
      {R"({"type": "allowed_tools", "allowed_tools": {"mode": "auto",
          "tools": [{"type": "function", "function": {"name": "get_weather"}}]}})",
       ToolChoice::Mode::kAuto, {"get_weather"}},
      {R"({"type": "allowed_tools", "allowed_tools": {"mode": "required",
          "tools": [{"type": "function", "function": {"name": "search"}}]}})",
       ToolChoice::Mode::kRequired, {"search"}},
  };
  for (const Case& c : cases) {
    GenerateRequest r;
    ApiError e;
    ASSERT_TRUE(ParseChatCompletionRequest(Body(std::string(", \"tool_choice\": ") + c.choice +
                                                ", \"parallel_tool_calls\": false"),
                                           ApiLimits{}, &r, &e))
        << c.choice << ": " << e.message;
    EXPECT_EQ(r.tool_choice.mode, c.mode) << c.choice;
    EXPECT_EQ(CallableToolNames(r), c.callable) << c.choice;
    EXPECT_FALSE(r.parallel_tool_calls);
  }
}

TEST(ToolRequest, HistoryWithCallsAndResults) {
  GenerateRequest r;
  ApiError e;
  ASSERT_TRUE(ParseChatCompletionRequest(R"({"messages": [
      {"role": "user", "content": "weather?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"unit\": \"c\", \"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "18 C"}]})",
                                         ApiLimits{}, &r, &e))
      << e.message;
  ASSERT_EQ(r.messages.size(), 3u);
  const ChatMessage& a = r.messages[1];
  EXPECT_TRUE(a.content_null);
  ASSERT_EQ(a.tool_calls.size(), 1u);
  EXPECT_EQ(a.tool_calls[0].id, "call_1");
  EXPECT_EQ(a.tool_calls[0].name, "get_weather");
  EXPECT_EQ(a.tool_calls[0].arguments.dump(), R"({"unit":"c","city":"Paris"})");  // an object, order kept
  EXPECT_EQ(r.messages[2].role, "tool");
  EXPECT_EQ(r.messages[2].tool_call_id, "call_1");
  EXPECT_EQ(r.messages[2].name, "get_weather");
}

TEST(ToolRequest, Errors) {
  struct Case {
    std::string body;
    const char* param;
    const char* message;
  };
  const std::string user = R"({"role": "user", "content": "hi"})";
  auto with_messages = [&](const std::string& m) { return R"({"messages": [)" + user + ", " + m + "]}"; };
  const std::vector<Case> cases = {
      {Body(R"(, "tool_choice": {"type": "function", "function": {"name": "nope"}})"), "tool_choice.function.name",
       "tool_choice.function.name: names no function of tools: \"nope\""},
      {Body(R"(, "tool_choice": "sometimes")"), "tool_choice", "expected \"auto\", \"none\", \"required\" or an object"},
      {Body(R"(, "tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "any", "tools": []}})"),
       "tool_choice.allowed_tools.mode", "expected \"auto\" or \"required\""},
      {Body(R"(, "tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": []}})"),
       "tool_choice.allowed_tools.tools", "expected a non-empty array"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function": {"name": "a b"}}]})",
       "tools[0].function.name", "must be 1 to 64 characters of a-z, A-Z, 0-9, _ and -"},
      {R"({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "code_interpreter"}]})", "tools[0].type",
       "only \"function\" tools are supported, got \"code_interpreter\""},
      {R"({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function": {"name": "a"}},
          {"type": "function", "function": {"name": "a"}}]})",
       "tools[1].function.name", "repeats the name \"a\""},
      {R"({"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function": {"name": "a",
          "parameters": "object"}}]})",
       "tools[0].function.parameters", "expected a JSON schema object, got string"},
      {with_messages(R"({"role": "tool", "content": "18 C"})"), "messages[1].tool_call_id",
       "messages[1].tool_call_id: is required in a tool message"},
      {with_messages(R"({"role": "tool", "tool_call_id": 7, "content": "18 C"})"), "messages[1].tool_call_id",
       "expected a string, got integer"},
      {with_messages(R"({"role": "user", "tool_call_id": "x", "content": "18 C"})"), "messages[1].tool_call_id",
       "only tool messages answer a tool call"},
      {with_messages(R"({"role": "user", "content": "x", "tool_calls": []})"), "messages[1].tool_calls",
       "only assistant messages carry tool calls"},
      {with_messages(R"({"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
          "function": {"name": "f", "arguments": "{not json"}}]})"),
       "messages[1].tool_calls[0].function.arguments", "is not valid JSON"},
      {with_messages(R"({"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
          "function": {"name": "f"}}]})"),
       "messages[1].tool_calls[0].function.arguments", "is required"},
      {with_messages(R"({"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
          "function": {"name": "f", "arguments": "[1]"}}]})"),
       "messages[1].tool_calls[0].function.arguments", "expected a JSON object"},
  };
  for (const Case& c : cases) {
    GenerateRequest r;
    ApiError e;
    EXPECT_FALSE(ParseChatCompletionRequest(c.body, ApiLimits{}, &r, &e)) << c.body;
    EXPECT_EQ(e.http_status, 400) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    EXPECT_THAT(e.message, HasSubstr(c.message)) << c.body;
  }
}

TEST(ToolRequest, ArgumentsNestedPastTheLimitAreRefusedBeforeParsing) {
  ApiLimits limits;
  std::string deep = std::string(200, '[') + std::string(200, ']');
  const std::string args = "{\"a\": " + deep + "}";
  // The arguments are a JSON text inside a string of the body: its quotes escaped.
  std::string escaped;
  for (char ch : args) escaped += ch == '"' ? std::string("\\\"") : std::string(1, ch);
  const std::string body = R"({"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
      "function": {"name": "f", "arguments": ")" + escaped + R"("}}]}]})";
  GenerateRequest r;
  ApiError e;
  EXPECT_FALSE(ParseChatCompletionRequest(body, limits, &r, &e));
  EXPECT_EQ(e.param, "messages[0].tool_calls[0].function.arguments");
  EXPECT_THAT(e.message, HasSubstr("deeper than 64 levels"));
}

}  // namespace
}  // namespace radixserve::api
