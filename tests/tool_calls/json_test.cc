// The pieces under the parsers: the incremental JSON scanner (accepts exactly JSON, events at the
// right offsets, the same at any cut), the JSON call reader, parameter values typed from raw text,
// Gemma 4's argument syntax, and the whitespace rule of the text channels.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/tool_calls/call_sink.h"
#include "core/tool_calls/gemma_arguments.h"
#include "core/tool_calls/json_call_reader.h"
#include "core/tool_calls/json_scanner.h"
#include "core/tool_calls/parameter_value.h"
#include "core/tool_calls/text_channel.h"

namespace radixserve::tool_calls {
namespace {

// Scans `text` whole (plus Finish), returning the state; kFailed when more than whitespace follows
// the value.
JsonScanner::State ScanAll(std::string_view text, std::vector<JsonScanner::Event>* events = nullptr) {
  std::vector<JsonScanner::Event> local;
  JsonScanner s;
  size_t used = s.Scan(text, events ? events : &local);
  s.Finish(events ? events : &local);
  if (text.substr(used).find_first_not_of(" \t\n\r") != std::string_view::npos) return JsonScanner::State::kFailed;
  return s.state();
}

TEST(JsonScanner, AcceptsWhatNlohmannAccepts) {
  const std::vector<std::string> texts = {
      "{}", "[]", " {\"a\": 1} ", "[1, -0, 0.5, 1e5, -2.5E-3, true, false, null]", "\"\\u00e9\\n\\\"\"", "{\"a\": {\"b\": [[]]}}",
      "01", "1.", ".5", "-", "[1,]", "{\"a\" 1}", "{\"a\":}", "{'a': 1}", "[1 2]", "tru", "nul", "\"a\nb\"", "\"\\x\"", "{]",
      "[}", "\"\\u12g4\"", "{\"a\":1,}", "42", "-7.25e+2", "\"é 🎉\"", "[\"a\", {\"b\": null}, 3]"};
  for (const std::string& t : texts) {
    bool want = nlohmann::json::accept(t);
    EXPECT_EQ(ScanAll(t) == JsonScanner::State::kDone, want) << t;
  }
}

TEST(JsonScanner, StopsAfterTheValueAndReportsOffsets) {
  JsonScanner s;
  std::vector<JsonScanner::Event> ev;
  std::string text = "{\"k\": [1, \"x\"]}tail";
  size_t used = s.Scan(text, &ev);
  EXPECT_EQ(used, text.size() - 4);
  EXPECT_EQ(s.state(), JsonScanner::State::kDone);
  using T = JsonScanner::EventType;
  using K = JsonScanner::Kind;
  std::vector<std::tuple<T, K, int, size_t>> want = {
      {T::kValueBegin, K::kObject, 0, 0}, {T::kKeyBegin, K::kString, 1, 1},  {T::kKeyEnd, K::kString, 1, 4},
      {T::kValueBegin, K::kArray, 1, 6},  {T::kValueBegin, K::kNumber, 2, 7}, {T::kValueEnd, K::kNumber, 2, 8},
      {T::kValueBegin, K::kString, 2, 10}, {T::kValueEnd, K::kString, 2, 13}, {T::kValueEnd, K::kArray, 1, 14},
      {T::kValueEnd, K::kObject, 0, 15}};
  ASSERT_EQ(ev.size(), want.size());
  for (size_t i = 0; i < ev.size(); ++i) {
    EXPECT_EQ(std::make_tuple(ev[i].type, ev[i].kind, ev[i].depth, ev[i].offset), want[i]) << i;
  }
  JsonScanner bad;
  std::vector<JsonScanner::Event> ev2;
  bad.Scan("[1, x]", &ev2);
  EXPECT_EQ(bad.state(), JsonScanner::State::kFailed);
  EXPECT_EQ(bad.error_offset(), 4u);
}

TEST(JsonScanner, SameEventsAtEveryCut) {
  std::string text = "{\"a\": [12, -3.5e2, \"s\\\"t\", true], \"b\": {\"c\": null}}";
  std::vector<JsonScanner::Event> whole;
  ASSERT_EQ(ScanAll(text, &whole), JsonScanner::State::kDone);
  for (size_t i = 0; i <= text.size(); ++i) {
    JsonScanner s;
    std::vector<JsonScanner::Event> ev;
    s.Scan(std::string_view(text).substr(0, i), &ev);
    s.Scan(std::string_view(text).substr(i), &ev);
    ASSERT_EQ(ev.size(), whole.size()) << i;
    for (size_t k = 0; k < ev.size(); ++k) ASSERT_EQ(ev[k].offset, whole[k].offset) << i;
  }
}

// Records what a reader reports.
struct Recorder : CallSink {
  std::vector<std::string> log;
  void BeginCall(std::string id, std::string name) override { log.push_back("begin " + name + " id=" + id); }
  void AppendArguments(std::string_view f) override {
    if (!log.empty() && log.back().starts_with("args ")) {
      log.back() += f;
    } else {
      log.push_back("args " + std::string(f));
    }
  }
  void SetCallId(std::string id) override { log.push_back("id " + id); }
  void EndCall() override { log.push_back("end"); }
};

TEST(JsonCallReader, ListOfCalls) {
  Recorder r;
  JsonCallReader reader(JsonCallReader::Shape::kCallList, false, &r);
  std::string text = R"([{"name": "a", "arguments": {"x": 1}, "id": "i1"}, {"id": "i2", "tool_name": "b"}] rest)";
  EXPECT_EQ(reader.Read(text), JsonCallReader::State::kDone);
  EXPECT_EQ(reader.end(), text.size() - 5);
  EXPECT_EQ(r.log, (std::vector<std::string>{"begin a id=", "args {\"x\": 1}", "id i1", "end", "begin b id=i2", "args {}", "end"}));
}

TEST(JsonCallReader, FailureSaysWhatNoCallClaimed) {
  {
    Recorder r;
    JsonCallReader reader(JsonCallReader::Shape::kCallList, false, &r);
    EXPECT_EQ(reader.Read(R"([{"name": "a", "arguments": {}}, {"x": 1}])"), JsonCallReader::State::kFailed);
    EXPECT_TRUE(reader.began_call());
    EXPECT_EQ(reader.unclaimed_from(), 33u);  // the second object, which has no name
    EXPECT_EQ(reader.fail_offset(), 41u);
  }
  {
    Recorder r;
    JsonCallReader reader(JsonCallReader::Shape::kCallObject, true, &r);
    EXPECT_EQ(reader.Read(R"({"name": "John", "age": 30})"), JsonCallReader::State::kFailed);
    EXPECT_FALSE(reader.began_call());
    EXPECT_EQ(reader.fail_offset(), 17u);
    EXPECT_TRUE(r.log.empty());
  }
}

TEST(ParameterValue, TypesFromRawText) {
  EXPECT_EQ(ParameterValueJson("3"), "3");
  EXPECT_EQ(ParameterValueJson(" -0.5 "), "-0.5");
  EXPECT_EQ(ParameterValueJson("true"), "true");
  EXPECT_EQ(ParameterValueJson("True"), "true");
  EXPECT_EQ(ParameterValueJson("None"), "null");
  EXPECT_EQ(ParameterValueJson("[6, 12, 18]"), "[6, 12, 18]");
  EXPECT_EQ(ParameterValueJson("{'lat': -23.55, 'b': (1, 'x'), 'c': None}"), R"({"lat": -23.55, "b": [1, "x"], "c": null})");
  EXPECT_EQ(ParameterValueJson("Paris"), "\"Paris\"");
  EXPECT_EQ(ParameterValueJson("'quoted'"), "\"'quoted'\"");
  EXPECT_EQ(ParameterValueJson("02134"), "\"02134\"");
  EXPECT_EQ(ParameterValueJson("{not a dict"), "\"{not a dict\"");
  EXPECT_EQ(ParameterValueJson("a \"b\"\n\tc\\"), R"("a \"b\"\n\tc\\")");
  EXPECT_EQ(ParameterValueJson(""), "\"\"");
}

TEST(GemmaArguments, TranslatesAtAnyCut) {
  std::string text = "{a:<|\"|>x<|\"|>,b:[1,true,None],c:{d:-2.5},e:\"j\\\"s\"}<tool_call|>";
  std::string want = R"({"a": "x", "b": [1, true, null], "c": {"d": -2.5}, "e": "j\"s"})";
  for (size_t i = 0; i <= text.size(); ++i) {
    GemmaArguments g;
    std::string json;
    size_t used = g.Translate(std::string_view(text).substr(0, i), false, &json);
    used += g.Translate(std::string_view(text).substr(used), false, &json);
    ASSERT_EQ(g.state(), GemmaArguments::State::kDone) << i;
    ASSERT_EQ(json, want) << i;
    ASSERT_EQ(used, text.size() - 12) << i;
  }
  GemmaArguments bad;
  std::string json;
  bad.Translate("{a:<b>}", false, &json);
  EXPECT_EQ(bad.state(), GemmaArguments::State::kFailed);
}

TEST(TextChannel, DropsOnlyWhitespaceNextToMarkup) {
  auto run = [](bool after_markup, const std::vector<std::string>& steps) {
    TextChannel ch(after_markup);
    std::string out;
    for (const std::string& s : steps) {
      if (s == "|") {
        ch.Markup();
      } else {
        ch.Add(s, &out);
      }
    }
    ch.Finish(&out);
    return out;
  };
  EXPECT_EQ(run(false, {"  Hello \n"}), "  Hello \n");  // no markup: unchanged
  EXPECT_EQ(run(false, {"Hi\n\n", "|", "\n\nDone.\n"}), "Hi\n\nDone.\n");
  EXPECT_EQ(run(false, {"|", "\n\nAnswer", "|", "\n"}), "Answer");
  EXPECT_EQ(run(true, {"\nthought\n", "|"}), "thought");
  EXPECT_EQ(run(false, {"a", " ", " b"}), "a  b");
}

}  // namespace
}  // namespace radixserve::tool_calls
