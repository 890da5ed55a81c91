// Every architecture of ../shared/models/ref2 served end to end: for each F32 file, a pipeline
// (real RouDi and the four node processes) started on it serves, for each reference prompt, the
// same 16 greedy ids as the single-process `radixserve generate` does (each with its default KV
// cache, and again both with a Q8_0 KV cache: the worker's kv_type and generate's --kv-type). How many prompts fork from llama.cpp's greedy ids (near-ties of the random
// models; model_reference2_test bounds the logits themselves) is printed, not asserted.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "tests/pipeline/http_client.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::pipeline_test {
namespace {

using nlohmann::json;

const std::string kRef2 = std::string(RADIXSERVE_SHARED_DIR) + "/models/ref2/";

json Manifest() {
  std::ifstream in(kRef2 + "manifest.json");
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// "1 2 3" from the ids, for --prompt-ids.
std::string Joined(const std::vector<int32_t>& ids, char sep) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? std::string(1, sep) : "") + std::to_string(ids[i]);
  return out;
}

// The ids `radixserve generate --print-ids` prints as a JSON array on its last line.
std::vector<int32_t> PrintedIds(const std::string& out) {
  std::string text = out;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  const json ids = json::parse(text.substr(text.rfind('\n') + 1), nullptr, false);
  return ids.is_array() ? ids.get<std::vector<int32_t>>() : std::vector<int32_t>{};
}

// An architecture, and the KV type both sides use ("" for their defaults).
class Architectures : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(Architectures, PipelineServesTheGenerateCommandsGreedyIds) {
  const json manifest = Manifest();
  ASSERT_TRUE(manifest.contains("runs")) << "cannot read " << kRef2 << "manifest.json";
  const auto& [arch, kv_type] = GetParam();
  const std::string run = arch + ".F32.kv_f16";
  ASSERT_TRUE(manifest["runs"].contains(run)) << run;
  const json& r = manifest["runs"][run];
  const std::string model = kRef2 + r["model_path"].get<std::string>();
  const json& prompts = r["prompts"];
  ASSERT_TRUE(prompts.is_array() && !prompts.empty()) << run;

  PipelineOptions o;
  o.model = model;
  if (!kv_type.empty()) o.worker_params.push_back("kv_type:=" + kv_type);
  Pipeline pipeline(o);
  ASSERT_TRUE(pipeline.Start().ok()) << pipeline.LogTails();
  int forks_from_llama_cpp = 0;
  for (const json& p : prompts) {
    const std::vector<int32_t> prompt = p["prompt_ids"].get<std::vector<int32_t>>();
    int st = 0;
    const std::string out = RunCommand(ShellQuote(RadixserveBinary()) + " generate --model " + ShellQuote(model) +
                                           " --prompt-ids " + Joined(prompt, ',') +
                                           (kv_type.empty() ? "" : " --kv-type " + kv_type) +
                                           " --max-tokens 16 --temperature 0 --ignore-eos --print-ids 2>/dev/null",
                                       &st);
    ASSERT_EQ(st, 0) << run << ": radixserve generate failed: " << out;
    const std::vector<int32_t> expected = PrintedIds(out);
    ASSERT_EQ(expected.size(), 16u) << out;
    HttpReply reply = PostJson(pipeline.port(), "/generate",
                               {{"input_ids", prompt},
                                {"sampling_params", {{"temperature", 0}, {"max_new_tokens", 16}, {"ignore_eos", true}}}});
    ASSERT_EQ(reply.status, 200) << run << ": " << Describe(reply);
    EXPECT_EQ(reply.json["output_ids"].get<std::vector<int32_t>>(), expected)
        << run << " prompt " << p["index"];
    forks_from_llama_cpp += expected != p["greedy_ids"].get<std::vector<int32_t>>();
  }
  std::printf("%s (KV %s): the pipeline served the generate command's greedy ids on %zu prompts; %d of them fork "
              "from llama.cpp's (near-ties of the random model)\n",
              run.c_str(), kv_type.empty() ? "default" : kv_type.c_str(), prompts.size(), forks_from_llama_cpp);
  pipeline.Stop();
}

INSTANTIATE_TEST_SUITE_P(Ref2, Architectures,
                         ::testing::Combine(::testing::Values("f_qwen3", "g_qwen3moe", "h_gemma2", "i_gemma3", "j_granite",
                                                              "k_smollm3", "l_phi4mini"),
                                            ::testing::Values("", "q8_0")),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& info) {
                           const std::string& kv = std::get<1>(info.param);
                           return std::get<0>(info.param) + (kv.empty() ? "" : "_kv_" + kv);
                         });

}  // namespace
}  // namespace radixserve::pipeline_test
