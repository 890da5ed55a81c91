// Every family's parser on canned model outputs: one call, parallel calls, text before a call, a
// call cut off by max_tokens, reasoning then a call, plain text, and malformed markup. Each output
// is parsed whole, cut in two at every byte boundary and fed byte by byte, with the same result
// every time (split_check.h).
#include <gtest/gtest.h>

#include "core/tool_calls/output_parser.h"
#include "tests/tool_calls/split_check.h"

namespace radixserve::tool_calls {
namespace {

using testing::Call;
using testing::ExpectEverySplit;
using testing::Out;
using F = ToolCallFamily;

constexpr bool kInReasoning = true;
constexpr bool kCut = true;

const char* kWeatherArgs = R"({"city": "Paris", "unit": "celsius"})";
const char* kSearchArgs = R"({"query": "\"événements\" à Paris 🎉", "max_results": 3})";

// ---- Hermes / Qwen2.5 / QwQ ----------------------------------------------------------------

TEST(HermesParser, OneCall) {
  ExpectEverySplit(F::kHermes,
                   "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>",
                   Out("", "", {Call("get_weather", kWeatherArgs)}));
}

TEST(HermesParser, ParallelCalls) {
  ExpectEverySplit(F::kHermes,
                   "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>\n"
                   "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"\\\"événements\\\" à Paris 🎉\", \"max_results\": 3}}\n</tool_call>",
                   Out("", "", {Call("get_weather", kWeatherArgs), Call("search", kSearchArgs)}));
}

TEST(HermesParser, TextBeforeAndAfter) {
  ExpectEverySplit(F::kHermes,
                   "Let me check the weather.\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>\n\nDone.",
                   Out("Let me check the weather.\n\nDone.", "", {Call("get_weather", "{}")}));
}

