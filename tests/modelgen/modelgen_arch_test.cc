// Model generator, other architectures: each file the generator writes for qwen3, qwen3moe,
// gemma2, gemma3, granite, smollm3 and phi3 loads in the engine (which refuses any tensor its
// layout does not read, so the tensor set is exactly the architecture's), carries the metadata
// that sets the architecture apart, and runs a forward pass with finite logits of order 1.
// (That llama.cpp loads and runs the same files is bench/compare_llamacpp.sh archs.)
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "core/model/llama_config.h"
#include "core/model/llama_model.h"
#include "core/modelgen/model_generator.h"

namespace radixserve::modelgen {
namespace {

// Bytes and the file parsed from them, kept alive together.
struct Owned {
  std::vector<uint8_t> bytes;
  std::unique_ptr<gguf::GgufFile> file;
};

std::shared_ptr<const gguf::GgufFile> Build(const ModelSpec& spec) {
  gguf::GgufWriter w;
  Status st = BuildModel(spec, &w);
  EXPECT_TRUE(st.ok()) << st.ToString();
  if (!st.ok()) return nullptr;
  auto owned = std::make_shared<Owned>();
  owned->bytes = *w.Serialize();
  auto f = gguf::GgufFile::Parse(std::span<const uint8_t>(owned->bytes.data(), owned->bytes.size()), spec.arch);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  if (!f.ok()) return nullptr;
  owned->file = std::move(f).value();
  return std::shared_ptr<const gguf::GgufFile>(owned, owned->file.get());
}

// dim 256 with the architecture's own values, then the test's sizes.
ModelSpec Spec(const std::string& arch, uint32_t layers, uint32_t heads, uint32_t kv_heads) {
  ModelSpec s;
  EXPECT_TRUE(UseArchitecture(arch, &s).ok());
  s.dim = 256, s.layers = layers, s.heads = heads, s.kv_heads = kv_heads, s.ffn = 512;
  if (arch != "phi3") s.context = 512;  // phi3 keeps Phi-4-mini's 131072 over 4096
  return s;
}

// Loads the file, checks it against the spec's common sizes, runs one prompt of 40 tokens (past
// the test's sliding windows) and checks the last position's logits: finite, std of order 1.
std::unique_ptr<model::LlamaModel> LoadAndRun(const std::shared_ptr<const gguf::GgufFile>& file, const ModelSpec& s) {
  if (file == nullptr) return nullptr;
  auto m = model::LlamaModel::Load(file, model::ModelOptions{2, model::KvType::kF32});
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return nullptr;
  const model::LlamaConfig& c = (*m)->config();
  EXPECT_EQ(c.architecture, s.arch);
  EXPECT_EQ(c.dim, static_cast<int32_t>(s.dim));
  EXPECT_EQ(c.num_layers, static_cast<int32_t>(s.layers));
  EXPECT_EQ(c.num_heads, static_cast<int32_t>(s.heads));
  EXPECT_EQ(c.num_kv_heads, static_cast<int32_t>(s.kv_heads));
  EXPECT_EQ(c.context_length, static_cast<int32_t>(s.context));
  EXPECT_FLOAT_EQ(c.rope_freq_base, s.rope_base);
  EXPECT_FLOAT_EQ(c.rms_eps, s.rms_eps);
  EXPECT_EQ(c.tied_output, s.tied_output);

  const int T = 40;
  std::vector<int32_t> tokens(T), slots(T);
  for (int i = 0; i < T; ++i) tokens[i] = 3 + (i * 37) % (c.vocab_size - 3), slots[i] = i;
  auto kv = (*m)->CreateKvCache(T);
  EXPECT_TRUE(kv.ok());
  if (!kv.ok()) return nullptr;
  std::vector<float> logits(c.vocab_size);
  model::SequenceInput in{0, tokens, slots};
  Status st = (*m)->Forward(std::span<const model::SequenceInput>(&in, 1), **kv, logits);
  EXPECT_TRUE(st.ok()) << st.ToString();
  double sum = 0, sq = 0;
  for (float x : logits) {
    EXPECT_TRUE(std::isfinite(x));
    sum += x, sq += static_cast<double>(x) * x;
  }
  const double mean = sum / logits.size(), sd = std::sqrt(sq / logits.size() - mean * mean);
  EXPECT_GT(sd, 0.2) << s.arch << ": logits nearly flat";
  EXPECT_LT(sd, 5.0) << s.arch << ": logits far from O(1)";
  return std::move(m).value();
}

TEST(ModelGeneratorArchs, Qwen3HasPerHeadNormsAndItsOwnHeadSize) {
  ModelSpec s = Spec("qwen3", 2, 4, 2);
  s.head_dim = 128;  // Qwen3's head size, not dim / heads (64)
  auto f = Build(s);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(*f->GetInt("qwen3.attention.key_length"), 128);
  EXPECT_EQ(*f->GetInt("qwen3.attention.value_length"), 128);
  EXPECT_EQ(f->FindTensor("blk.0.attn_q.weight")->dims, (std::vector<uint64_t>{256, 512}));
  EXPECT_EQ(f->FindTensor("blk.0.attn_k.weight")->dims, (std::vector<uint64_t>{256, 256}));
  EXPECT_EQ(f->FindTensor("blk.1.attn_q_norm.weight")->dims, (std::vector<uint64_t>{128}));
  EXPECT_EQ(f->FindTensor("blk.1.attn_output.weight")->dims, (std::vector<uint64_t>{512, 256}));
  auto m = LoadAndRun(f, s);
  ASSERT_NE(m, nullptr);
  const model::LlamaConfig& c = m->config();
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.rope_dim, 128);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_EQ(c.rope_style, model::RopeStyle::kNeox);
  EXPECT_FLOAT_EQ(c.rope_freq_base, 1e6f);
  EXPECT_FALSE(c.moe());
}

TEST(ModelGeneratorArchs, Qwen3MoeHasExpertsAndARouter) {
  for (gguf::TensorType t : {gguf::TensorType::kF32, gguf::TensorType::kQ8_0}) {
    ModelSpec s = Spec("qwen3moe", 2, 4, 2);
    s.experts = 8, s.experts_used = 2, s.expert_ffn = 64;
    s.weights = WeightTypes::All(t);
    auto f = Build(s);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->FindTensor("blk.0.ffn_gate_inp.weight")->dims, (std::vector<uint64_t>{256, 8}));
    EXPECT_EQ(f->FindTensor("blk.0.ffn_gate_inp.weight")->type, gguf::TensorType::kF32);  // as llama-quantize keeps it
    EXPECT_EQ(f->FindTensor("blk.1.ffn_gate_exps.weight")->dims, (std::vector<uint64_t>{256, 64, 8}));
    EXPECT_EQ(f->FindTensor("blk.1.ffn_up_exps.weight")->dims, (std::vector<uint64_t>{256, 64, 8}));
    EXPECT_EQ(f->FindTensor("blk.1.ffn_down_exps.weight")->dims, (std::vector<uint64_t>{64, 256, 8}));
    EXPECT_EQ(f->FindTensor("blk.1.ffn_down_exps.weight")->type, t);
    EXPECT_EQ(f->FindTensor("blk.0.ffn_gate.weight"), nullptr);
    auto m = LoadAndRun(f, s);
    ASSERT_NE(m, nullptr);
    const model::LlamaConfig& c = m->config();
    EXPECT_TRUE(c.moe());
    EXPECT_EQ(c.num_experts, 8);
    EXPECT_EQ(c.experts_used, 2);
    EXPECT_EQ(c.expert_ffn_dim, 64);
    EXPECT_TRUE(c.qk_norm);
    EXPECT_EQ(c.rope_style, model::RopeStyle::kNeox);
  }
  // Defaults: 8 experts, 2 used, ffn / 4 wide.
  ModelSpec d = Spec("qwen3moe", 2, 4, 2);
  auto f = Build(d);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(*f->GetInt("qwen3moe.expert_count"), 8);
  EXPECT_EQ(*f->GetInt("qwen3moe.expert_used_count"), 2);
  EXPECT_EQ(*f->GetInt("qwen3moe.expert_feed_forward_length"), 128);
}

