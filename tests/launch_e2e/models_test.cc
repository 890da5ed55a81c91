// The reference models of ../shared/models/ref through the whole pipeline (`radixserve launch`
// compact.yaml and HTTP /generate): the greedy ids equal the in-process model's (and llama.cpp's
// for F32 weights), and the served context is the one chosen at launch, not the file's maximum
// (b_llama3rope declares 131072 like Llama 3.1: it starts in seconds, and a longer prompt gets 400).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/gguf/gguf_reader.h"
#include "core/model/llama_model.h"
#include "tests/launch_e2e/launcher.h"
#include "tests/pipeline/http_client.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::launch_test {
namespace {

using nlohmann::json;

const std::string kRef = std::string(RADIXSERVE_SHARED_DIR) + "/models/ref/";
constexpr int kContext = 64;
constexpr int kSteps = 16;

const json& Manifest() {
  static const json m = [] {
    std::ifstream in(kRef + "manifest.json");
    return json::parse(in);
  }();
  return m;
}

// Greedy ids of the same model in this process (F32 KV cache, as the worker node keeps it).
std::vector<int32_t> InProcessGreedy(const std::string& path, const std::vector<int32_t>& prompt) {
  auto file = gguf::GgufFile::Open(path);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (!file.ok()) return {};
  auto m = model::LlamaModel::Load(std::shared_ptr<const gguf::GgufFile>(std::move(file).value()), {});
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return {};
  auto kv = (*m)->CreateKvCache(prompt.size() + kSteps);
  std::vector<int32_t> slots(prompt.size() + kSteps), out;
  for (size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<int32_t>(i);
  std::vector<float> logits((*m)->config().vocab_size);
  std::vector<int32_t> next = prompt;
  int32_t cached = 0;
  for (int s = 0; s < kSteps; ++s) {
    model::SequenceInput in{cached, next, std::span<const int32_t>(slots.data(), cached + next.size())};
    EXPECT_TRUE((*m)->Forward(std::span<const model::SequenceInput>(&in, 1), **kv, logits).ok());
    cached += static_cast<int32_t>(next.size());
    next = {static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin())};
    out.push_back(next[0]);
  }
  return out;
}

class LaunchModelsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LaunchModelsTest, PipelineGreedyIdsEqualInProcessAndTheContextIsTheChosenOne) {
  const std::string name = GetParam();
  const json& run = Manifest()["runs"][name + (name.find(".F32") != std::string::npos ? ".kv_f32" : ".kv_f16")];
  const std::string path = kRef + run["model_path"].get<std::string>();
  Launcher launcher;
  const int port = pipeline_test::PickFreePort();
  ASSERT_GT(port, 0);
  Status s = launcher.Start(LaunchOf(LaunchDir() + "/compact.yaml",
                                     {"model:=" + path, "port:=" + std::to_string(port),
                                      "context:=" + std::to_string(kContext)}));
  ASSERT_TRUE(s.ok()) << s.message();

  for (const json& p : run["prompts"]) {
    const auto prompt = p["prompt_ids"].get<std::vector<int32_t>>();
    json body = {{"input_ids", prompt},
                 {"sampling_params", {{"max_new_tokens", kSteps}, {"temperature", 0}, {"ignore_eos", true}}}};
    pipeline_test::HttpReply r = pipeline_test::PostJson(port, "/generate", body);
    if (prompt.size() + kSteps > static_cast<size_t>(kContext)) {
      if (prompt.size() >= static_cast<size_t>(kContext)) {
        EXPECT_EQ(r.status, 400) << name << " prompt of " << prompt.size() << ": " << r.body;
        EXPECT_NE(r.body.find("the served context is " + std::to_string(kContext)), std::string::npos) << r.body;
      }
      continue;  // a prompt that fits with fewer than 16 outputs is not compared
    }
    ASSERT_EQ(r.status, 200) << name << ": " << r.body;
    const auto got = r.json["output_ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(got, InProcessGreedy(path, prompt)) << name << " prompt " << p["index"];
    if (name.find(".F32") != std::string::npos)  // F32 weights and KV: llama.cpp's ids exactly
      EXPECT_EQ(got, p["greedy_ids"].get<std::vector<int32_t>>()) << name << " prompt " << p["index"];
  }
  EXPECT_EQ(pipeline_test::Get(port, "/v1/models").json["data"][0]["max_model_len"], kContext);
}

// `radixserve generate --prompt-ids ... --print-ids`: anyone can check a file against llama.cpp
// without writing code. F32 weights with an F32 KV cache give llama.cpp's greedy ids exactly.
TEST(GenerateCommand, PrintsLlamaCppsGreedyIdsForF32Files) {
  for (const char* run_name : {"b_llama3rope.F32.kv_f32", "c_qwen2.F32.kv_f32", "d_phi3.F32.kv_f32"}) {
    const json& run = Manifest()["runs"][run_name];
    for (const json& p : run["prompts"]) {
      std::string ids;
      for (int32_t id : p["prompt_ids"].get<std::vector<int32_t>>()) ids += (ids.empty() ? "" : ",") + std::to_string(id);
      int status = 0;
      std::string out = pipeline_test::RunCommand(
          pipeline_test::ShellQuote(pipeline_test::RadixserveBinary()) + " generate --model " +
              pipeline_test::ShellQuote(kRef + run["model_path"].get<std::string>()) + " --prompt-ids " + ids +
              " --max-tokens 16 --temperature 0 --kv-type f32 --ignore-eos --print-ids 2>/dev/null",
          &status);
      ASSERT_EQ(status, 0) << run_name << ": " << out;
      while (!out.empty() && out.back() == '\n') out.pop_back();
      const std::string last = out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
      EXPECT_EQ(json::parse(last, nullptr, false), p["greedy_ids"]) << run_name << " prompt " << p["index"];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ref, LaunchModelsTest,
                         ::testing::Values("b_llama3rope.F32", "c_qwen2.Q4_K_M", "d_phi3.Q8_0", "e_gemma.F32",
                                           "a_llama.Q5_K_M"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (ch == '.') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace radixserve::launch_test
