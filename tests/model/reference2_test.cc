// The second reference set, ../shared/models/ref2 (new architectures; a 2026 llama.cpp's files and
// logits): for each architecture this engine runs, dequantised rows bit for bit and the logits of
// every prefill position and teacher-forced decode step within the bounds of ref2/README.md
// section 5; and the refusals of a file whose metadata or tensor shapes are wrong, by name.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "core/model/llama_model.h"
#include "core/model/weights.h"
#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/matmul.h"
#include "tests/model/reference_runs.h"

namespace radixserve::model {
namespace {

const std::string kRef2 = std::string(RADIXSERVE_SHARED_DIR) + "/models/ref2/";

// The ref2 architectures this engine runs; the others' runs are not instantiated yet.
const std::set<std::string> kRunnable = {"qwen3", "granite", "smollm3"};

const nlohmann::json& Manifest() {
  static const nlohmann::json m = ReadRefManifest(kRef2);
  return m;
}

std::string ArchOf(const std::string& model_path) {
  for (const auto& [name, model] : Manifest()["models"].items())
    if (model["path"] == model_path) return model["arch"].get<std::string>();
  return "";
}

std::shared_ptr<const gguf::GgufFile> OpenRef2(const std::string& rel_path) {
  auto f = gguf::GgufFile::Open(kRef2 + rel_path);
  if (!f.ok()) {
    ADD_FAILURE() << rel_path << ": " << f.status().ToString();
    return nullptr;
  }
  return std::shared_ptr<const gguf::GgufFile>(std::move(f).value());
}

TEST(Reference2Data, IsComplete) {
  const nlohmann::json& m = Manifest();
  ASSERT_TRUE(m.contains("runs")) << "cannot read " << kRef2 << "manifest.json";
  EXPECT_EQ(m["runs"].size(), 30u);
  EXPECT_EQ(m["dequant"].size(), 16u);
}

// --- Dequantisation of the runnable architectures' 2-D tensors: ggml's to_float, bit for bit. ---

std::vector<int> DequantCases() {
  std::vector<int> v;
  if (!Manifest().contains("dequant")) return v;
  for (size_t i = 0; i < Manifest()["dequant"].size(); ++i) {
    const nlohmann::json& c = Manifest()["dequant"][i];
    const bool two_d = c["ne"].size() < 3 || c["ne"][2].get<int64_t>() == 1;
    if (two_d && kRunnable.count(ArchOf(c["model_path"].get<std::string>()))) v.push_back(static_cast<int>(i));
  }
  return v;
}

class Dequant2Test : public ::testing::TestWithParam<int> {};

TEST_P(Dequant2Test, RowsEqualGgmlBitForBit) {
  const nlohmann::json& c = Manifest()["dequant"][GetParam()];
  auto file = OpenRef2(c["model_path"].get<std::string>());
  ASSERT_NE(file, nullptr);
  auto w = GetAnyMatrix(*file, c["tensor"].get<std::string>());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const std::vector<float> want = ReadRefFloats(kRef2 + c["path"].get<std::string>());
  const int64_t cols = c["ne"][0].get<int64_t>();
  const int64_t first_row = c["first_row"].get<int64_t>();
  ASSERT_EQ(static_cast<int64_t>(want.size()), 4 * cols);
  ASSERT_EQ(w->cols, cols);
  for (const std::string& set : kernels::RunnableKernelSets()) {
    ASSERT_TRUE(kernels::UseKernelSet(set).ok());
    std::vector<float> got(4 * cols);
    kernels::DequantizeRows(*w, first_row, first_row + 4, got.data());
    int64_t mismatches = 0;
    for (int64_t i = 0; i < 4 * cols; ++i) mismatches += std::memcmp(&got[i], &want[i], 4) != 0;
    EXPECT_EQ(mismatches, 0) << c["path"].get<std::string>() << " with kernel set " << set;
  }
  ASSERT_TRUE(kernels::UseKernelSet(kernels::RunnableKernelSets().back()).ok());
}

INSTANTIATE_TEST_SUITE_P(Ref2, Dequant2Test, ::testing::ValuesIn(DequantCases()),
                         [](const ::testing::TestParamInfo<int>& info) {
                           std::string n = Manifest()["dequant"][info.param]["path"].get<std::string>().substr(4);
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// --- Logits: every prefill position and every teacher-forced decode step. ---

// The bounds of one run: ref2/README.md section 5 (manifest "thresholds"). The per-row KL bound
// of the float runs is the README's measured float64 maximum with the margin its means carry.
LogitBounds BoundsFor(const std::string& type, const std::string& kv) {
  if (type == "F32" && kv == "F32")  // exact float64 pass: 1e-5 max|d|, 3.3e-13 mean KL
    return {1e-4, 1e-9, 1e-8, true, "F32/F32: the same arithmetic up to summation order (ref2 README 5.3)"};
  if (type == "F32")  // llama.cpp rounds K, V, Q and P to F16; the exact pass lands at 5.2e-3, 2.4e-7 (max 1.06e-6)
    return {1e-2, 1e-6, 5e-6, false, "F32 weights, F16 KV cache: llama.cpp's own KV-type noise (ref2 README 5.3)"};
  // Quantised weights: llama.cpp rounds activations to 8 bits; the exact pass lands at 2.5e-5..5.6e-4 mean
  // KL and 1.7e-3 per row; above 1e-3 mean or 1e-2 on any row only a weight-decoding bug explains it.
  return {std::numeric_limits<double>::infinity(), 1e-3, 1e-2, false,
          "quantised weights: llama.cpp's activation rounding (ref2 README 5.3)"};
}

std::vector<std::string> RunnableRuns() {
  std::vector<std::string> names;
  for (const std::string& name : RefRunNames(Manifest()))
    if (kRunnable.count(ArchOf(Manifest()["runs"][name]["model_path"].get<std::string>()))) names.push_back(name);
  return names;
}

class Logits2Test : public ::testing::TestWithParam<std::string> {};

TEST_P(Logits2Test, MatchLlamaCppWithinTheTypesNoise) {
  const nlohmann::json& run = Manifest()["runs"][GetParam()];
  auto file = OpenRef2(run["model_path"].get<std::string>());
  ASSERT_NE(file, nullptr);
  const std::string kv_name = run["kv_cache_type"].get<std::string>();
  ModelOptions opts;
  opts.kv_type = kv_name == "F16" ? KvType::kF16 : KvType::kF32;
  auto loaded = LlamaModel::Load(file, opts);
  ASSERT_TRUE(loaded.ok()) << GetParam() << ": " << loaded.status().ToString();
  LlamaModel& model = **loaded;
  ASSERT_EQ(model.config().vocab_size, run["n_vocab"].get<int64_t>());
  const LogitBounds b = BoundsFor(RefRunType(run), kv_name);
  std::unique_ptr<KvCache> kv;
  CheckRefRun(
      GetParam(), run, kRef2, b,
      [&](int64_t total) {
        auto created = model.CreateKvCache(total);
        if (created.ok()) kv = std::move(created).value();
        return created.ok();
      },
      [&](std::span<const SequenceInput> seqs, std::span<float> logits, const ForwardOptions& o) {
        return model.Forward(seqs, *kv, logits, o);
      });
}

INSTANTIATE_TEST_SUITE_P(Ref2, Logits2Test, ::testing::ValuesIn(RunnableRuns()), RefRunTestName);

// --- Refusals: a ref2 file copied with one key dropped or one tensor reshaped. ---

struct OwnedCopy {
  std::vector<uint8_t> bytes;
  std::unique_ptr<gguf::GgufFile> file;
};

// `src` re-serialised without metadata key `drop_key`, with tensor `reshape` given `dims` (and
// zero bytes of that size).
std::shared_ptr<const gguf::GgufFile> EditedCopy(const gguf::GgufFile& src, const std::string& drop_key,
                                                 const std::string& reshape = "", std::vector<uint64_t> dims = {}) {
  gguf::GgufWriter w;
  for (const gguf::KeyValue& kv : src.metadata())
    if (kv.key != drop_key) w.Set(kv.key, kv.value);
  for (const gguf::TensorInfo& t : src.tensors()) {
    Status added;
    if (t.name == reshape) {
      gguf::TensorInfo shaped = t;
      shaped.dims = dims;
      added = w.AddTensor(t.name, dims, t.type, std::vector<uint8_t>(shaped.num_bytes(), 0));
    } else {
      const uint8_t* data = src.TensorData(t);
      added = w.AddTensor(t.name, t.dims, t.type, std::vector<uint8_t>(data, data + t.num_bytes()));
    }
    EXPECT_TRUE(added.ok()) << added.ToString();
  }
  auto owned = std::make_shared<OwnedCopy>();
  auto bytes = w.Serialize();
  EXPECT_TRUE(bytes.ok());
  owned->bytes = std::move(bytes).value();
  auto file = gguf::GgufFile::Parse(owned->bytes, "edited-" + src.name());
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  owned->file = std::move(file).value();
  return std::shared_ptr<const gguf::GgufFile>(owned, owned->file.get());
}

Status LoadStatus(std::shared_ptr<const gguf::GgufFile> f) { return LlamaModel::Load(std::move(f), {}).status(); }

TEST(Ref2Refusals, UnchangedCopiesLoad) {
  for (const char* path : {"models/f_qwen3.F32.gguf", "models/j_granite.F32.gguf", "models/k_smollm3.F32.gguf"}) {
    auto src = OpenRef2(path);
    ASSERT_NE(src, nullptr);
    EXPECT_TRUE(LoadStatus(EditedCopy(*src, "")).ok()) << path;
  }
}

TEST(Ref2Refusals, GraniteWithoutLogitScaleNamesTheKey) {
  auto src = OpenRef2("models/j_granite.F32.gguf");
  ASSERT_NE(src, nullptr);
  const Status s = LoadStatus(EditedCopy(*src, "granite.logit_scale"));
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find("granite.logit_scale"), std::string::npos) << s.ToString();
}

TEST(Ref2Refusals, GraniteWithoutOptionalMultipliersLoads) {
  auto src = OpenRef2("models/j_granite.F32.gguf");
  ASSERT_NE(src, nullptr);
  auto m = LlamaModel::Load(EditedCopy(*src, "granite.attention.scale"), {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_FLOAT_EQ((*m)->config().softmax_scale(), 1.0f / 8.0f);  // absent: 1/sqrt(head_dim)
  EXPECT_FLOAT_EQ((*m)->config().residual_scale, 0.22f);
  EXPECT_FLOAT_EQ((*m)->config().logit_scale, 8.0f);
}

TEST(Ref2Refusals, Qwen3WithoutKeyLengthNamesTheMismatchedTensor) {
  // Without qwen3.attention.key_length the head size is 256 / 4 = 64, and attn_q's 512 rows disagree.
  auto src = OpenRef2("models/f_qwen3.F32.gguf");
  ASSERT_NE(src, nullptr);
  const Status s = LoadStatus(EditedCopy(*src, "qwen3.attention.key_length"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("blk.0.attn_q.weight"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("[256, 512]"), std::string::npos) << s.ToString();
}

TEST(Ref2Refusals, Qwen3KNormOfTheWrongSizeIsNamed) {
  auto src = OpenRef2("models/f_qwen3.F32.gguf");
  ASSERT_NE(src, nullptr);
  const Status s = LoadStatus(EditedCopy(*src, "", "blk.1.attn_k_norm.weight", {64}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("blk.1.attn_k_norm.weight"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("expected [128]"), std::string::npos) << s.ToString();
}

TEST(Ref2Refusals, MissingRequiredKeyIsNamed) {
  auto src = OpenRef2("models/k_smollm3.F32.gguf");
  ASSERT_NE(src, nullptr);
  const Status s = LoadStatus(EditedCopy(*src, "smollm3.attention.head_count"));
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find("smollm3.attention.head_count"), std::string::npos) << s.ToString();
}

TEST(Ref2Config, ReadsWhatSetsEachArchitectureApart) {
  auto qwen3 = OpenRef2("models/f_qwen3.F32.gguf");
  auto granite = OpenRef2("models/j_granite.F32.gguf");
  auto smollm3 = OpenRef2("models/k_smollm3.F32.gguf");
  ASSERT_TRUE(qwen3 && granite && smollm3);
  auto q = LlamaConfig::FromGguf(*qwen3);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_TRUE(q->qk_norm);
  EXPECT_EQ(q->head_dim, 128);
  EXPECT_EQ(q->q_dim(), 512);
  EXPECT_EQ(q->rope_style, RopeStyle::kNeox);
  auto g = LlamaConfig::FromGguf(*granite);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_FLOAT_EQ(g->embedding_scale, 12.0f);
  EXPECT_FLOAT_EQ(g->residual_scale, 0.22f);
  EXPECT_FLOAT_EQ(g->softmax_scale(), 1.0f / 64.0f);
  EXPECT_FLOAT_EQ(g->logit_scale, 8.0f);
  EXPECT_EQ(g->rope_style, RopeStyle::kNorm);
  EXPECT_TRUE(g->layer_uses_rope(0) && g->layer_uses_rope(1));
  auto s = LlamaConfig::FromGguf(*smollm3);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->rope_style, RopeStyle::kNorm);
  EXPECT_TRUE(s->layer_uses_rope(0) && s->layer_uses_rope(1) && s->layer_uses_rope(2));
  EXPECT_FALSE(s->layer_uses_rope(3));  // (il + 1) % 4 == 0
}

}  // namespace
}  // namespace radixserve::model
