// The reference models of ../shared/models/ref (llama.cpp c392e509's own files, quantised by its
// llama-quantize) against llama.cpp's outputs for them: dequantised rows bit for bit, and the
// logits of every prefill position and every teacher-forced decode step within bounds taken from
// the reference's measured distances (ref/README.md sections 5 and 6).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/model/llama_model.h"
#include "core/model/weights.h"
#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/matmul.h"
#include "tests/model/reference_runs.h"

namespace radixserve::model {
namespace {

const std::string kRef = std::string(RADIXSERVE_SHARED_DIR) + "/models/ref/";

const nlohmann::json& Manifest() {
  static const nlohmann::json m = ReadRefManifest(kRef);
  return m;
}

std::shared_ptr<const gguf::GgufFile> OpenModel(const std::string& rel_path) {
  auto f = gguf::GgufFile::Open(kRef + rel_path);
  if (!f.ok()) {
    ADD_FAILURE() << rel_path << ": " << f.status().ToString();
    return nullptr;
  }
  return std::shared_ptr<const gguf::GgufFile>(std::move(f).value());
}

TEST(ReferenceData, IsComplete) {
  const nlohmann::json& m = Manifest();
  ASSERT_TRUE(m.contains("runs")) << "cannot read " << kRef << "manifest.json";
  EXPECT_EQ(m["runs"].size(), 33u);
  EXPECT_EQ(m["dequant"].size(), 28u);
}

// --- Dequantisation: ggml's to_float, bit for bit, with every kernel set this CPU runs. ---

std::vector<int> DequantCases() {
  std::vector<int> v(Manifest().contains("dequant") ? Manifest()["dequant"].size() : 0);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i);
  return v;
}

class DequantTest : public ::testing::TestWithParam<int> {};

TEST_P(DequantTest, RowsEqualGgmlBitForBit) {
  const nlohmann::json& c = Manifest()["dequant"][GetParam()];
  auto file = OpenModel(c["model_path"].get<std::string>());
  ASSERT_NE(file, nullptr);
  const std::string tensor = c["tensor"].get<std::string>();
  auto w = GetAnyMatrix(*file, tensor);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const std::vector<float> want = ReadRefFloats(kRef + c["path"].get<std::string>());
  const int64_t cols = c["ne"][0].get<int64_t>();
  ASSERT_EQ(static_cast<int64_t>(want.size()), 4 * cols);
  ASSERT_EQ(w->cols, cols);
  for (const std::string& set : kernels::RunnableKernelSets()) {
    ASSERT_TRUE(kernels::UseKernelSet(set).ok());
    std::vector<float> got(4 * cols);
    kernels::DequantizeRows(*w, 0, 4, got.data());
    int64_t mismatches = 0, first = -1;
    for (int64_t i = 0; i < 4 * cols; ++i)
      if (std::memcmp(&got[i], &want[i], 4) != 0 && mismatches++ == 0) first = i;
    EXPECT_EQ(mismatches, 0) << c["path"].get<std::string>() << " (" << c["tensor_type"].get<std::string>()
                             << ") with kernel set " << set << ": first at element " << first << ": "
                             << (first >= 0 ? got[first] : 0.0f) << " vs " << (first >= 0 ? want[first] : 0.0f);
  }
  ASSERT_TRUE(kernels::UseKernelSet(kernels::RunnableKernelSets().back()).ok());
}

INSTANTIATE_TEST_SUITE_P(Ref, DequantTest, ::testing::ValuesIn(DequantCases()),
                         [](const ::testing::TestParamInfo<int>& info) { return DequantCaseName(Manifest(), info.param); });

// --- Logits: every prefill position and every teacher-forced decode step. ---

// The bounds of one run, from ref/README.md section 6 (llama.cpp's own distances).
LogitBounds BoundsFor(const std::string& type, const std::string& kv, const std::string& arch) {
  if (type == "F32" && kv == "F32") {
    if (arch == "gemma")  // llama.cpp's GELU is an fp16 table; an exact GELU lands ~2e-3 away (6.3)
      return {5e-3, 1e-6, 1e-5, true, "F32/F32 gemma: exact tanh-GELU vs ggml's fp16 GELU table (README 5.3)"};
    return {1e-4, 1e-9, 1e-8, true, "F32/F32: the same arithmetic up to summation order (README 5.3)"};
  }
  if (type == "F32")  // llama.cpp also rounds Q and P to F16; its own F32-vs-F16 cache distance is 4e-3, 7e-7
    return {1e-2, 1e-6, 5e-6, false, "F32 weights, F16 KV cache: within llama.cpp's own KV-type noise (README 6.2)"};
  // 16-bit weights: llama.cpp rounds activations to F16/BF16 and this engine does not; the exact
  // engine of 6.3 lands at 1.4e-7 (F16) and 7.4e-6 (BF16) mean KL, llama.cpp's own F16/BF16-vs-F32
  // noise is 3.6e-7 and 1.9e-5 (6.1): bounds between the two.
  if (type == "F16") return {1e-2, 1e-6, 5e-6, false, "F16 weights: llama.cpp's F16 activations (README 6.1, 6.3)"};
  if (type == "BF16") return {5e-2, 5e-5, 2e-4, false, "BF16 weights: llama.cpp's BF16 activations (README 6.1, 6.3)"};
  // Quantised weights: llama.cpp rounds activations to 8 bits and this engine does not (except
  // Q8_0 decode, which quantises them as llama.cpp does), so it lands where the exact engine of 6.3 does; 1e-3 mean / 1e-2 max KL is the
  // README's line above which a weight-decoding bug is the only explanation.
  return {std::numeric_limits<double>::infinity(), 1e-3, 1e-2, false,
          "quantised weights: llama.cpp's activation rounding (README 5.3, 6.3)"};
}


class LogitsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LogitsTest, MatchLlamaCppWithinTheTypesNoise) {
  const nlohmann::json& run = Manifest()["runs"][GetParam()];
  auto file = OpenModel(run["model_path"].get<std::string>());
  ASSERT_NE(file, nullptr);
  const std::string kv_name = run["kv_cache_type"].get<std::string>();
  ModelOptions opts;
  opts.kv_type = kv_name == "F16" ? KvType::kF16 : KvType::kF32;
  auto loaded = LlamaModel::Load(file, opts);
  ASSERT_TRUE(loaded.ok()) << GetParam() << ": " << loaded.status().ToString();
  LlamaModel& model = **loaded;
  const int64_t vocab = run["n_vocab"].get<int64_t>();
  ASSERT_EQ(model.config().vocab_size, vocab);
  const LogitBounds b = BoundsFor(RefRunType(run), kv_name, model.config().architecture);
  std::unique_ptr<KvCache> kv;
  CheckRefRun(
      GetParam(), run, kRef, b,
      [&](int64_t total) {
        auto created = model.CreateKvCache(total);
        if (created.ok()) kv = std::move(created).value();
        return created.ok();
      },
      [&](std::span<const SequenceInput> seqs, std::span<float> logits, const ForwardOptions& o) {
        return model.Forward(seqs, *kv, logits, o);
      });
}

INSTANTIATE_TEST_SUITE_P(Ref, LogitsTest, ::testing::ValuesIn(RefRunNames(Manifest())), RefRunTestName);

}  // namespace
}  // namespace radixserve::model