TEST(ModelGeneratorArchs, Gemma2HasSoftCapsPostNormsAndAWindow) {
  ModelSpec s = Spec("gemma2", 2, 4, 2);
  s.attn_softcap = 4.0f, s.final_softcap = 5.0f, s.sliding_window = 16;
  auto f = Build(s);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->FindTensor("output.weight"), nullptr);  // llama.cpp's gemma2 is always tied
  EXPECT_NE(f->FindTensor("blk.1.post_attention_norm.weight"), nullptr);
  EXPECT_NE(f->FindTensor("blk.1.post_ffw_norm.weight"), nullptr);
  EXPECT_FALSE(f->Has("gemma2.attention.sliding_window_pattern"));  // llama.cpp's default, 2
  auto m = LoadAndRun(f, s);
  ASSERT_NE(m, nullptr);
  const model::LlamaConfig& c = m->config();
  EXPECT_FLOAT_EQ(c.attn_softcap, 4.0f);
  EXPECT_FLOAT_EQ(c.final_softcap, 5.0f);
  EXPECT_EQ(c.sliding_window, 16);
  EXPECT_EQ(c.swa_period, 2);
  EXPECT_TRUE(c.layer_is_local(0));
  EXPECT_FALSE(c.layer_is_local(1));
  EXPECT_TRUE(c.post_norms);
  EXPECT_FALSE(c.qk_norm);
  EXPECT_EQ(c.ffn_activation, model::FfnActivation::kGeluTanhF16Table);
  EXPECT_FLOAT_EQ(c.embedding_scale, 16.0f);
  EXPECT_EQ(c.head_dim, 64);

  ModelSpec untied = s;
  untied.tied_output = false;
  gguf::GgufWriter w;
  EXPECT_EQ(BuildModel(untied, &w).code(), StatusCode::kInvalidArgument);
}

