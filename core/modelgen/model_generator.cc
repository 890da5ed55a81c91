#include "core/modelgen/model_generator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/modelgen/builtin_vocab.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/weight.h"

namespace radixserve::modelgen {
namespace {

// splitmix64: a small, fast, well-distributed generator; deterministic across platforms.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform() { return (Next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
  // Standard normal by Box-Muller (both outputs used).
  float Normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = Uniform(), u2 = Uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = static_cast<float>(r * std::sin(2.0 * M_PI * u2));
    has_spare_ = true;
    return static_cast<float>(r * std::cos(2.0 * M_PI * u2));
  }

 private:
  uint64_t state_;
  float spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace

std::vector<uint8_t> EncodeTensor(const std::vector<float>& v, gguf::TensorType type) {
  std::vector<uint8_t> out;
  switch (type) {
    case gguf::TensorType::kF32:
      out.resize(v.size() * 4);
      std::memcpy(out.data(), v.data(), out.size());
      break;
    case gguf::TensorType::kF16:
    case gguf::TensorType::kBF16: {
      out.resize(v.size() * 2);
      for (size_t i = 0; i < v.size(); ++i) {
        uint16_t h = type == gguf::TensorType::kF16 ? kernels::Fp32ToFp16(v[i]) : kernels::Fp32ToBf16(v[i]);
        std::memcpy(out.data() + 2 * i, &h, 2);
      }
      break;
    }
    default: {
      // The scalar quantisers: generated files are the same bytes on every machine.
      kernels::WeightType wt;
      if (!kernels::WeightTypeFromGgml(static_cast<uint32_t>(type), &wt)) break;
      const kernels::WeightTypeInfo info = kernels::GetWeightTypeInfo(wt);
      if (v.size() % info.block_elems != 0) break;
      out.resize(v.size() / info.block_elems * info.block_bytes);
      kernels::QuantizeBlocks(wt, v.data(), out.data(), static_cast<int64_t>(v.size()));
      break;
    }
  }
  return out;
}

namespace {

Status AddMatrix(gguf::GgufWriter* w, Rng& rng, const std::string& name, uint32_t cols, uint32_t rows, float stddev,
                 gguf::TensorType type) {
  std::vector<float> v(static_cast<size_t>(cols) * rows);
  for (float& x : v) x = rng.Normal() * stddev;
  return w->AddTensor(name, {cols, rows}, type, EncodeTensor(v, type));
}

Status AddOnes(gguf::GgufWriter* w, const std::string& name, uint32_t n) {
  return w->AddTensor(name, {n}, gguf::TensorType::kF32, EncodeTensor(std::vector<float>(n, 1.0f), gguf::TensorType::kF32));
}

// Copies every tokenizer.* key of `path` into the writer; returns the vocabulary size.
Result<uint32_t> CopyTokenizer(const std::string& path, gguf::GgufWriter* w) {
  RS_ASSIGN_OR_RETURN(auto src, gguf::GgufFile::Open(path));
  RS_ASSIGN_OR_RETURN(auto tokens, src->GetStringArray("tokenizer.ggml.tokens"));
  for (const auto& kv : src->metadata())
    if (kv.key.rfind("tokenizer.", 0) == 0) w->Set(kv.key, kv.value);
  return static_cast<uint32_t>(tokens.size());
}

uint32_t WriteBuiltinTokenizer(gguf::GgufWriter* w) {
  const Vocab& v = BuiltinVocab();
  w->SetString("tokenizer.ggml.model", "llama");
  w->SetStringArray("tokenizer.ggml.tokens", v.tokens);
  w->SetF32Array("tokenizer.ggml.scores", v.scores);
  w->SetI32Array("tokenizer.ggml.token_type", v.types);
  w->SetU32("tokenizer.ggml.unknown_token_id", 0);
  w->SetU32("tokenizer.ggml.bos_token_id", 1);
  w->SetU32("tokenizer.ggml.eos_token_id", 2);
  w->SetBool("tokenizer.ggml.add_bos_token", true);
  w->SetBool("tokenizer.ggml.add_eos_token", false);
  return static_cast<uint32_t>(v.tokens.size());
}

// The presets, with general.file_type as llama.cpp numbers them (llama_ftype).
struct Preset {
  const char* name;
  WeightTypes types;
  uint32_t file_type;
};
const std::vector<Preset>& Presets() {
  using T = gguf::TensorType;
  static const std::vector<Preset> presets = {
      {"f32", WeightTypes::All(T::kF32), 0},           {"f16", WeightTypes::All(T::kF16), 1},
      {"bf16", WeightTypes::All(T::kBF16), 32},        {"q8_0", WeightTypes::All(T::kQ8_0), 7},
      {"q4_0", {T::kQ4_0, T::kQ6_K, T::kQ4_0}, 2},     {"q4_1", {T::kQ4_1, T::kQ6_K, T::kQ4_1}, 3},
      {"q5_0", {T::kQ5_0, T::kQ6_K, T::kQ5_0}, 8},     {"q5_1", {T::kQ5_1, T::kQ6_K, T::kQ5_1}, 9},
      {"iq4_nl", {T::kIQ4_NL, T::kQ6_K, T::kIQ4_NL}, 25},
      {"q2_k", WeightTypes::All(T::kQ2_K), 10},        {"q3_k", WeightTypes::All(T::kQ3_K), 12},
      {"q4_k", WeightTypes::All(T::kQ4_K), 15},        {"q5_k", WeightTypes::All(T::kQ5_K), 17},
      {"q6_k", WeightTypes::All(T::kQ6_K), 18},
      {"q4_k_m", {T::kQ4_K, T::kQ6_K, T::kQ6_K}, 15},  {"q5_k_m", {T::kQ5_K, T::kQ6_K, T::kQ6_K}, 17},
  };
  return presets;
}

uint32_t FileType(const WeightTypes& t) {
  for (const Preset& p : Presets())
    if (p.types.base == t.base && p.types.output == t.output && p.types.more_bits == t.more_bits) return p.file_type;
  return 0;
}

// llama-quantize's choice of the layers whose attn_v and ffn_down get more bits in the _M mixes.
bool MoreBitsLayer(uint32_t layer, uint32_t layers) {
  return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

}  // namespace

Result<ModelSpec> SpecForSize(const std::string& size) {
  ModelSpec s;
  if (size == "tiny") {
    s.dim = 256, s.layers = 4, s.heads = 8, s.kv_heads = 4, s.ffn = 768, s.context = 2048;
  } else if (size == "small") {
    s.dim = 256, s.layers = 4, s.heads = 8, s.kv_heads = 4, s.ffn = 768, s.context = 2048;
  } else if (size == "medium") {
    s.dim = 768, s.layers = 12, s.heads = 12, s.kv_heads = 4, s.ffn = 2048, s.context = 2048;
  } else {
    return Status::InvalidArgument("unknown model size '" + size + "' (expected tiny, small or medium)");
  }
  s.name = "radixserve-" + size;
  return s;
}

Result<WeightTypes> ParseWeightType(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string known;
  for (const Preset& p : Presets()) {
    if (n == p.name) return p.types;
    known += std::string(known.empty() ? "" : ", ") + p.name;
  }
  return Status::InvalidArgument("unsupported weight type '" + name + "' (expected " + known + ")");
}

Status BuildModel(const ModelSpec& spec, gguf::GgufWriter* w) {
  if (spec.dim == 0 || spec.layers == 0 || spec.heads == 0 || spec.kv_heads == 0 || spec.ffn == 0 || spec.context == 0)
    return Status::InvalidArgument("model sizes must all be positive");
  if (spec.dim % spec.heads != 0) return Status::InvalidArgument("dim must be a multiple of heads");
  if (spec.heads % spec.kv_heads != 0) return Status::InvalidArgument("heads must be a multiple of kv_heads");
  uint32_t head_dim = spec.dim / spec.heads;
  if (head_dim % 2 != 0) return Status::InvalidArgument("head dimension must be even (RoPE rotates pairs)");
  const WeightTypes& t = spec.weights;
  for (gguf::TensorType type : {t.base, t.output, t.more_bits}) {
    kernels::WeightType wt;
    if (!kernels::WeightTypeFromGgml(static_cast<uint32_t>(type), &wt))
      return Status::InvalidArgument("unsupported weight type " + gguf::TensorTypeName(type));
    const int32_t block = kernels::GetWeightTypeInfo(wt).block_elems;
    if (spec.dim % block != 0 || spec.ffn % block != 0 || (spec.heads * (spec.dim / spec.heads)) % block != 0)
      return Status::InvalidArgument(gguf::TensorTypeName(type) + " needs dim and ffn to be multiples of " +
                                     std::to_string(block));
  }

  w->SetString("general.architecture", "llama");
  w->SetString("general.name", spec.name);
  w->SetU32("general.file_type", FileType(t));
  w->SetU32("llama.context_length", spec.context);
  w->SetU32("llama.embedding_length", spec.dim);
  w->SetU32("llama.block_count", spec.layers);
  w->SetU32("llama.feed_forward_length", spec.ffn);
  w->SetU32("llama.attention.head_count", spec.heads);
  w->SetU32("llama.attention.head_count_kv", spec.kv_heads);
  w->SetU32("llama.rope.dimension_count", head_dim);
  w->SetF32("llama.rope.freq_base", spec.rope_base);
  w->SetF32("llama.attention.layer_norm_rms_epsilon", spec.rms_eps);

  uint32_t vocab = 0;
  if (!spec.tokenizer_from.empty()) {
    RS_ASSIGN_OR_RETURN(vocab, CopyTokenizer(spec.tokenizer_from, w));
  } else {
    vocab = WriteBuiltinTokenizer(w);
  }
  w->SetU32("llama.vocab_size", vocab);

  Rng rng(spec.seed);
  const uint32_t q_dim = spec.heads * head_dim, kv_dim = spec.kv_heads * head_dim;
  auto inv_sqrt = [](uint32_t fan_in) { return 1.0f / std::sqrt(static_cast<float>(fan_in)); };
  RS_RETURN_IF_ERROR(AddMatrix(w, rng, "token_embd.weight", spec.dim, vocab, 1.0f,
                               spec.tied_output ? t.output : t.base));
  for (uint32_t l = 0; l < spec.layers; ++l) {
    std::string p = "blk." + std::to_string(l) + ".";
    const gguf::TensorType favoured = MoreBitsLayer(l, spec.layers) ? t.more_bits : t.base;
    RS_RETURN_IF_ERROR(AddOnes(w, p + "attn_norm.weight", spec.dim));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "attn_q.weight", spec.dim, q_dim, inv_sqrt(spec.dim), t.base));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "attn_k.weight", spec.dim, kv_dim, inv_sqrt(spec.dim), t.base));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "attn_v.weight", spec.dim, kv_dim, inv_sqrt(spec.dim), favoured));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "attn_output.weight", q_dim, spec.dim, inv_sqrt(q_dim), t.base));
    RS_RETURN_IF_ERROR(AddOnes(w, p + "ffn_norm.weight", spec.dim));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "ffn_gate.weight", spec.dim, spec.ffn, inv_sqrt(spec.dim), t.base));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "ffn_up.weight", spec.dim, spec.ffn, inv_sqrt(spec.dim), t.base));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "ffn_down.weight", spec.ffn, spec.dim, inv_sqrt(spec.ffn), favoured));
  }
  RS_RETURN_IF_ERROR(AddOnes(w, "output_norm.weight", spec.dim));
  if (!spec.tied_output)
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, "output.weight", spec.dim, vocab, inv_sqrt(spec.dim), t.output));
  return Status::Ok();
}

Status GenerateModel(const ModelSpec& spec, const std::string& path) {
  gguf::GgufWriter w;
  RS_RETURN_IF_ERROR(BuildModel(spec, &w));
  return w.WriteFile(path);
}

}  // namespace radixserve::modelgen
