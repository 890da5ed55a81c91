// The second reference set, ../shared/models/ref2 (new architectures; a 2026 llama.cpp's files and
// logits): for each architecture this engine runs, dequantised rows bit for bit and the logits of
// every prefill position and teacher-forced decode step within the bounds of ref2/README.md
// section 5; a cached prefix longer than a sliding window reused by a second request; and the
// refusals of a file whose metadata or tensor shapes are wrong, by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
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
#include "core/model/moe.h"
#include "core/model/weights.h"
#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/matmul.h"
#include "tests/model/reference_runs.h"

namespace radixserve::model {
namespace {

const std::string kRef2 = std::string(RADIXSERVE_SHARED_DIR) + "/models/ref2/";

// The ref2 architectures this engine runs; the others' runs are not instantiated yet.
const std::set<std::string> kRunnable = {"qwen3", "qwen3moe", "granite", "smollm3", "gemma2", "gemma3", "phi3"};

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

std::vector<int> DequantCases();

TEST(Reference2Data, IsComplete) {
  const nlohmann::json& m = Manifest();
  ASSERT_TRUE(m.contains("runs")) << "cannot read " << kRef2 << "manifest.json";
  EXPECT_EQ(m["runs"].size(), 30u);
  EXPECT_EQ(m["dequant"].size(), 16u);
}

TEST(Reference2Data, EveryQwen3MoeDequantCaseIsRun) {
  int moe = 0;
  for (int i : DequantCases()) {
    const nlohmann::json& ne = Manifest()["dequant"][i]["ne"];
    moe += ne.size() == 3 && ne[2].get<int64_t>() > 1;
  }
  EXPECT_EQ(moe, 9);  // three files, three row ranges (experts 0 and 5 of gate_exps, expert 7 of down_exps)
}

// --- Dequantisation of the runnable architectures' tensors: ggml's to_float, bit for bit. 3-D
// expert tensors (qwen3moe) are read as their rows: row r is row r % ne1 of expert r / ne1. ---

std::vector<int> DequantCases() {
  std::vector<int> v;
  if (!Manifest().contains("dequant")) return v;
  for (size_t i = 0; i < Manifest()["dequant"].size(); ++i) {
    const nlohmann::json& c = Manifest()["dequant"][i];
    if (kRunnable.count(ArchOf(c["model_path"].get<std::string>()))) v.push_back(static_cast<int>(i));
  }
  return v;
}

class Dequant2Test : public ::testing::TestWithParam<int> {};

TEST_P(Dequant2Test, RowsEqualGgmlBitForBit) {
  const nlohmann::json& c = Manifest()["dequant"][GetParam()];
  auto file = OpenRef2(c["model_path"].get<std::string>());
  ASSERT_NE(file, nullptr);
  auto w = GetAnyRows(*file, c["tensor"].get<std::string>());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const std::vector<float> want = ReadRefFloats(kRef2 + c["path"].get<std::string>());
  const int64_t cols = c["ne"][0].get<int64_t>();
  const int64_t first_row = c["first_row"].get<int64_t>();
  ASSERT_EQ(static_cast<int64_t>(want.size()), 4 * cols);
  ASSERT_EQ(w->cols, cols);
  int64_t all_rows = 1;
  for (size_t d = 1; d < c["ne"].size(); ++d) all_rows *= c["ne"][d].get<int64_t>();
  ASSERT_EQ(w->rows, all_rows);
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
                         [](const ::testing::TestParamInfo<int>& info) { return DequantCaseName(Manifest(), info.param); });

// --- Logits: every prefill position and every teacher-forced decode step. ---

// The bounds of one run: ref2/README.md section 5 (manifest "thresholds"). The per-row KL bound
// of the float runs is the README's measured float64 maximum with the margin its means carry.
LogitBounds BoundsFor(const std::string& arch, const std::string& type, const std::string& kv) {
  // gemma2/gemma3 compute GELU as ggml's fp16 table does; an input that lands on the other side of
  // an fp16 rounding boundary still moves its GELU by an fp16 ulp, so the exact pass emulating the
  // table lands at 5.1e-4 / 6.7e-4 max|d| and 7.1e-10 mean KL (README 6.3; the bound: section 5).
  if (type == "F32" && kv == "F32" && (arch == "gemma2" || arch == "gemma3"))
    // The mean-KL bound is that measurement with a margin: an exact tanh-GELU lands at 3.4e-8 to 4.6e-8
    // (README 6.3) and fails it, so it checks that the table is in effect; the per-row bound is the
    // exact pass's maximum (1.06e-7) with a margin.
    return {2e-3, 1e-8, 1e-6, true, "F32/F32 gemma2/3: ggml's fp16 GELU table emulated (ref2 README 5.3, 6.3)"};
  if (type == "F32" && kv == "F32")  // exact float64 pass: 1e-5 max|d|, 3.3e-13 mean KL
    return {1e-4, 1e-9, 1e-8, true, "F32/F32: the same arithmetic up to summation order (ref2 README 5.3)"};
  if (type == "F32")  // llama.cpp rounds K, V, Q and P to F16; the exact pass lands at 5.2e-3, 2.4e-7 (max 1.06e-6)
    return {1e-2, 1e-6, 5e-6, false, "F32 weights, F16 KV cache: llama.cpp's own KV-type noise (ref2 README 5.3)"};
  if (arch == "qwen3moe")  // the same mean, but up to 3 % of rows may flip an expert at a near-tie
    return {std::numeric_limits<double>::infinity(), 1e-3, 1e-2, false,
            "quantised qwen3moe: activation rounding, routing flips at near-ties (ref2 README 5.3 quantized_moe)", 0.03};
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
  // llama.cpp's n_ctx as the served context: it picks phi3's LongRoPE factors (the ctx8192 run: long).
  opts.context = run["n_ctx"].get<int64_t>();
  auto loaded = LlamaModel::Load(file, opts);
  ASSERT_TRUE(loaded.ok()) << GetParam() << ": " << loaded.status().ToString();
  LlamaModel& model = **loaded;
  ASSERT_EQ(model.config().vocab_size, run["n_vocab"].get<int64_t>());
  const LogitBounds b = BoundsFor(ArchOf(run["model_path"].get<std::string>()), RefRunType(run), kv_name);
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

// --- Quantised KV caches (kv_type q8_0 / q4_0) against llama.cpp's F16-KV logits of the F32 files:
// the weights exact, so the distance is the KV type's rounding (plus llama.cpp's own F16 rounding
// of K, V, Q and P, which the F16 bound above holds). ---

// The bound of a KV type: the F16-KV bound scaled by how much larger the type's rounding error
// is. Per stored value F16 errs by up to 2^-11 of the value (rms 2^-11/sqrt(3) |x|); a 32-value
// block of Q8_0 by a uniform error of up to amax/254 (rms amax/127/sqrt(12)), of Q4_0 by up to
// amax/16 (rms amax/8/sqrt(12)). For rows of roughly normal values (amax of 32 about 2.1 sigma)
// that is rms 2.8e-4 sigma for F16, 4.8e-3 sigma for Q8_0 (17x) and 7.6e-2 sigma for Q4_0 (270x).
// The logits move linearly with a small perturbation of K and V, their KL quadratically, so the
// bounds are F16's times r for max|d| and r^2 for KL.
// qwen3moe: a moved router input can swap the 2nd and 3rd expert at a near-tie, as the 8-bit
// activations of its quantised files do (README 5.3 quantized_moe): up to 3 % of rows may pass the
// per-row bound, and the mean may carry those rows (3 % x README's largest swap, KL 0.056).
LogitBounds KvTypeBounds(KvType type, const std::string& arch) {
  const double r = type == KvType::kQ8_0 ? 17 : 270;
  const char* why = type == KvType::kQ8_0
                        ? "Q8_0 KV: F16-KV bound x 17 (max|d|) and x 17^2 (KL): the ratio of rms roundings"
                        : "Q4_0 KV: F16-KV bound x 270 (max|d|) and x 270^2 (KL): the ratio of rms roundings";
  if (arch == "qwen3moe")
    return {std::numeric_limits<double>::infinity(), 1e-6 * r * r + 0.03 * 0.056, 5e-6 * r * r, false, why, 0.03};
  return {1e-2 * r, 1e-6 * r * r, 5e-6 * r * r, false, why};
}

std::vector<std::string> QuantizedKvRuns() {
  std::vector<std::string> cases;
  for (const std::string& name : RunnableRuns()) {
    const nlohmann::json& run = Manifest()["runs"][name];
    if (RefRunType(run) != "F32" || run["kv_cache_type"] != "F16") continue;
    for (const char* kv : {"q8_0", "q4_0"}) cases.push_back(name + "." + kv);
  }
  return cases;
}

class QuantizedKv2Test : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantizedKv2Test, WithinTheKvTypesRoundingOfLlamaCppsF16Kv) {
  const std::string run_name = GetParam().substr(0, GetParam().rfind('.'));
  auto type = ParseKvType(GetParam().substr(GetParam().rfind('.') + 1));
  ASSERT_TRUE(type.ok());
  const nlohmann::json& run = Manifest()["runs"][run_name];
  auto file = OpenRef2(run["model_path"].get<std::string>());
  ASSERT_NE(file, nullptr);
  ModelOptions opts;
  opts.kv_type = *type;
  opts.context = run["n_ctx"].get<int64_t>();
  auto loaded = LlamaModel::Load(file, opts);
  ASSERT_TRUE(loaded.ok()) << GetParam() << ": " << loaded.status().ToString();
  LlamaModel& model = **loaded;
  std::unique_ptr<KvCache> kv;
  CheckRefRun(
      GetParam(), run, kRef2, KvTypeBounds(*type, ArchOf(run["model_path"].get<std::string>())),
      [&](int64_t total) {
        auto created = model.CreateKvCache(total);
        if (created.ok()) kv = std::move(created).value();
        return created.ok() && kv->type() == *type;
      },
      [&](std::span<const SequenceInput> seqs, std::span<float> logits, const ForwardOptions& o) {
        return model.Forward(seqs, *kv, logits, o);
      });
}

INSTANTIATE_TEST_SUITE_P(Ref2, QuantizedKv2Test, ::testing::ValuesIn(QuantizedKvRuns()), RefRunTestName);

// --- Sliding windows and the prefix cache. ---

// The engine keeps every position of a local layer in the KV cache and masks by window per layer
// (llama.cpp's swa_full), so the radix cache shares a prefix of any length. Here a first request
// holds 48 prompt tokens (longer than gemma2's window 16 and gemma3's 32) and a tail of its own;
// a second request reuses those 48 slots as its cached prefix and extends with the rest of p3.
// Its logits must equal a fresh run's and llama.cpp's prefill rows of p3 at those positions.
class SlidingWindowPrefix2Test : public ::testing::TestWithParam<std::string> {};

TEST_P(SlidingWindowPrefix2Test, PrefixLongerThanTheWindowReusesTheCache) {
  const nlohmann::json& run = Manifest()["runs"][GetParam()];
  auto file = OpenRef2(run["model_path"].get<std::string>());
  ASSERT_NE(file, nullptr);
  auto loaded = LlamaModel::Load(file, ModelOptions{});  // F32 KV cache, against the kv_f32 run
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  LlamaModel& model = **loaded;
  const LlamaConfig& c = model.config();
  const int64_t vocab = c.vocab_size;
  const nlohmann::json& p3 = run["prompts"][3];
  const auto prompt = p3["prompt_ids"].get<std::vector<int32_t>>();
  const auto other = run["prompts"][2]["prompt_ids"].get<std::vector<int32_t>>();
  const std::vector<float> ref = ReadRefFloats(kRef2 + p3["prefill_logits"]["path"].get<std::string>());
  constexpr int64_t kPrefix = 48, kTail = 12;
  const int64_t n = static_cast<int64_t>(prompt.size()), rest = n - kPrefix;
  ASSERT_GT(kPrefix, c.sliding_window);
  ASSERT_GT(n - c.sliding_window, 0);
  ASSERT_EQ(ref.size(), static_cast<size_t>(n * vocab));

  // Request A: the shared prefix, then a tail of its own, on scattered slots.
  auto kv = model.CreateKvCache(kPrefix + kTail + rest);
  ASSERT_TRUE(kv.ok());
  std::vector<int32_t> a_tokens(prompt.begin(), prompt.begin() + kPrefix);
  a_tokens.insert(a_tokens.end(), other.begin() + 1, other.begin() + 1 + kTail);
  std::vector<int32_t> a_slots(kPrefix + kTail);
  for (size_t i = 0; i < a_slots.size(); ++i) a_slots[i] = static_cast<int32_t>((i * 7) % a_slots.size());
  SequenceInput a{0, a_tokens, a_slots};
  std::vector<float> a_logits(vocab);
  ASSERT_TRUE(model.Forward(std::span<const SequenceInput>(&a, 1), **kv, a_logits).ok());

  // Request B: A's first kPrefix slots as its cached prefix, the rest of p3 on fresh slots.
  std::vector<int32_t> b_slots(a_slots.begin(), a_slots.begin() + kPrefix);
  for (int64_t i = 0; i < rest; ++i) b_slots.push_back(static_cast<int32_t>(kPrefix + kTail + i));
  SequenceInput b{static_cast<int32_t>(kPrefix), std::span<const int32_t>(prompt.data() + kPrefix, rest), b_slots};
  ForwardOptions all;
  all.all_logits = true;
  std::vector<float> reused(rest * vocab);
  ASSERT_TRUE(model.Forward(std::span<const SequenceInput>(&b, 1), **kv, reused, all).ok());

  // The same prompt from scratch in a fresh cache.
  auto fresh_kv = model.CreateKvCache(n);
  ASSERT_TRUE(fresh_kv.ok());
  std::vector<int32_t> fresh_slots(n);
  for (int64_t i = 0; i < n; ++i) fresh_slots[i] = static_cast<int32_t>(i);
  SequenceInput f{0, prompt, fresh_slots};
  std::vector<float> fresh(n * vocab);
  ASSERT_TRUE(model.Forward(std::span<const SequenceInput>(&f, 1), **fresh_kv, fresh, all).ok());

  double vs_fresh = 0, vs_llama = 0;
  for (int64_t r = 0; r < rest; ++r)
    for (int64_t i = 0; i < vocab; ++i) {
      const double got = reused[r * vocab + i];
      vs_fresh = std::max(vs_fresh, std::abs(got - fresh[(kPrefix + r) * vocab + i]));
      vs_llama = std::max(vs_llama, std::abs(got - ref[(kPrefix + r) * vocab + i]));
    }
  std::printf("%s: prefix %lld > window %d: reused vs fresh max|d| %.3g, vs llama.cpp %.3g\n", GetParam().c_str(),
              static_cast<long long>(kPrefix), c.sliding_window, vs_fresh, vs_llama);
  // Prefill of 23 tokens against 71: other batch shapes and summation orders, which can move an
  // input across an fp16 rounding boundary of the GELU table (README 6.5: <= 6e-4). Ignoring the
  // window on the cached part would move the logits by ~4 (README 6.4, no_swa).
  EXPECT_LE(vs_fresh, 2e-3);
  EXPECT_LE(vs_llama, 2e-3);  // the F32/F32 gemma bound above
}

INSTANTIATE_TEST_SUITE_P(Ref2, SlidingWindowPrefix2Test,
                         ::testing::Values("h_gemma2.F32.kv_f32", "i_gemma3.F32.kv_f32"), RefRunTestName);

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
  for (const char* path : {"models/f_qwen3.F32.gguf", "models/g_qwen3moe.F32.gguf", "models/j_granite.F32.gguf", "models/k_smollm3.F32.gguf",
                           "models/h_gemma2.F32.gguf", "models/i_gemma3.F32.gguf", "models/l_phi4mini.F32.gguf"}) {
    auto src = OpenRef2(path);
    ASSERT_NE(src, nullptr);
    EXPECT_TRUE(LoadStatus(EditedCopy(*src, "")).ok()) << path;
  }
}

// `src` re-serialised with metadata key `key` set to the integer `value`.
std::shared_ptr<const gguf::GgufFile> CopyWithInt(const gguf::GgufFile& src, const std::string& key, uint32_t value) {
  gguf::GgufWriter w;
  for (const gguf::KeyValue& kv : src.metadata()) w.Set(kv.key, kv.key == key ? gguf::Value(value) : kv.value);
  for (const gguf::TensorInfo& t : src.tensors()) {
    const uint8_t* data = src.TensorData(t);
    EXPECT_TRUE(w.AddTensor(t.name, t.dims, t.type, std::vector<uint8_t>(data, data + t.num_bytes())).ok());
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

TEST(Ref2Refusals, Qwen3MoeWithoutExpertCountsNamesTheKey) {
  auto src = OpenRef2("models/g_qwen3moe.F32.gguf");
  ASSERT_NE(src, nullptr);
  for (const char* key : {"qwen3moe.expert_count", "qwen3moe.expert_used_count"}) {
    const Status s = LoadStatus(EditedCopy(*src, key));
    EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
    EXPECT_NE(s.message().find(key), std::string::npos) << s.ToString();
  }
}

TEST(Ref2Refusals, Qwen3MoeUsingMoreExpertsThanItHasIsNamed) {
  auto src = OpenRef2("models/g_qwen3moe.F32.gguf");
  ASSERT_NE(src, nullptr);
  const Status s = LoadStatus(CopyWithInt(*src, "qwen3moe.expert_used_count", 9));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("qwen3moe.expert_used_count 9 exceeds qwen3moe.expert_count 8"), std::string::npos)
      << s.ToString();
}

TEST(Ref2Refusals, Qwen3MoeExpertTensorOfTheWrongShapeIsNamed) {
  auto src = OpenRef2("models/g_qwen3moe.F32.gguf");
  ASSERT_NE(src, nullptr);
  // Four experts where the metadata says eight.
  Status s = LoadStatus(EditedCopy(*src, "", "blk.1.ffn_up_exps.weight", {256, 64, 4}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("blk.1.ffn_up_exps.weight has shape [256, 64, 4], expected [256, 64, 8]"),
            std::string::npos)
      << s.ToString();
  // A 2-D down projection (the dense layout) is refused the same way.
  s = LoadStatus(EditedCopy(*src, "", "blk.0.ffn_down_exps.weight", {64, 2048}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("blk.0.ffn_down_exps.weight has shape [64, 2048], expected [64, 256, 8]"),
            std::string::npos)
      << s.ToString();
  // Experts 128 wide while expert_feed_forward_length says 64.
  s = LoadStatus(CopyWithInt(*src, "qwen3moe.expert_feed_forward_length", 128));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("blk.0.ffn_gate_exps.weight has shape [256, 64, 8], expected [256, 128, 8]"),
            std::string::npos)
      << s.ToString();
}

TEST(Ref2Config, Qwen3MoeReadsItsExperts) {
  auto src = OpenRef2("models/g_qwen3moe.F32.gguf");
  ASSERT_NE(src, nullptr);
  auto c = LlamaConfig::FromGguf(*src);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->moe() && c->qk_norm);
  EXPECT_EQ(c->num_experts, 8);
  EXPECT_EQ(c->experts_used, 2);
  EXPECT_EQ(c->expert_ffn_dim, 64);  // feed_forward_length (512) is not used
  EXPECT_EQ(c->rope_style, RopeStyle::kNeox);
  // Without expert_feed_forward_length: llama.cpp's feed_forward_length / expert_used_count.
  auto fallback = LlamaConfig::FromGguf(*EditedCopy(*src, "qwen3moe.expert_feed_forward_length"));
  ASSERT_TRUE(fallback.ok()) << fallback.status().ToString();
  EXPECT_EQ(fallback->expert_ffn_dim, 256);
}

// The expert weight bytes one decoded token reads (its 2 of 8 experts, every layer) against all
// experts, from the tensor sizes of each ref2 file.
TEST(Ref2Moe, DecodeReadsOnlyTheActiveExpertsBytes) {
  for (const char* type : {"F32", "Q8_0", "Q4_K_M"}) {
    auto src = OpenRef2(std::string("models/g_qwen3moe.") + type + ".gguf");
    ASSERT_NE(src, nullptr);
    auto c = LlamaConfig::FromGguf(*src);
    ASSERT_TRUE(c.ok());
    auto w = LoadLlamaWeights(*src, *c);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    int64_t active = 0, all = 0;
    for (const LayerWeights& L : w->layers) {
      const MoeBytes b =
          MoeWeightBytes({L.router, L.exp_gate, L.exp_up, L.exp_down, c->num_experts, c->experts_used, c->expert_ffn_dim});
      active += b.active;
      all += b.all;
      EXPECT_EQ(b.all, static_cast<int64_t>(L.exp_gate.rows * L.exp_gate.row_bytes() + L.exp_up.rows * L.exp_up.row_bytes() +
                                            L.exp_down.rows * L.exp_down.row_bytes()));
    }
    EXPECT_EQ(active * c->num_experts, all * c->experts_used);
    std::printf("g_qwen3moe.%s: expert weights read per decoded token %lld of %lld bytes (%.0f%%)\n", type,
                static_cast<long long>(active), static_cast<long long>(all), 100.0 * active / all);
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

TEST(Ref2Refusals, Gemma2WithoutRmsEpsilonNamesTheKey) {
  // llama.cpp requires it for gemma2 and gemma3 (other architectures fall back to 1e-5).
  auto src = OpenRef2("models/h_gemma2.F32.gguf");
  ASSERT_NE(src, nullptr);
  const Status s = LoadStatus(EditedCopy(*src, "gemma2.attention.layer_norm_rms_epsilon"));
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find("gemma2.attention.layer_norm_rms_epsilon"), std::string::npos) << s.ToString();
}

TEST(Ref2Refusals, Gemma3PostFfnNormOfTheWrongSizeIsNamed) {
  auto src = OpenRef2("models/i_gemma3.F32.gguf");
  ASSERT_NE(src, nullptr);
  const Status s = LoadStatus(EditedCopy(*src, "", "blk.2.post_ffw_norm.weight", {128}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("blk.2.post_ffw_norm.weight"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("expected [256]"), std::string::npos) << s.ToString();
}

TEST(Ref2Refusals, GemmaWithoutOptionalKeysTakesLlamaCppsDefaults) {
  auto g2 = OpenRef2("models/h_gemma2.F32.gguf");
  auto g3 = OpenRef2("models/i_gemma3.F32.gguf");
  ASSERT_TRUE(g2 && g3);
  auto soft = LlamaModel::Load(EditedCopy(*g2, "gemma2.attn_logit_softcapping"), {});
  ASSERT_TRUE(soft.ok()) << soft.status().ToString();
  EXPECT_FLOAT_EQ((*soft)->config().attn_softcap, 50.0f);
  auto final_cap = LlamaConfig::FromGguf(*EditedCopy(*g2, "gemma2.final_logit_softcapping"));
  ASSERT_TRUE(final_cap.ok());
  EXPECT_FLOAT_EQ(final_cap->final_softcap, 30.0f);
  auto window = LlamaConfig::FromGguf(*EditedCopy(*g2, "gemma2.attention.sliding_window"));
  ASSERT_TRUE(window.ok());
  EXPECT_EQ(window->sliding_window, 4096);  // Gemma-2's window
  auto pattern = LlamaConfig::FromGguf(*EditedCopy(*g3, "gemma3.attention.sliding_window_pattern"));
  ASSERT_TRUE(pattern.ok());
  EXPECT_EQ(pattern->swa_period, 6);  // real Gemma-3 files rely on it: the converter does not write it
  EXPECT_TRUE(pattern->layer_is_local(0) && pattern->layer_is_local(1) && pattern->layer_is_local(2));
  auto swa_base = LlamaConfig::FromGguf(*EditedCopy(*g3, "gemma3.rope.freq_base_swa"));
  ASSERT_TRUE(swa_base.ok());
  EXPECT_FLOAT_EQ(swa_base->rope_freq_base_swa, 10000.0f);
  auto no_window = LlamaConfig::FromGguf(*EditedCopy(*g3, "gemma3.attention.sliding_window"));
  ASSERT_TRUE(no_window.ok());
  EXPECT_FALSE(no_window->layer_is_local(0));  // gemma3 without the key: no local layer
}

TEST(Ref2Refusals, Phi3RopeFactorsOfTheWrongLengthAreNamed) {
  auto src = OpenRef2("models/l_phi4mini.F32.gguf");
  ASSERT_NE(src, nullptr);
  for (const char* name : {"rope_factors_short.weight", "rope_factors_long.weight"}) {
    const Status s = LoadStatus(EditedCopy(*src, "", name, {32}));  // 32 values: rope_dim 64, not 48
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find(name), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("expected [24]"), std::string::npos) << s.ToString();
  }
}

TEST(Ref2Refusals, Phi3RopeDimensionAboveTheHeadSizeIsNamed) {
  auto src = OpenRef2("models/l_phi4mini.F32.gguf");
  ASSERT_NE(src, nullptr);
  const Status s = LoadStatus(CopyWithInt(*src, "phi3.rope.dimension_count", 80));  // head_dim 64
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("phi3.rope.dimension_count 80"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("head size 64"), std::string::npos) << s.ToString();
}

TEST(Ref2Refusals, ContextAboveTheFilesIsNamed) {
  auto src = OpenRef2("models/l_phi4mini.F32.gguf");
  ASSERT_NE(src, nullptr);
  ModelOptions o;
  o.context = 131073;
  const Status s = LlamaModel::Load(src, o).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("context 131073 exceeds"), std::string::npos) << s.ToString();
}

TEST(Ref2Refusals, LongRopeFactorsOutsidePhi3AreNamed) {
  auto src = OpenRef2("models/l_phi4mini.F32.gguf");
  ASSERT_NE(src, nullptr);
  gguf::GgufWriter w;
  for (const gguf::KeyValue& kv : src->metadata()) {
    std::string key = kv.key;
    if (key.rfind("phi3.", 0) == 0) key = "llama." + key.substr(5);
    w.Set(key, key == "general.architecture" ? gguf::Value(std::string("llama")) : kv.value);
  }
  for (const gguf::TensorInfo& t : src->tensors()) {
    const uint8_t* data = src->TensorData(t);
    ASSERT_TRUE(w.AddTensor(t.name, t.dims, t.type, std::vector<uint8_t>(data, data + t.num_bytes())).ok());
  }
  auto bytes = w.Serialize();
  ASSERT_TRUE(bytes.ok());
  auto f = gguf::GgufFile::Parse(*bytes, "as-llama");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto c = LlamaConfig::FromGguf(**f);
  EXPECT_EQ(c.status().code(), StatusCode::kUnsupported) << c.status().ToString();
  EXPECT_NE(c.status().message().find("rope_factors_long.weight"), std::string::npos) << c.status().ToString();
  EXPECT_NE(c.status().message().find("phi3 only"), std::string::npos) << c.status().ToString();
}

// phi3 in the Phi-4-mini layout: partial rotary, LongRoPE factors chosen by the served context
// as llama.cpp chooses them by n_ctx (long iff n_ctx > original_context_length), attn_factor.
TEST(Ref2Config, Phi3ReadsPartialRotaryAndLongRope) {
  auto src = OpenRef2("models/l_phi4mini.F32.gguf");
  ASSERT_NE(src, nullptr);
  auto c = LlamaConfig::FromGguf(*src);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->head_dim, 64);
  EXPECT_EQ(c->rope_dim, 48);
  EXPECT_EQ(c->rope_style, RopeStyle::kNeox);
  EXPECT_TRUE(c->fused_qkv && c->fused_gate_up && c->tied_output);
  EXPECT_TRUE(c->rope_long_short_factors);
  EXPECT_EQ(c->rope_original_context, 4096);
  EXPECT_FLOAT_EQ(c->rope_attn_factor, 1.19023812f);
  EXPECT_FLOAT_EQ(c->softmax_scale(), 1.0f / 8.0f);  // 1/sqrt(head_dim), not 1/sqrt(rope_dim)
  EXPECT_FALSE(c->uses_long_rope_factors(512));
  EXPECT_FALSE(c->uses_long_rope_factors(4096));
  EXPECT_TRUE(c->uses_long_rope_factors(4097));
  auto w = LoadLlamaWeights(*src, *c);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->rope_inv_freq.size(), 24u);
  ASSERT_EQ(w->rope_inv_freq_long.size(), 24u);
  // Factors 1 + 0.5 x^2 (short) and 1 + 39 x^3 (long), x = i / 23 (ref2 README 1).
  for (int i = 0; i < 24; ++i) {
    const double x = i / 23.0, inv = std::pow(10000.0, -2.0 * i / 48);
    EXPECT_NEAR(w->rope_inv_freq[i], inv / (1 + 0.5 * x * x), 1e-6 * inv) << i;
    EXPECT_NEAR(w->rope_inv_freq_long[i], inv / (1 + 39 * x * x * x), 1e-6 * inv) << i;
  }
  auto by_default = LlamaModel::Load(src, {});  // the default served context, 4096: the short factors
  ASSERT_TRUE(by_default.ok()) << by_default.status().ToString();
  EXPECT_EQ((*by_default)->served_context(), 4096);
  // Without the key the file's context length (131072) is the original one: never the long factors.
  auto no_orig = LlamaConfig::FromGguf(*EditedCopy(*src, "phi3.rope.scaling.original_context_length"));
  ASSERT_TRUE(no_orig.ok());
  EXPECT_EQ(no_orig->rope_original_context, 131072);
  EXPECT_FALSE(no_orig->uses_long_rope_factors(131072));
  auto no_factor = LlamaConfig::FromGguf(*EditedCopy(*src, "phi3.rope.scaling.attn_factor"));
  ASSERT_TRUE(no_factor.ok());
  EXPECT_FLOAT_EQ(no_factor->rope_attn_factor, 1.0f);
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

TEST(Ref2Config, ReadsWhatSetsGemma2AndGemma3Apart) {
  auto gemma2 = OpenRef2("models/h_gemma2.F32.gguf");
  auto gemma3 = OpenRef2("models/i_gemma3.F32.gguf");
  ASSERT_TRUE(gemma2 && gemma3);
  auto g2 = LlamaConfig::FromGguf(*gemma2);
  ASSERT_TRUE(g2.ok()) << g2.status().ToString();
  EXPECT_FLOAT_EQ(g2->embedding_scale, 16.0f);
  EXPECT_FLOAT_EQ(g2->softmax_scale(), 1.0f / 8.0f);  // 1/sqrt(head_dim): no key; 27B (46 layers) differs
  EXPECT_FLOAT_EQ(g2->attn_softcap, 4.0f);
  EXPECT_FLOAT_EQ(g2->final_softcap, 5.0f);
  EXPECT_TRUE(g2->post_norms);
  EXPECT_FALSE(g2->qk_norm);
  EXPECT_EQ(g2->ffn_activation, FfnActivation::kGeluTanhF16Table);
  EXPECT_EQ(g2->rope_style, RopeStyle::kNeox);
  EXPECT_EQ(g2->sliding_window, 16);
  EXPECT_EQ(g2->swa_period, 2);
  EXPECT_TRUE(g2->layer_is_local(0));
  EXPECT_FALSE(g2->layer_is_local(1));
  EXPECT_FALSE(g2->swa_rope_differs());
  auto g3 = LlamaConfig::FromGguf(*gemma3);
  ASSERT_TRUE(g3.ok()) << g3.status().ToString();
  EXPECT_FLOAT_EQ(g3->embedding_scale, 16.0f);
  EXPECT_FLOAT_EQ(g3->softmax_scale(), 1.0f / 8.0f);
  EXPECT_EQ(g3->attn_softcap, 0.0f);
  EXPECT_EQ(g3->final_softcap, 0.0f);
  EXPECT_TRUE(g3->post_norms && g3->qk_norm);
  EXPECT_EQ(g3->ffn_activation, FfnActivation::kGeluTanhF16Table);
  EXPECT_EQ(g3->sliding_window, 32);
  EXPECT_EQ(g3->swa_period, 3);
  EXPECT_TRUE(g3->layer_is_local(0) && g3->layer_is_local(1));
  EXPECT_FALSE(g3->layer_is_local(2));
  EXPECT_FLOAT_EQ(g3->rope_freq_base, 1e6f);
  EXPECT_FLOAT_EQ(g3->rope_linear_scale, 8.0f);  // the global layers only
  EXPECT_FLOAT_EQ(g3->rope_freq_base_swa, 1e4f);
  EXPECT_FLOAT_EQ(g3->rope_linear_scale_swa, 1.0f);
  EXPECT_TRUE(g3->swa_rope_differs());
}

}  // namespace
}  // namespace radixserve::model