TEST(ModelGeneratorArchs, Gemma3HasQkNormsAWindowPatternAndLocalRope) {
  ModelSpec s = Spec("gemma3", 3, 4, 1);
  s.sliding_window = 32, s.swa_pattern = 3;
  auto f = Build(s);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(*f->GetString("gemma3.rope.scaling.type"), "linear");
  auto m = LoadAndRun(f, s);
  ASSERT_NE(m, nullptr);
  const model::LlamaConfig& c = m->config();
  EXPECT_TRUE(c.qk_norm);
  EXPECT_TRUE(c.post_norms);
  EXPECT_EQ(c.sliding_window, 32);
  EXPECT_EQ(c.swa_period, 3);
  EXPECT_TRUE(c.layer_is_local(0));
  EXPECT_TRUE(c.layer_is_local(1));
  EXPECT_FALSE(c.layer_is_local(2));
  EXPECT_FLOAT_EQ(c.rope_freq_base, 1e6f);
  EXPECT_FLOAT_EQ(c.rope_linear_scale, 8.0f);
  EXPECT_FLOAT_EQ(c.rope_freq_base_swa, 10000.0f);
  EXPECT_FLOAT_EQ(c.rope_linear_scale_swa, 1.0f);
  EXPECT_FLOAT_EQ(c.attn_softcap, 0.0f);
  EXPECT_FLOAT_EQ(c.final_softcap, 0.0f);

  // Without the pattern key: llama.cpp's default 6 (every layer of a 3-layer model is local).
  ModelSpec d = Spec("gemma3", 3, 4, 1);
  auto fd = Build(d);
  ASSERT_NE(fd, nullptr);
  auto cd = model::LlamaConfig::FromGguf(*fd);
  ASSERT_TRUE(cd.ok());
  EXPECT_EQ(cd->swa_period, 6);
  EXPECT_EQ(cd->sliding_window, 1024);
}

TEST(ModelGeneratorArchs, GraniteHasItsFourMultipliers) {
  ModelSpec s = Spec("granite", 2, 4, 2);
  auto f = Build(s);
  ASSERT_NE(f, nullptr);
  auto m = LoadAndRun(f, s);
  ASSERT_NE(m, nullptr);
  const model::LlamaConfig& c = m->config();
  EXPECT_FLOAT_EQ(c.embedding_scale, 12.0f);
  EXPECT_FLOAT_EQ(c.residual_scale, 0.22f);
  EXPECT_FLOAT_EQ(c.attention_scale, 1.0f / 64);  // 1 / head_dim
  EXPECT_FLOAT_EQ(c.logit_scale, 8.0f);
  EXPECT_TRUE(c.rope_enabled);
  EXPECT_EQ(c.rope_style, model::RopeStyle::kNorm);
  EXPECT_FALSE(c.tied_output);
}

TEST(ModelGeneratorArchs, Smollm3SkipsRopeEveryFourthLayer) {
  ModelSpec s = Spec("smollm3", 4, 4, 1);
  auto f = Build(s);
  ASSERT_NE(f, nullptr);
  auto m = LoadAndRun(f, s);
  ASSERT_NE(m, nullptr);
  const model::LlamaConfig& c = m->config();
  EXPECT_EQ(c.no_rope_period, 4);
  EXPECT_TRUE(c.layer_uses_rope(2));
  EXPECT_FALSE(c.layer_uses_rope(3));
  EXPECT_EQ(c.rope_style, model::RopeStyle::kNorm);
  EXPECT_FLOAT_EQ(c.rope_freq_base, 5e6f);
}