TEST(HermesParser, CutByLength) {
  ExpectEverySplit(F::kHermes, "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"pari",
                   Out("", "", {Call("search", R"({"query": "pari)")}), false, kCut);
  // Cut before the name is known: no call, the text as written.
  ExpectEverySplit(F::kHermes, "Checking.\n<tool_call>\n{\"na", Out("Checking.\n<tool_call>\n{\"na"), false, kCut);
}

TEST(HermesParser, ReasoningThenCall) {
  const char* call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>";
  ExpectEverySplit(F::kHermes, std::string("<think>\nThe user wants the weather.\n</think>\n\n") + call,
                   Out("", "The user wants the weather.", {Call("get_weather", kWeatherArgs)}));
  // QwQ / Qwen3 prompts can end inside <think>.
  ExpectEverySplit(F::kHermes, std::string("The user wants the weather.\n</think>\n\n") + call,
                   Out("", "The user wants the weather.", {Call("get_weather", kWeatherArgs)}), kInReasoning);
  // Reasoning cut off by max_tokens stays reasoning.
  ExpectEverySplit(F::kHermes, "<think>\nStill thinking", Out("", "Still thinking"), false, kCut);
}

TEST(HermesParser, PlainText) {
  ExpectEverySplit(F::kHermes, "Hello! How can I help you today?\n", Out("Hello! How can I help you today?\n"));
  // <think> counts only at the start; markup-looking text elsewhere is text.
  ExpectEverySplit(F::kHermes, "Use <think> tags and a < sign.", Out("Use <think> tags and a < sign."));
}

TEST(HermesParser, MalformedCallIsContent) {
  ExpectEverySplit(F::kHermes, "<tool_call>\nnot json\n</tool_call>", Out("<tool_call>\nnot json\n</tool_call>"));
  ExpectEverySplit(F::kHermes, "A <tool_call>{\"arguments\": {}}</tool_call> B",
                   Out("A <tool_call>{\"arguments\": {}}</tool_call> B"));
  // Broken after the name: the call keeps what came, the rest is text.
  ExpectEverySplit(F::kHermes, "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1} oops</tool_call>",
                   Out("oops</tool_call>", "", {Call("f", R"({"a": 1})")}));
}

TEST(HermesParser, KeyOrderAndEncodedArguments) {
  ExpectEverySplit(F::kHermes, "<tool_call>{\"arguments\": {\"a\": [1, {\"b\": null}]}, \"name\": \"f\"}</tool_call>",
                   Out("", "", {Call("f", R"({"a": [1, {"b": null}]})")}));
  ExpectEverySplit(F::kHermes, "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>",
                   Out("", "", {Call("f", R"({"a": 1})")}));
  // A missing closing tag (a stop string took it) is fine.
  ExpectEverySplit(F::kHermes, "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n", Out("", "", {Call("f", "{}")}));
}

// ---- Qwen3-Coder / Qwen3.5 -----------------------------------------------------------------

TEST(Qwen3CoderParser, OneCall) {
  ExpectEverySplit(F::kQwen3Coder,
                   "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=unit>\ncelsius\n"
                   "</parameter>\n</function>\n</tool_call>",
                   Out("", "", {Call("get_weather", kWeatherArgs)}));
}

TEST(Qwen3CoderParser, ValueTypes) {
  ExpectEverySplit(F::kQwen3Coder,
                   "<tool_call>\n<function=f>\n<parameter=days>\n3\n</parameter>\n<parameter=hourly>\nTrue\n</parameter>\n"
                   "<parameter=lang>\nNone\n</parameter>\n<parameter=hours>\n[6, 12, 18]\n</parameter>\n"
                   "<parameter=location>\n{\"lat\": -23.55}\n</parameter>\n<parameter=code>\ndef f():\n    return \"x\"\n"
                   "</parameter>\n<parameter=zip>\n02134\n</parameter>\n</function>\n</tool_call>",
                   Out("", "", {Call("f", R"({"days": 3, "hourly": true, "lang": null, "hours": [6, 12, 18], )"
                                          R"("location": {"lat": -23.55}, "code": "def f():\n    return \"x\"", "zip": "02134"})")}));
}

TEST(Qwen3CoderParser, ParallelCallsAndTextBefore) {
  ExpectEverySplit(F::kQwen3Coder,
                   "I'll look both up.\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
                   "<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=search>\n"
                   "<parameter=query>\n\"événements\" à Paris 🎉\n</parameter>\n<parameter=max_results>\n3\n</parameter>\n"
                   "</function>\n</tool_call>",
                   Out("I'll look both up.", "", {Call("get_weather", kWeatherArgs), Call("search", kSearchArgs)}));
}

TEST(Qwen3CoderParser, CutInsideAValue) {
  const char* text = "<tool_call>\n<function=write>\n<parameter=path>\na.txt\n</parameter>\n<parameter=text>\nline one\nli";
  ExpectEverySplit(F::kQwen3Coder, text, Out("", "", {Call("write", R"({"path": "a.txt", "text": "line one\nli)")}),
                   false, kCut);
  // The same end by a stop string: the object is closed.
  ExpectEverySplit(F::kQwen3Coder, text, Out("", "", {Call("write", R"({"path": "a.txt", "text": "line one\nli"})")}));
  ExpectEverySplit(F::kQwen3Coder, "<tool_call>\n<function=f>\n<param", Out("", "", {Call("f", "{")}), false, kCut);
}

TEST(Qwen3CoderParser, ReasoningThenCall) {
  // Qwen3.5's generation prompt ends with "<think>\n".
  ExpectEverySplit(F::kQwen3Coder,
                   "The user wants current weather.\n</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\n"
                   "Paris\n</parameter>\n</function>\n</tool_call>",
                   Out("", "The user wants current weather.", {Call("get_weather", R"({"city": "Paris"})")}),
                   kInReasoning);
}

TEST(Qwen3CoderParser, PlainTextAndMalformed) {
  ExpectEverySplit(F::kQwen3Coder, "Paris is sunny.", Out("Paris is sunny."));
  ExpectEverySplit(F::kQwen3Coder, "<tool_call>\nhello\n</tool_call>", Out("<tool_call>\nhello\n</tool_call>"));
  ExpectEverySplit(F::kQwen3Coder, "<tool_call>\n<function=bad name>", Out("<tool_call>\n<function=bad name>"));
}

// ---- Llama 3.x ------------------------------------------------------------------------------

TEST(Llama3Parser, OneCall) {
  ExpectEverySplit(F::kLlama3, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}",
                   Out("", "", {Call("get_weather", kWeatherArgs)}));
  ExpectEverySplit(F::kLlama3, "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
                   Out("", "", {Call("get_weather", R"({"city": "Paris"})")}));
  ExpectEverySplit(F::kLlama3, "{\"type\": \"function\", \"name\": \"now\", \"parameters\": {}}", Out("", "", {Call("now", "{}")}));
}

TEST(Llama3Parser, CallsSeparatedBySemicolons) {
  ExpectEverySplit(F::kLlama3,
                   "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}; "
                   "{\"name\": \"search\", \"parameters\": {\"query\": \"\\\"événements\\\" à Paris 🎉\", \"max_results\": 3}}",
                   Out("", "", {Call("get_weather", kWeatherArgs), Call("search", kSearchArgs)}));
  ExpectEverySplit(F::kLlama3, "{\"name\": \"f\", \"parameters\": {}}; that is all",
                   Out("; that is all", "", {Call("f", "{}")}));
}

TEST(Llama3Parser, TextBeforeACall) {
  ExpectEverySplit(F::kLlama3, "Let me look.\n<|python_tag|>{\"name\": \"f\", \"parameters\": {\"a\": 1}}",
                   Out("Let me look.", "", {Call("f", R"({"a": 1})")}));
  // A JSON object after text is text.
  ExpectEverySplit(F::kLlama3, "Here: {\"name\": \"f\", \"parameters\": {}}", Out("Here: {\"name\": \"f\", \"parameters\": {}}"));
}

TEST(Llama3Parser, JsonAnswersAreNotCalls) {
  ExpectEverySplit(F::kLlama3, "{\"name\": \"John\", \"age\": 30}", Out("{\"name\": \"John\", \"age\": 30}"));
  ExpectEverySplit(F::kLlama3, "  {\"name\": \"John\"}", Out("  {\"name\": \"John\"}"));
  ExpectEverySplit(F::kLlama3, "{\"parameters\": {}, \"name\": \"f\"}", Out("{\"parameters\": {}, \"name\": \"f\"}"));
  ExpectEverySplit(F::kLlama3, "The answer is 42.", Out("The answer is 42."));
}

TEST(Llama3Parser, CutByLength) {
  ExpectEverySplit(F::kLlama3, "{\"name\": \"search\", \"parameters\": {\"query\": \"par",
                   Out("", "", {Call("search", R"({"query": "par)")}), false, kCut);
  ExpectEverySplit(F::kLlama3, "{\"name\": \"sea", Out("{\"name\": \"sea"), false, kCut);
}

// ---- Mistral Nemo ---------------------------------------------------------------------------

TEST(MistralNemoParser, Calls) {
  ExpectEverySplit(F::kMistralNemo,
                   "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}, \"id\": \"a1B2c3D4e\"}]",
                   Out("", "", {Call("get_weather", kWeatherArgs, "a1B2c3D4e")}));
  ExpectEverySplit(F::kMistralNemo,
                   "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}, \"id\": \"a1B2c3D4e\"}, "
                   "{\"name\": \"search\", \"arguments\": {\"query\": \"\\\"événements\\\" à Paris 🎉\", \"max_results\": 3}, \"id\": \"f5G6h7I8j\"}]",
                   Out("", "", {Call("get_weather", kWeatherArgs, "a1B2c3D4e"), Call("search", kSearchArgs, "f5G6h7I8j")}));
}

TEST(MistralNemoParser, TextCutAndMalformed) {
  ExpectEverySplit(F::kMistralNemo, "Sure.[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}}]", Out("Sure.", "", {Call("f", "{}")}));
  ExpectEverySplit(F::kMistralNemo, "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"x\": [1, 2",
                   Out("", "", {Call("f", R"({"x": [1, 2)")}), false, kCut);
  ExpectEverySplit(F::kMistralNemo, "[TOOL_CALLS] oops", Out("[TOOL_CALLS] oops"));
  ExpectEverySplit(F::kMistralNemo, "Plain answer.", Out("Plain answer."));
}

// ---- Mistral Small 3.2 / Ministral 3 ---------------------------------------------------------

TEST(MistralSmallParser, Calls) {
  ExpectEverySplit(F::kMistralSmall, "[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{\"city\": \"Paris\", \"unit\": \"celsius\"}",
                   Out("", "", {Call("get_weather", kWeatherArgs, "a1B2c3D4e")}));
  ExpectEverySplit(F::kMistralSmall,
                   "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\", \"unit\": \"celsius\"}[TOOL_CALLS]search[ARGS]"
                   "{\"query\": \"\\\"événements\\\" à Paris 🎉\", \"max_results\": 3}",
                   Out("", "", {Call("get_weather", kWeatherArgs), Call("search", kSearchArgs)}));
}

TEST(MistralSmallParser, ReasoningTextCutMalformed) {
  ExpectEverySplit(F::kMistralSmall, "[THINK]Weather needs a tool.[/THINK]Checking.[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}",
                   Out("Checking.", "Weather needs a tool.", {Call("get_weather", R"({"city": "Paris"})")}));
  ExpectEverySplit(F::kMistralSmall, "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Pa",
                   Out("", "", {Call("get_weather", R"({"city": "Pa)")}), false, kCut);
  ExpectEverySplit(F::kMistralSmall, "[TOOL_CALLS]get weather[ARGS]{}", Out("[TOOL_CALLS]get weather[ARGS]{}"));
  ExpectEverySplit(F::kMistralSmall, "[TOOL_CALLS]f[ARGS]nope", Out("[TOOL_CALLS]f[ARGS]nope"));
  ExpectEverySplit(F::kMistralSmall, "Bonjour !", Out("Bonjour !"));
}

// ---- functionary v3.2 -----------------------------------------------------------------------

TEST(FunctionaryParser, Calls) {
  ExpectEverySplit(F::kFunctionaryV32, "get_weather\n{\"city\": \"Paris\", \"unit\": \"celsius\"}",
                   Out("", "", {Call("get_weather", kWeatherArgs)}));
  ExpectEverySplit(F::kFunctionaryV32,
                   "all\nLet me check both.>>>get_weather\n{\"city\": \"Paris\", \"unit\": \"celsius\"}>>>search\n"
                   "{\"query\": \"\\\"événements\\\" à Paris 🎉\", \"max_results\": 3}",
                   Out("Let me check both.", "", {Call("get_weather", kWeatherArgs), Call("search", kSearchArgs)}));
  ExpectEverySplit(F::kFunctionaryV32, ">>>get_weather\n{\"city\": \"Paris\"}", Out("", "", {Call("get_weather", R"({"city": "Paris"})")}));
}

TEST(FunctionaryParser, TextCutMalformed) {
  ExpectEverySplit(F::kFunctionaryV32, "all\nHello there!\nHow are you?", Out("Hello there!\nHow are you?"));
  ExpectEverySplit(F::kFunctionaryV32, "search\n{\"query\": \"pa", Out("", "", {Call("search", R"({"query": "pa)")}), false, kCut);
  ExpectEverySplit(F::kFunctionaryV32, "python\nprint(1)", Out("python\nprint(1)"));
  ExpectEverySplit(F::kFunctionaryV32, "Hello, no recipient.", Out("Hello, no recipient."));
  ExpectEverySplit(F::kFunctionaryV32, "all", Out(""));
}

// ---- firefunction v2 ------------------------------------------------------------------------

TEST(FirefunctionParser, Calls) {
  ExpectEverySplit(F::kFirefunctionV2,
                   " functools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}, "
                   "{\"name\": \"search\", \"arguments\": {\"query\": \"\\\"événements\\\" à Paris 🎉\", \"max_results\": 3}}]",
                   Out("", "", {Call("get_weather", kWeatherArgs), Call("search", kSearchArgs)}));
  ExpectEverySplit(F::kFirefunctionV2, "Checking. functools[{\"name\": \"f\", \"arguments\": {}}]", Out("Checking.", "", {Call("f", "{}")}));
}

TEST(FirefunctionParser, TextCutMalformed) {
  ExpectEverySplit(F::kFirefunctionV2, " functools[{\"name\": \"f\", \"arguments\": {\"a\": tr",
                   Out("", "", {Call("f", R"({"a": tr)")}), false, kCut);
  ExpectEverySplit(F::kFirefunctionV2, "Use functools.partial or functools[0].", Out("Use functools.partial or functools[0]."));
}

// ---- Granite 3.3 ----------------------------------------------------------------------------

TEST(GraniteParser, Calls) {
  ExpectEverySplit(F::kGranite,
                   "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}, "
                   "{\"name\": \"search\", \"arguments\": {\"query\": \"\\\"événements\\\" à Paris 🎉\", \"max_results\": 3}}]",
                   Out("", "", {Call("get_weather", kWeatherArgs), Call("search", kSearchArgs)}));
  ExpectEverySplit(F::kGranite, "I will check.<|tool_call|>[{\"name\": \"f\", \"arguments\": {\"a\": 1",
                   Out("I will check.", "", {Call("f", R"({"a": 1)")}), false, kCut);
}

TEST(GraniteParser, ThinkingAndResponse) {
  ExpectEverySplit(F::kGranite, "<think>Simple greeting.</think><response>Hello! How can I help?</response>",
                   Out("Hello! How can I help?", "Simple greeting."));
  ExpectEverySplit(F::kGranite, "Hello!", Out("Hello!"));
}

// ---- Command R7B ----------------------------------------------------------------------------

TEST(CommandR7BParser, Calls) {
  ExpectEverySplit(F::kCommandR7B,
                   "<|START_THINKING|>I will check both.<|END_THINKING|><|START_ACTION|>[\n"
                   "    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"unit\": \"celsius\"}},\n"
                   "    {\"tool_call_id\": \"1\", \"tool_name\": \"search\", \"parameters\": {\"query\": \"\\\"événements\\\" à Paris 🎉\", \"max_results\": 3}}\n"
                   "]<|END_ACTION|>",
                   Out("", "I will check both.", {Call("get_weather", kWeatherArgs, "0"), Call("search", kSearchArgs, "1")}));
}

TEST(CommandR7BParser, ResponseCutMalformed) {
  ExpectEverySplit(F::kCommandR7B, "<|START_THINKING|><|END_THINKING|><|START_RESPONSE|>Hello!<|END_RESPONSE|>", Out("Hello!"));
  ExpectEverySplit(F::kCommandR7B, "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"f\", \"parameters\": {\"q\": \"x",
                   Out("", "", {Call("f", R"({"q": "x)", "0")}), false, kCut);
  ExpectEverySplit(F::kCommandR7B, "<|START_ACTION|>nothing<|END_ACTION|>", Out("<|START_ACTION|>nothing<|END_ACTION|>"));
}

// ---- gpt-oss --------------------------------------------------------------------------------

TEST(GptOssParser, Calls) {
  ExpectEverySplit(F::kGptOss,
                   "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary "
                   "to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\", \"unit\": \"celsius\"}<|call|>",
                   Out("", "Need the weather.", {Call("get_weather", kWeatherArgs)}));
  // The header order the template renders.
  ExpectEverySplit(F::kGptOss, " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\", \"unit\": \"celsius\"}<|call|>",
                   Out("", "", {Call("get_weather", kWeatherArgs)}));
}

TEST(GptOssParser, FinalPreambleCut) {
  ExpectEverySplit(F::kGptOss,
                   "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final<|message|>Hello! 17 × 24 = 408.<|return|>",
                   Out("Hello! 17 × 24 = 408.", "Simple."));
  ExpectEverySplit(F::kGptOss,
                   "<|channel|>commentary<|message|>Checking now.<|end|><|start|>assistant<|channel|>commentary "
                   "to=functions.search <|constrain|>json<|message|>{\"query\": \"par",
                   Out("Checking now.", "", {Call("search", R"({"query": "par)")}), false, kCut);
  ExpectEverySplit(F::kGptOss, "<|channel|>analysis<|message|>Long thou", Out("", "Long thou"), false, kCut);
  ExpectEverySplit(F::kGptOss, "Hello, plain text.", Out("Hello, plain text."));
}

// ---- DeepSeek R1 ----------------------------------------------------------------------------

TEST(DeepSeekR1Parser, Calls) {
  ExpectEverySplit(F::kDeepSeekR1,
                   "<think>\nWeather and events.\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
                   "```json\n{\"city\": \"Paris\", \"unit\": \"celsius\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n"
                   "```json\n{\"query\": \"\\\"événements\\\" à Paris 🎉\", \"max_results\": 3}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                   Out("", "Weather and events.", {Call("get_weather", kWeatherArgs), Call("search", kSearchArgs)}));
}

TEST(DeepSeekR1Parser, TextCutMalformed) {
  ExpectEverySplit(F::kDeepSeekR1,
                   "Thinking done.\n</think>\n\nLet me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```"
                   "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                   Out("Let me check.", "Thinking done.", {Call("f", "{}")}), kInReasoning);
  ExpectEverySplit(F::kDeepSeekR1, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": \"b",
                   Out("", "", {Call("f", R"({"a": "b)")}), false, kCut);
  ExpectEverySplit(F::kDeepSeekR1, "<｜tool▁calls▁begin｜>oops", Out("<｜tool▁calls▁begin｜>oops"));
  ExpectEverySplit(F::kDeepSeekR1, "The answer is 408.", Out("The answer is 408."));
}

// ---- Gemma 4 --------------------------------------------------------------------------------

TEST(Gemma4Parser, Calls) {
  ExpectEverySplit(F::kGemma4, "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,unit:<|\"|>celsius<|\"|>}<tool_call|>",
                   Out("", "", {Call("get_weather", kWeatherArgs)}));
  ExpectEverySplit(F::kGemma4,
                   "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,unit:<|\"|>celsius<|\"|>}<tool_call|>"
                   "<|tool_call>call:search{max_results:3,query:<|\"|>\"événements\" à Paris 🎉<|\"|>}<tool_call|><|tool_response>",
                   Out("", "", {Call("get_weather", kWeatherArgs),
                                Call("search", R"({"max_results": 3, "query": "\"événements\" à Paris 🎉"})")}));
}

TEST(Gemma4Parser, ValuesReasoningCut) {
  ExpectEverySplit(F::kGemma4,
                   "<|channel>thought\nA forecast.<channel|><|tool_call>call:f{alerts:false,days:3,hours:[6,12,18],lang:None,"
                   "location:{lat:-23.55,lon:-46.63},note:<|\"|>say \"hi\"\nthen\\go<|\"|>}<tool_call|>",
                   Out("", "A forecast.", {Call("f", R"({"alerts": false, "days": 3, "hours": [6, 12, 18], "lang": null, )"
                                                     R"("location": {"lat": -23.55, "lon": -46.63}, "note": "say \"hi\"\nthen\\go"})")}));
  ExpectEverySplit(F::kGemma4, "<|tool_call>call:f{q:<|\"|>par", Out("", "", {Call("f", R"({"q": "par)")}), false, kCut);
  ExpectEverySplit(F::kGemma4, "Hello!<|tool_call>nonsense", Out("Hello!<|tool_call>nonsense"));
  ExpectEverySplit(F::kGemma4, "Hello there.", Out("Hello there."));
}

// ---- MiniCPM5 -------------------------------------------------------------------------------

TEST(MiniCpm5Parser, Calls) {
  ExpectEverySplit(F::kMiniCpm5,
                   "<function name=\"get_weather\"><param name=\"city\">Paris</param><param name=\"unit\">celsius</param></function>\n"
                   "<function name=\"search\"><param name=\"query\">\"événements\" à Paris 🎉</param><param name=\"max_results\">3</param></function>",
                   Out("", "", {Call("get_weather", kWeatherArgs), Call("search", kSearchArgs)}));
}

TEST(MiniCpm5Parser, ValuesReasoningCut) {
  ExpectEverySplit(F::kMiniCpm5,
                   "<think>\nNeeds a tool.\n</think>\n\nOne moment.\n<function name=\"f\"><param name=\"text\"><![CDATA[a < b\n&c]]></param>"
                   "<param name=\"loc\">{'lat': -23.55, 'name': 'São'}</param><param name=\"on\">True</param></function>",
                   Out("One moment.", "Needs a tool.", {Call("f", R"({"text": "a < b\n&c", "loc": {"lat": -23.55, "name": "São"}, "on": true})")}));
  ExpectEverySplit(F::kMiniCpm5, "<function name=\"f\"><param name=\"q\">par", Out("", "", {Call("f", R"({"q": "par)")}), false, kCut);
  ExpectEverySplit(F::kMiniCpm5, "<function name=\"bad name\">", Out("<function name=\"bad name\">"));
  ExpectEverySplit(F::kMiniCpm5, "No tools needed.", Out("No tools needed."));
}

// ---- no family ------------------------------------------------------------------------------

TEST(PlainParser, EverythingIsContent) {
  ExpectEverySplit(F::kNone, "<think>x</think> <tool_call>{\"name\": \"f\"}</tool_call>\n",
                   Out("<think>x</think> <tool_call>{\"name\": \"f\"}</tool_call>\n"));
  ExpectEverySplit(F::kNone, "", Out(""));
}

// Every family passes plain text through unchanged, and an empty output is empty.
TEST(AllParsers, PlainTextAndEmpty) {
  for (ToolCallFamily f : AllFamilies()) {
    SCOPED_TRACE(std::string(FamilyName(f)));
    ExpectEverySplit(f, "", Out(""));
    ExpectEverySplit(f, "The capital of France is Paris.", Out("The capital of France is Paris."));
  }
}

// Families without a reasoning block ignore starts_in_reasoning (gpt-oss reads its channels).
TEST(AllParsers, ReasoningFlagIgnoredWithoutABlock) {
  for (ToolCallFamily f : AllFamilies()) {
    if (!SyntaxOf(f).reasoning_begin.empty() && f != F::kGptOss) continue;
    SCOPED_TRACE(std::string(FamilyName(f)));
    ExpectEverySplit(f, "Plain, simple text.", Out("Plain, simple text."), kInReasoning);
  }
}

// A stream shows a call as it is generated: the name as soon as it is known, JSON arguments byte by
// byte, XML parameters one by one.
TEST(Streaming, CallsArriveAsTheyAreGenerated) {
  auto feed_bytes = [](ToolCallFamily family, std::string_view text) {
    auto parser = MakeOutputParser(family, false);
    std::vector<OutputDelta> deltas;
    for (size_t i = 0; i < text.size(); ++i) deltas.push_back(parser->Feed(text.substr(i, 1)));
    deltas.push_back(parser->Finish(false));
    return deltas;
  };
  std::string hermes = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
  auto deltas = feed_bytes(F::kHermes, hermes);
  size_t named_at = hermes.find("get_weather\"") + 11;  // the byte that closes the name
  ASSERT_EQ(deltas[named_at].calls.size(), 1u);
  EXPECT_EQ(deltas[named_at].calls[0].name, "get_weather");
  int fragments = 0;
  for (const OutputDelta& d : deltas) fragments += !d.calls.empty() && !d.calls[0].arguments.empty();
  EXPECT_EQ(fragments, 17);  // {"city": "Paris"} and nothing else, one byte per Feed
  EXPECT_EQ(deltas[hermes.find("Paris")].calls.at(0).arguments, "P");

  std::string qwen = "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=b>\nx\n</parameter>\n</function>\n</tool_call>";
  deltas = feed_bytes(F::kQwen3Coder, qwen);
  std::vector<std::string> pieces;
  for (const OutputDelta& d : deltas) {
    if (!d.calls.empty() && !d.calls[0].arguments.empty()) pieces.push_back(d.calls[0].arguments);
  }
  EXPECT_EQ(pieces, (std::vector<std::string>{"{\"a\": 1", ", \"b\": \"x\"", "}"}));
}

}  // namespace
}  // namespace radixserve::tool_calls
