// CallGrammarSpec: the grammar spec of each family's call syntax, and the promise behind it: a call
// written the way the grammar forces is read back by the family's own parser as that call.
#include "core/tool_calls/call_grammar.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/tool_calls/call_id.h"
#include "core/tool_calls/output_parser.h"

namespace radixserve::tool_calls {
namespace {

using nlohmann::ordered_json;

const std::vector<ToolCallFamily> kJsonFamilies = {
    ToolCallFamily::kHermes,         ToolCallFamily::kLlama3,   ToolCallFamily::kMistralNemo,
    ToolCallFamily::kMistralSmall,   ToolCallFamily::kFunctionaryV32, ToolCallFamily::kFirefunctionV2,
    ToolCallFamily::kGranite,        ToolCallFamily::kCommandR7B, ToolCallFamily::kGptOss,
    ToolCallFamily::kDeepSeekR1};

TEST(CallGrammar, EveryJsonFamilysForcedCallIsReadBackByItsParser) {
  const std::string args = R"({"city": "Paris", "days": [1, 2], "unit": {"kind": "celsius"}})";
  for (ToolCallFamily f : kJsonFamilies) {
    for (CallMode mode : {CallMode::kRequired, CallMode::kAuto}) {
      Result<std::string> text = RenderCallForTest(f, "get_weather", args, mode);
      if (f == ToolCallFamily::kFunctionaryV32 && mode == CallMode::kAuto) {
        EXPECT_EQ(text.status().code(), StatusCode::kUnsupported);
        continue;
      }
      ASSERT_TRUE(text.ok()) << FamilyName(f) << ": " << text.status().message();
      // Auto mode: the model may write text first (gpt-oss: an analysis message, then the
      // commentary channel's header); the group starts at the trigger.
      const bool oss = f == ToolCallFamily::kGptOss;
      const std::string before =
          oss ? "<|channel|>analysis<|message|>Let me check.<|end|><|start|>assistant<|channel|>commentary "
              : "Let me check. ";
      const std::string output = mode == CallMode::kAuto ? before + *text : *text;
      ParsedOutput parsed = ParseOutput(f, output, /*starts_in_reasoning=*/false, /*cut_by_length=*/false);
      SCOPED_TRACE(std::string(FamilyName(f)) + (mode == CallMode::kAuto ? " auto: " : " required: ") + output);
      ASSERT_EQ(parsed.tool_calls.size(), 1u);
      EXPECT_EQ(parsed.tool_calls[0].name, "get_weather");
      EXPECT_EQ(ordered_json::parse(parsed.tool_calls[0].arguments), ordered_json::parse(args));
      const bool auto_text = mode == CallMode::kAuto;
      EXPECT_EQ(parsed.content, auto_text && !oss ? "Let me check." : "");
      EXPECT_EQ(parsed.reasoning, auto_text && oss ? "Let me check." : "");
    }
  }
}

TEST(CallGrammar, SpecListsEveryToolWithItsSchemaAndTheModesLimits) {
  std::vector<CallableTool> tools = {{"a", ordered_json{{"type", "object"}, {"properties", {{"x", {{"type", "integer"}}}}}}},
                                     {"b", nullptr}};
  Result<std::string> spec = CallGrammarSpec(ToolCallFamily::kHermes, tools, {CallMode::kRequired, true, 1});
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ordered_json j = ordered_json::parse(*spec);
  ASSERT_EQ(j["calls"].size(), 2u);
  EXPECT_EQ(j["calls"][0]["begin"], "<tool_call>\n{\"name\": \"a\", \"arguments\": ");
  EXPECT_EQ(j["calls"][0]["schema"]["properties"]["x"]["type"], "integer");
  EXPECT_EQ(j["calls"][1]["schema"], (ordered_json{{"type", "object"}}));
  EXPECT_EQ(j["max_calls"], -1);
  EXPECT_FALSE(j.contains("trigger"));

  spec = CallGrammarSpec(ToolCallFamily::kHermes, tools, {CallMode::kAuto, false, 0});
  ASSERT_TRUE(spec.ok());
  j = ordered_json::parse(*spec);
  EXPECT_EQ(j["trigger"], "<tool_call>");
  EXPECT_EQ(j["max_calls"], 1);  // parallel_tool_calls false
  EXPECT_EQ(j["max_whitespace"], 0);
}

TEST(CallGrammar, FamiliesWithoutJsonArgumentsHaveNoGrammar) {
  for (ToolCallFamily f : {ToolCallFamily::kQwen3Coder, ToolCallFamily::kGemma4, ToolCallFamily::kMiniCpm5,
                           ToolCallFamily::kNone}) {
    Result<std::string> spec = CallGrammarSpec(f, {{"a", nullptr}}, {});
    EXPECT_EQ(spec.status().code(), StatusCode::kUnsupported) << FamilyName(f);
  }
}

TEST(CallId, MistralNemoGetsNineAlphanumericsOthersOpenAisShape) {
  const std::string nemo = NewToolCallId(ToolCallFamily::kMistralNemo);
  ASSERT_EQ(nemo.size(), 9u);
  for (char c : nemo) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)));
  const std::string other = NewToolCallId(ToolCallFamily::kHermes);
  EXPECT_EQ(other.rfind("call_", 0), 0u);
  EXPECT_EQ(other.size(), 29u);
  EXPECT_NE(other, NewToolCallId(ToolCallFamily::kHermes));
}

}  // namespace
}  // namespace radixserve::tool_calls