TEST(ModelGeneratorArchs, Phi3HasThePhi4MiniLayout) {
  for (gguf::TensorType t : {gguf::TensorType::kF32, gguf::TensorType::kQ8_0}) {
    ModelSpec s = Spec("phi3", 2, 4, 2);
    s.tied_output = true;  // as Phi-4-mini
    s.weights = WeightTypes::All(t);
    auto f = Build(s);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->FindTensor("blk.0.attn_qkv.weight")->dims, (std::vector<uint64_t>{256, 512}));  // Q 256, K 128, V 128
    EXPECT_EQ(f->FindTensor("blk.0.ffn_up.weight")->dims, (std::vector<uint64_t>{256, 1024}));   // gate | up
    EXPECT_EQ(f->FindTensor("blk.0.attn_q.weight"), nullptr);
    EXPECT_EQ(f->FindTensor("blk.0.ffn_gate.weight"), nullptr);
    EXPECT_EQ(f->FindTensor("rope_factors_long.weight")->dims, (std::vector<uint64_t>{24}));
    EXPECT_EQ(f->FindTensor("rope_factors_short.weight")->type, gguf::TensorType::kF32);
    auto m = LoadAndRun(f, s);
    ASSERT_NE(m, nullptr);
    const model::LlamaConfig& c = m->config();
    EXPECT_TRUE(c.fused_qkv);
    EXPECT_TRUE(c.fused_gate_up);
    EXPECT_EQ(c.head_dim, 64);
    EXPECT_EQ(c.rope_dim, 48);  // partial rotary, 3/4
    EXPECT_EQ(c.rope_style, model::RopeStyle::kNeox);
    EXPECT_TRUE(c.rope_long_short_factors);
    EXPECT_EQ(c.rope_original_context, 4096);
    EXPECT_NEAR(c.rope_attn_factor, 1.1902381f, 1e-6);  // Phi-4-mini's, from 131072 / 4096
    EXPECT_FALSE(c.uses_long_rope_factors(4096));
    EXPECT_TRUE(c.uses_long_rope_factors(4097));
    EXPECT_EQ(c.sliding_window, 0);
  }
}

TEST(ModelGeneratorArchs, RefusesWhatAnArchitectureCannotHave) {
  gguf::GgufWriter w;
  ModelSpec s;
  EXPECT_EQ(UseArchitecture("mamba", &s).code(), StatusCode::kInvalidArgument);
  s.arch = "mamba";
  EXPECT_EQ(BuildModel(s, &w).code(), StatusCode::kInvalidArgument);
  s = Spec("qwen3", 2, 4, 2);
  s.sliding_window = 16;  // llama.cpp's qwen3 has none
  EXPECT_EQ(BuildModel(s, &w).code(), StatusCode::kInvalidArgument);
  s = Spec("phi3", 2, 4, 2);
  s.head_dim = 128;  // phi3's attn_output is [dim, dim]
  EXPECT_EQ(BuildModel(s, &w).code(), StatusCode::kInvalidArgument);
  s = ModelSpec{};
  s.rope_dim = 16;  // llama rotates whole heads
  EXPECT_EQ(BuildModel(s, &w).code(), StatusCode::kInvalidArgument);
  s = Spec("qwen3moe", 2, 4, 2);
  s.experts_used = 9;
  EXPECT_EQ(BuildModel(s, &w).code(), StatusCode::kInvalidArgument);
  s = Spec("qwen3moe", 2, 4, 2);
  s.weights = WeightTypes::All(gguf::TensorType::kQ4_K);  // experts of 128: not whole super-blocks
  Status st = BuildModel(s, &w);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("expert_ffn"), std::string::npos) << st.message();
}

// The architecture's values do not change a llama spec, and the llama file keeps its keys.
TEST(ModelGeneratorArchs, LlamaIsUnchangedByUseArchitecture) {
  ModelSpec a, b;
  ASSERT_TRUE(UseArchitecture("llama", &b).ok());
  a.dim = b.dim = 64, a.layers = b.layers = 2, a.heads = b.heads = 4, a.kv_heads = b.kv_heads = 2, a.ffn = b.ffn = 96;
  gguf::GgufWriter wa, wb;
  ASSERT_TRUE(BuildModel(a, &wa).ok());
  ASSERT_TRUE(BuildModel(b, &wb).ok());
  EXPECT_EQ(*wa.Serialize(), *wb.Serialize());
  auto bytes = *wa.Serialize();
  auto f = gguf::GgufFile::Parse(std::span<const uint8_t>(bytes.data(), bytes.size()), "llama");
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE((*f)->Has("llama.attention.key_length"));
  EXPECT_FALSE((*f)->Has("llama.rope.scaling.type"));
}

}  // namespace
}  // namespace radixserve::modelgen
