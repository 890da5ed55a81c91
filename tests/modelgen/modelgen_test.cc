// Model generator: deterministic, complete, readable back identically, and quantized faithfully.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "core/gguf/gguf_reader.h"
#include "core/modelgen/builtin_vocab.h"
#include "core/modelgen/model_generator.h"

namespace radixserve::modelgen {
namespace {

ModelSpec SmallSpec(gguf::TensorType t) {
  ModelSpec s;
  s.dim = 64, s.layers = 2, s.heads = 4, s.kv_heads = 2, s.ffn = 96, s.context = 128;
  s.weights = WeightTypes::All(t);
  return s;
}

std::vector<uint8_t> Bytes(const ModelSpec& s) {
  gguf::GgufWriter w;
  EXPECT_TRUE(BuildModel(s, &w).ok());
  return *w.Serialize();
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v = exp == 0 ? std::ldexp(float(mant), -24) : std::ldexp(float(mant | 0x400), int(exp) - 25);
  return sign ? -v : v;
}

TEST(ModelGenerator, SameSpecSameBytesOtherSeedOtherBytes) {
  auto a = Bytes(SmallSpec(gguf::TensorType::kF32));
  EXPECT_EQ(a, Bytes(SmallSpec(gguf::TensorType::kF32)));
  ModelSpec other = SmallSpec(gguf::TensorType::kF32);
  other.seed = 2;
  EXPECT_NE(a, Bytes(other));
}

TEST(ModelGenerator, WrittenFileReadsBackIdentically) {
  ModelSpec s = SmallSpec(gguf::TensorType::kQ8_0);
  gguf::GgufWriter w;
  ASSERT_TRUE(BuildModel(s, &w).ok());
  std::string path = (std::filesystem::temp_directory_path() / "radixserve_modelgen_test.gguf").string();
  ASSERT_TRUE(w.WriteFile(path).ok());
  auto f = gguf::GgufFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  // Every key and tensor written comes back with the same bytes.
  auto expected = *w.Serialize();
  ASSERT_EQ(std::filesystem::file_size(path), expected.size());
  auto again = gguf::GgufFile::Parse(std::span<const uint8_t>(expected.data(), expected.size()), "mem");
  ASSERT_TRUE(again.ok());
  ASSERT_EQ((*f)->tensors().size(), (*again)->tensors().size());
  for (size_t i = 0; i < (*f)->tensors().size(); ++i) {
    const auto& t = (*f)->tensors()[i];
    EXPECT_EQ(t.name, (*again)->tensors()[i].name);
    EXPECT_EQ(0, std::memcmp((*f)->TensorData(t), (*again)->TensorData((*again)->tensors()[i]), t.num_bytes()));
  }
  EXPECT_EQ((*f)->metadata().size(), (*again)->metadata().size());
  std::filesystem::remove(path);
}

TEST(ModelGenerator, HasEveryLlamaTensorWithTheRightShapes) {
  auto bytes = Bytes(SmallSpec(gguf::TensorType::kF16));
  auto f = gguf::GgufFile::Parse(std::span<const uint8_t>(bytes.data(), bytes.size()), "mem");
  ASSERT_TRUE(f.ok());
  const auto& g = **f;
  uint64_t vocab = BuiltinVocab().tokens.size();
  EXPECT_EQ(*g.GetString("general.architecture"), "llama");
  EXPECT_EQ(*g.GetInt("llama.attention.head_count_kv"), 2);
  EXPECT_EQ(*g.GetInt("llama.rope.dimension_count"), 16);
  EXPECT_EQ(g.FindTensor("token_embd.weight")->dims, (std::vector<uint64_t>{64, vocab}));
  EXPECT_EQ(g.FindTensor("blk.1.attn_k.weight")->dims, (std::vector<uint64_t>{64, 32}));
  EXPECT_EQ(g.FindTensor("blk.1.ffn_down.weight")->dims, (std::vector<uint64_t>{96, 64}));
  EXPECT_EQ(g.FindTensor("blk.0.attn_norm.weight")->type, gguf::TensorType::kF32);
  EXPECT_EQ(g.FindTensor("output.weight")->type, gguf::TensorType::kF16);
  EXPECT_EQ(g.tensors().size(), 2u + 2u * 9u + 1u);
}

TEST(ModelGenerator, QuantizedWeightsMatchTheF32Ones) {
  auto f32 = Bytes(SmallSpec(gguf::TensorType::kF32));
  auto q8 = Bytes(SmallSpec(gguf::TensorType::kQ8_0));
  auto a = gguf::GgufFile::Parse(std::span<const uint8_t>(f32.data(), f32.size()), "f32");
  auto b = gguf::GgufFile::Parse(std::span<const uint8_t>(q8.data(), q8.size()), "q8");
  const auto* ta = (*a)->FindTensor("blk.0.attn_q.weight");
  const auto* tb = (*b)->FindTensor("blk.0.attn_q.weight");
  const float* x = reinterpret_cast<const float*>((*a)->TensorData(*ta));
  const uint8_t* q = (*b)->TensorData(*tb);
  double max_err = 0;
  for (uint64_t blk = 0; blk < ta->num_elements() / 32; ++blk) {
    uint16_t dh;
    std::memcpy(&dh, q + blk * 34, 2);
    float d = HalfToFloat(dh);
    for (int i = 0; i < 32; ++i) {
      float deq = d * static_cast<int8_t>(q[blk * 34 + 2 + i]);
      max_err = std::max(max_err, double(std::fabs(deq - x[blk * 32 + i])));
      // Half a quantisation step d, plus the F16 rounding of d itself (2^-11 relative, times up to 127
      // steps: within 1e-3 of |x|), plus 1e-6 for an all-zero block.
      ASSERT_LE(std::fabs(deq - x[blk * 32 + i]), d * 0.5f + 1e-3f * std::fabs(x[blk * 32 + i]) + 1e-6f);
    }
  }
  EXPECT_GT(max_err, 0.0);  // really quantized
}

// The _M presets type each tensor as llama-quantize does (the type table of ../shared/models/ref:
// output and the attn_v/ffn_down of layers n/8.., every third, and the last eighth in Q6_K).
TEST(ModelGenerator, PresetsTypeTheTensorsAsLlamaQuantizeDoes) {
  ModelSpec s = SmallSpec(gguf::TensorType::kF32);
  s.dim = 256, s.ffn = 512, s.layers = 8;
  auto types = ParseWeightType("Q4_K_M");
  ASSERT_TRUE(types.ok());
  s.weights = *types;
  auto bytes = Bytes(s);
  auto f = gguf::GgufFile::Parse(std::span<const uint8_t>(bytes.data(), bytes.size()), "mem");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->FindTensor("output.weight")->type, gguf::TensorType::kQ6_K);
  EXPECT_EQ((*f)->FindTensor("token_embd.weight")->type, gguf::TensorType::kQ4_K);
  for (uint32_t l = 0; l < 8; ++l) {
    const bool more = l == 0 || l == 3 || l == 6 || l == 7;
    const std::string p = "blk." + std::to_string(l) + ".";
    EXPECT_EQ((*f)->FindTensor(p + "attn_v.weight")->type, more ? gguf::TensorType::kQ6_K : gguf::TensorType::kQ4_K) << l;
    EXPECT_EQ((*f)->FindTensor(p + "ffn_down.weight")->type, more ? gguf::TensorType::kQ6_K : gguf::TensorType::kQ4_K) << l;
    EXPECT_EQ((*f)->FindTensor(p + "attn_q.weight")->type, gguf::TensorType::kQ4_K) << l;
  }
  EXPECT_EQ(*(*f)->GetInt("general.file_type"), 15);  // LLAMA_FTYPE_MOSTLY_Q4_K_M
  auto q4_0 = ParseWeightType("q4_0");
  ASSERT_TRUE(q4_0.ok());
  EXPECT_EQ(q4_0->base, gguf::TensorType::kQ4_0);
  EXPECT_EQ(q4_0->output, gguf::TensorType::kQ6_K);
}

TEST(ModelGenerator, CopiesATokenizer) {
  ModelSpec s = SmallSpec(gguf::TensorType::kF32);
  s.tokenizer_from = std::string(RADIXSERVE_SHARED_DIR) + "/models/stories260K.gguf";
  auto bytes = Bytes(s);
  auto f = gguf::GgufFile::Parse(std::span<const uint8_t>(bytes.data(), bytes.size()), "mem");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ((*f)->GetStringArray("tokenizer.ggml.tokens")->size(), 512u);
  EXPECT_EQ((*f)->FindTensor("token_embd.weight")->dims[1], 512u);
}

TEST(ModelGenerator, RejectsBadSpecs) {
  ModelSpec s = SmallSpec(gguf::TensorType::kQ8_1);  // an activation type
  gguf::GgufWriter w;
  Status st = BuildModel(s, &w);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("Q8_1"), std::string::npos);
  s = SmallSpec(gguf::TensorType::kQ4_K);
  s.dim = 128, s.heads = 4, s.kv_heads = 2;  // rows of 128: not whole 256-element super-blocks
  st = BuildModel(s, &w);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("multiples of 256"), std::string::npos) << st.message();
  s = SmallSpec(gguf::TensorType::kF32);
  s.heads = 3;
  EXPECT_FALSE(BuildModel(s, &w).ok());
  s = SmallSpec(gguf::TensorType::kF32);
  s.tokenizer_from = "/nonexistent.gguf";
  EXPECT_EQ(BuildModel(s, &w).code(), StatusCode::kNotFound);
  EXPECT_FALSE(SpecForSize("huge").ok());
  EXPECT_FALSE(ParseWeightType("q4_k_s").ok());
  EXPECT_FALSE(ParseWeightType("iq2_xxs").ok());
}

TEST(BuiltinVocab, IsAValidSentencePieceVocabulary) {
  const Vocab& v = BuiltinVocab();
  ASSERT_EQ(v.tokens.size(), v.scores.size());
  ASSERT_EQ(v.tokens.size(), v.types.size());
  EXPECT_EQ(v.tokens[0], "<unk>");
  EXPECT_EQ(v.tokens[1], "<s>");
  EXPECT_EQ(v.tokens[2], "</s>");
  EXPECT_EQ(v.tokens[3 + 0x41], "<0x41>");
  std::set<std::string> unique(v.tokens.begin(), v.tokens.end());
  EXPECT_EQ(unique.size(), v.tokens.size());
  // Every multi-character piece has its one-shorter prefix in the vocabulary, so merges can build it.
  for (size_t i = 3 + 256; i < v.tokens.size(); ++i) {
    const std::string& t = v.tokens[i];
    if (t.size() <= 3) continue;  // the space marker itself, single characters, "▁x"
    std::string prefix = t.substr(0, t.size() - 1);
    EXPECT_TRUE(unique.count(prefix)) << t;
  }
}

}  // namespace
}  // namespace radixserve::modelgen
