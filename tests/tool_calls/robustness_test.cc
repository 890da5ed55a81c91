// Broken and truncated model outputs: every family's parser, on thousands of mutations of good
// outputs (bytes dropped, repeated, replaced, markup fragments of every family inserted, the text
// cut short), never crashes and still gives one result however the text is cut into pieces.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/tool_calls/output_parser.h"
#include "tests/tool_calls/split_check.h"

namespace radixserve::tool_calls {
namespace {

using F = ToolCallFamily;

// Good outputs per family, mutated below.
const std::map<F, std::vector<std::string>>& Seeds() {
  static const std::map<F, std::vector<std::string>> seeds = {
      {F::kNone, {"Hello <b>there</b>."}},
      {F::kHermes,
       {"<think>\nPlan.\n</think>\n\nOK.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, \"x\"]}}\n</tool_call>\n"
        "<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_call>"}},
      {F::kQwen3Coder,
       {"<think>\nPlan.\n</think>\n\n<tool_call>\n<function=f>\n<parameter=a>\n3\n</parameter>\n<parameter=b>\nx y\n</parameter>\n"
        "</function>\n</tool_call>"}},
      {F::kLlama3, {"{\"name\": \"f\", \"parameters\": {\"a\": 1}}; {\"name\": \"g\", \"parameters\": {}}",
                    "Hi<|python_tag|>{\"name\": \"f\", \"parameters\": {\"q\": \"é\"}}"}},
      {F::kMistralNemo, {"Ok[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"a\": 1}, \"id\": \"abcdefghi\"}, {\"name\": \"g\", \"arguments\": {}}]"}},
      {F::kMistralSmall, {"[THINK]Hm.[/THINK]Ok[TOOL_CALLS]f[CALL_ID]abcdefghi[ARGS]{\"a\": 1}[TOOL_CALLS]g[ARGS]{}"}},
      {F::kFunctionaryV32, {"all\nOk.>>>f\n{\"a\": 1}>>>g\n{}"}},
      {F::kFirefunctionV2, {"Ok functools[{\"name\": \"f\", \"arguments\": {\"a\": 1}}, {\"name\": \"g\", \"arguments\": {}}]"}},
      {F::kGranite, {"<think>Hm.</think><response>Ok</response><|tool_call|>[{\"name\": \"f\", \"arguments\": {\"a\": 1}}]"}},
      {F::kCommandR7B,
       {"<|START_THINKING|>Hm.<|END_THINKING|><|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"f\", \"parameters\": {}}]"
        "<|END_ACTION|><|START_RESPONSE|>Ok<|END_RESPONSE|>"}},
      {F::kGptOss,
       {"<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json"
        "<|message|>{\"a\": 1}<|call|>",
        "<|channel|>final<|message|>Ok.<|return|>"}},
      {F::kDeepSeekR1,
       {"<think>\nHm.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": 1}\n```"
        "<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>g\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"}},
      {F::kGemma4,
       {"<|channel>thought\nHm.<channel|><|tool_call>call:f{a:<|\"|>x<|\"|>,b:[1,true]}<tool_call|><|tool_call>call:g{}<tool_call|>"
        "<|tool_response>"}},
      {F::kMiniCpm5,
       {"<think>\nHm.\n</think>\n\n<function name=\"f\"><param name=\"a\">1</param><param name=\"b\"><![CDATA[x<y]]></param>"
        "</function>\n<function name=\"g\"></function>"}},
  };
  return seeds;
}

// Fragments of every family's markup, spliced into outputs.
const std::vector<std::string>& Fragments() {
  static const std::vector<std::string> f = {
      "<tool_call>", "</tool_call>", "<think>", "</think>", "<function=", "<parameter=", "</parameter>", "</function>",
      "<|python_tag|>", ";", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]", ">>>", "all\n", "functools[",
      "<|tool_call|>", "<|START_ACTION|>", "<|END_ACTION|>", "<|START_THINKING|>", "<|END_THINKING|>", "<|channel|>",
      "<|message|>", "<|end|>", "<|call|>", "<|start|>", " to=functions.", "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>",
      "<｜tool▁sep｜>", "```", "<|tool_call>", "<tool_call|>", "call:", "<|\"|>", "<|channel>thought", "<channel|>",
      "<function name=\"", "<param name=\"", "\">", "</param>", "<![CDATA[", "]]>", "{", "}", "[", "]", "\"", ":", ",",
      "\n", " ", "\\", "é", "🎉", "{\"name\": \"h\", \"arguments\": {}}"};
  return f;
}

struct Rng {
  uint64_t s;
  uint64_t Next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return s >> 33;
  }
  size_t Below(size_t n) { return n == 0 ? 0 : Next() % n; }
};

std::string Mutate(std::string t, Rng& rng) {
  int edits = 1 + rng.Below(3);
  for (int e = 0; e < edits; ++e) {
    size_t at = rng.Below(t.size() + 1);
    switch (rng.Below(5)) {
      case 0:  // truncate
        t.resize(at);
        break;
      case 1:  // drop a range
        t.erase(at, 1 + rng.Below(8));
        break;
      case 2: {  // repeat a range
        std::string piece = t.substr(at, 1 + rng.Below(16));
        t.insert(at, piece);
        break;
      }
      case 3:  // insert markup
        t.insert(at, Fragments()[rng.Below(Fragments().size())]);
        break;
      case 4:  // replace a byte
        if (at < t.size()) t[at] = static_cast<char>(32 + rng.Below(95));
        break;
    }
  }
  return t;
}

TEST(Robustness, MutatedOutputsGiveOneResultAtAnyCut) {
  Rng rng{12345};
#ifdef RADIXSERVE_SANITIZED
  const int kMutations = 60;
#else
  const int kMutations = 300;
#endif
  for (const auto& [family, seeds] : Seeds()) {
    SCOPED_TRACE(std::string(FamilyName(family)));
    for (const std::string& seed : seeds) {
      for (int m = 0; m < kMutations; ++m) {
        std::string text = Mutate(seed, rng);
        bool starts_in_reasoning = rng.Below(4) == 0;
        for (bool cut : {false, true}) {
          ParsedOutput whole = ParseOutput(family, text, starts_in_reasoning, cut);
          std::string err;
          std::vector<std::string_view> bytes;
          for (size_t i = 0; i < text.size(); ++i) bytes.push_back(std::string_view(text).substr(i, 1));
          ParsedOutput by_byte = testing::Stream(family, bytes, starts_in_reasoning, cut, &err);
          ASSERT_EQ(by_byte, whole) << "text: " << text << "\nwhole: " << testing::Describe(whole)
                                    << "\nbytes: " << testing::Describe(by_byte);
          ASSERT_EQ(err, "") << text;
          size_t a = rng.Below(text.size() + 1), b = rng.Below(text.size() + 1);
          if (a > b) std::swap(a, b);
          std::string_view v = text;
          ParsedOutput three = testing::Stream(family, {v.substr(0, a), v.substr(a, b - a), v.substr(b)}, starts_in_reasoning, cut, &err);
          ASSERT_EQ(three, whole) << "text: " << text << " cuts " << a << "," << b;
          ASSERT_EQ(err, "") << text;
        }
      }
    }
  }
}

// Whatever the output, a family without calls in it loses no byte: kNone returns everything.
TEST(Robustness, NoFamilyPassesEverythingThrough) {
  Rng rng{7};
  for (int m = 0; m < 200; ++m) {
    std::string text = Mutate(Seeds().at(F::kHermes)[0], rng);
    EXPECT_EQ(ParseOutput(F::kNone, text, false, false).content, text);
  }
}

}  // namespace
}  // namespace radixserve::tool_calls
