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

const std::vector<std::string>& Architectures() {
  static const std::vector<std::string> archs = {"llama",   "qwen3",   "qwen3moe", "gemma2",
                                                 "gemma3",  "granite", "smollm3",  "phi3"};
  return archs;
}

Status UseArchitecture(const std::string& arch, ModelSpec* s) {
  if (std::find(Architectures().begin(), Architectures().end(), arch) == Architectures().end()) {
    std::string known;
    for (const std::string& a : Architectures()) known += (known.empty() ? "" : ", ") + a;
    return Status::InvalidArgument("unknown architecture '" + arch + "' (expected " + known + ")");
  }
  s->arch = arch;
  if (arch == "qwen3" || arch == "qwen3moe") {
    s->rope_base = 1000000.0f, s->rms_eps = 1e-6f;
  } else if (arch == "gemma2") {
    s->tied_output = true, s->rms_eps = 1e-6f;
  } else if (arch == "gemma3") {
    s->tied_output = true, s->rms_eps = 1e-6f;
    s->rope_base = 1000000.0f, s->rope_scale_linear = 8.0f, s->rope_base_swa = 10000.0f;
  } else if (arch == "smollm3") {
    s->rope_base = 5000000.0f, s->rms_eps = 1e-6f;
  } else if (arch == "phi3") {
    s->context = 131072, s->rope_original_context = 4096;
  }
  return Status::Ok();
}

namespace {

// The sizes and switches of one spec's architecture, resolved and checked.
struct Layout {
  std::string p;  // metadata prefix: "<arch>."
  bool llama = false, qwen3 = false, moe = false, gemma2 = false, gemma3 = false, granite = false, phi3 = false;
  bool qk_norm = false, post_norms = false, write_head_dim = false;
  uint32_t head_dim = 0, rope_dim = 0, q_dim = 0, kv_dim = 0, expert_ffn = 0, sliding_window = 0;
  float attention_scale = 0.0f, rope_attn_factor = 1.0f;
};

Result<Layout> Resolve(const ModelSpec& spec) {
  if (std::find(Architectures().begin(), Architectures().end(), spec.arch) == Architectures().end()) {
    ModelSpec probe;
    return UseArchitecture(spec.arch, &probe);  // its message lists the known ones
  }
  Layout L;
  const std::string& a = spec.arch;
  L.p = a + ".";
  L.llama = a == "llama", L.moe = a == "qwen3moe", L.qwen3 = a == "qwen3" || L.moe;
  L.gemma2 = a == "gemma2", L.gemma3 = a == "gemma3", L.granite = a == "granite", L.phi3 = a == "phi3";
  L.qk_norm = L.qwen3 || L.gemma3;
  L.post_norms = L.gemma2 || L.gemma3;
  if (spec.dim == 0 || spec.layers == 0 || spec.heads == 0 || spec.kv_heads == 0 || spec.ffn == 0 || spec.context == 0)
    return Status::InvalidArgument("model sizes must all be positive");
  if (spec.head_dim == 0 && spec.dim % spec.heads != 0) return Status::InvalidArgument("dim must be a multiple of heads");
  if (spec.heads % spec.kv_heads != 0) return Status::InvalidArgument("heads must be a multiple of kv_heads");
  L.head_dim = spec.head_dim ? spec.head_dim : spec.dim / spec.heads;
  if ((L.llama || L.phi3) && L.head_dim * spec.heads != spec.dim)
    return Status::InvalidArgument(a + " needs head_dim = dim / heads");
  if (L.head_dim % 2 != 0) return Status::InvalidArgument("head dimension must be even (RoPE rotates pairs)");
  L.write_head_dim = L.qwen3 || L.gemma2 || L.gemma3 || L.head_dim * spec.heads != spec.dim;
  L.rope_dim = spec.rope_dim ? spec.rope_dim : (L.phi3 ? L.head_dim * 3 / 4 / 2 * 2 : L.head_dim);
  if (L.llama && L.rope_dim != L.head_dim) return Status::InvalidArgument("llama rotates the whole head (rope_dim = head_dim)");
  if (L.rope_dim == 0 || L.rope_dim % 2 != 0 || L.rope_dim > L.head_dim)
    return Status::InvalidArgument("rope_dim must be even, positive and at most the head dimension " +
                                   std::to_string(L.head_dim));
  L.q_dim = spec.heads * L.head_dim, L.kv_dim = spec.kv_heads * L.head_dim;
  if (L.moe) {
    L.expert_ffn = spec.expert_ffn ? spec.expert_ffn : spec.ffn / 4;
    if (spec.experts == 0 || spec.experts_used == 0 || spec.experts_used > spec.experts || L.expert_ffn == 0)
      return Status::InvalidArgument("qwen3moe needs 1 <= experts_used <= experts and a positive expert_ffn");
  }
  if (L.gemma2 && !spec.tied_output)
    return Status::InvalidArgument("gemma2 ties its output to the embeddings (llama.cpp loads no output.weight for it)");
  L.sliding_window = spec.sliding_window;
  if (L.gemma2 || L.gemma3) {
    if (L.sliding_window == 0) L.sliding_window = L.gemma2 ? 4096 : 1024;
  } else if (spec.sliding_window || spec.swa_pattern || spec.rope_base_swa > 0.0f) {
    return Status::InvalidArgument("a sliding window is written for gemma2 and gemma3 only, not " + a);
  }
  if (L.llama && spec.rope_scale_linear > 0.0f) return Status::InvalidArgument("llama files are written without RoPE scaling");
  if (L.gemma2 && !(spec.attn_softcap > 0.0f && spec.final_softcap > 0.0f))
    return Status::InvalidArgument("gemma2's soft-caps must be positive");
  if (L.granite) {
    if (!(spec.embedding_scale > 0.0f && spec.residual_scale > 0.0f && spec.logit_scale > 0.0f &&
          spec.attention_scale >= 0.0f))
      return Status::InvalidArgument("granite's multipliers must be positive");
    L.attention_scale = spec.attention_scale > 0.0f ? spec.attention_scale : 1.0f / static_cast<float>(L.head_dim);
  }
  if (L.phi3) {
    if (spec.rope_original_context == 0) return Status::InvalidArgument("phi3 needs rope_original_context > 0");
    L.rope_attn_factor = spec.rope_attn_factor;
    if (!(L.rope_attn_factor > 0.0f)) {  // as convert_hf_to_gguf.py's Phi3 LongRoPE
      const double scale = static_cast<double>(spec.context) / spec.rope_original_context;
      L.rope_attn_factor = scale <= 1.0 ? 1.0f
                                        : static_cast<float>(std::sqrt(1.0 + std::log(scale) /
                                                                           std::log(static_cast<double>(spec.rope_original_context))));
    }
  }
  const WeightTypes& t = spec.weights;
  for (gguf::TensorType type : {t.base, t.output, t.more_bits}) {
    kernels::WeightType wt;
    if (!kernels::WeightTypeFromGgml(static_cast<uint32_t>(type), &wt))
      return Status::InvalidArgument("unsupported weight type " + gguf::TensorTypeName(type));
    const int32_t block = kernels::GetWeightTypeInfo(wt).block_elems;
    if (spec.dim % block != 0 || spec.ffn % block != 0 || L.q_dim % block != 0 || (L.moe && L.expert_ffn % block != 0))
      return Status::InvalidArgument(gguf::TensorTypeName(type) + " needs dim" + (L.moe ? ", ffn and expert_ffn" : " and ffn") +
                                     " to be multiples of " + std::to_string(block));
  }
  return L;
}

// A 3-D expert tensor [cols, rows, experts]: each expert's slab N(0, stddev^2).
Status AddExperts(gguf::GgufWriter* w, Rng& rng, const std::string& name, uint32_t cols, uint32_t rows,
                  uint32_t experts, float stddev, gguf::TensorType type) {
  std::vector<float> v(static_cast<size_t>(cols) * rows * experts);
  for (float& x : v) x = rng.Normal() * stddev;
  return w->AddTensor(name, {cols, rows, experts}, type, EncodeTensor(v, type));
}

Status AddF32(gguf::GgufWriter* w, const std::string& name, const std::vector<float>& v) {
  return w->AddTensor(name, {static_cast<uint64_t>(v.size())}, gguf::TensorType::kF32,
                      EncodeTensor(v, gguf::TensorType::kF32));
}

}  // namespace

Status BuildModel(const ModelSpec& spec, gguf::GgufWriter* w) {
  RS_ASSIGN_OR_RETURN(const Layout L, Resolve(spec));
  const WeightTypes& t = spec.weights;
  const std::string& p = L.p;
  const uint32_t head_dim = L.head_dim;

  w->SetString("general.architecture", spec.arch);
  w->SetString("general.name", spec.name);
  w->SetU32("general.file_type", FileType(t));
  w->SetU32(p + "context_length", spec.context);
  w->SetU32(p + "embedding_length", spec.dim);
  w->SetU32(p + "block_count", spec.layers);
  w->SetU32(p + "feed_forward_length", spec.ffn);
  w->SetU32(p + "attention.head_count", spec.heads);
  w->SetU32(p + "attention.head_count_kv", spec.kv_heads);
  w->SetU32(p + "rope.dimension_count", L.rope_dim);
  w->SetF32(p + "rope.freq_base", spec.rope_base);
  w->SetF32(p + "attention.layer_norm_rms_epsilon", spec.rms_eps);
  if (L.write_head_dim) {
    w->SetU32(p + "attention.key_length", head_dim);
    w->SetU32(p + "attention.value_length", head_dim);
  }
  if (spec.rope_scale_linear > 0.0f) {
    w->SetString(p + "rope.scaling.type", "linear");
    w->SetF32(p + "rope.scaling.factor", spec.rope_scale_linear);
  }
  if (L.moe) {
    w->SetU32(p + "expert_count", spec.experts);
    w->SetU32(p + "expert_used_count", spec.experts_used);
    w->SetU32(p + "expert_feed_forward_length", L.expert_ffn);
  }
  if (L.gemma2 || L.gemma3) {
    if (spec.rope_base_swa > 0.0f) w->SetF32(p + "rope.freq_base_swa", spec.rope_base_swa);
    w->SetU32(p + "attention.sliding_window", L.sliding_window);
    if (spec.swa_pattern > 0) w->SetU32(p + "attention.sliding_window_pattern", spec.swa_pattern);
  }
  if (L.gemma2) {
    w->SetF32(p + "attn_logit_softcapping", spec.attn_softcap);
    w->SetF32(p + "final_logit_softcapping", spec.final_softcap);
  }
  if (L.granite) {
    w->SetF32(p + "attention.scale", L.attention_scale);
    w->SetF32(p + "embedding_scale", spec.embedding_scale);
    w->SetF32(p + "residual_scale", spec.residual_scale);
    w->SetF32(p + "logit_scale", spec.logit_scale);
  }
  if (L.phi3) {
    w->SetU32(p + "rope.scaling.original_context_length", spec.rope_original_context);
    w->SetF32(p + "rope.scaling.attn_factor", L.rope_attn_factor);
  }

  uint32_t vocab = 0;
  if (!spec.tokenizer_from.empty()) {
    RS_ASSIGN_OR_RETURN(vocab, CopyTokenizer(spec.tokenizer_from, w));
  } else {
    vocab = WriteBuiltinTokenizer(w);
  }
  w->SetU32(p + "vocab_size", vocab);

  Rng rng(spec.seed);
  const uint32_t q_dim = L.q_dim, kv_dim = L.kv_dim;
  auto inv_sqrt = [](uint32_t fan_in) { return 1.0f / std::sqrt(static_cast<float>(fan_in)); };
  // Embeddings: N(0, 1) (llama, also tied); a tied model of another architecture N(0, 1/dim), so
  // that its logits have std ~1; granite's N(0, 1/embedding_scale^2) so that its input has rms 1.
  // A tied gemma: N(0, 1/dim^2) and output_norm sqrt(dim) instead (the one norm that is not 1.0):
  // its x sqrt(dim) input then has rms 1/sqrt(dim), not 1, so the token just fed does not stand
  // out of the logits (with an input as large as the layers' outputs, a random tied model only
  // repeats its last token), and the logits still have std ~1.
  const bool tied_gemma = (L.gemma2 || L.gemma3) && spec.tied_output;
  float embd_std = 1.0f;
  if (tied_gemma) embd_std = 1.0f / static_cast<float>(spec.dim);
  else if (!L.llama && spec.tied_output) embd_std = inv_sqrt(spec.dim);
  else if (L.gemma3) embd_std = inv_sqrt(spec.dim);  // x sqrt(dim) at the input: rms 1
  else if (L.granite) embd_std = 1.0f / spec.embedding_scale;
  // granite's attention scale replaces 1/sqrt(head_dim): q and k larger keep the scores O(1).
  const float qk_mult = L.granite ? 1.0f / std::sqrt(L.attention_scale * std::sqrt(static_cast<float>(head_dim))) : 1.0f;
  RS_RETURN_IF_ERROR(AddMatrix(w, rng, "token_embd.weight", spec.dim, vocab, embd_std,
                               spec.tied_output ? t.output : t.base));
  if (L.phi3) {  // LongRoPE divisors, one per rotated pair
    const uint32_t n = L.rope_dim / 2;
    std::vector<float> lng(n), sht(n);
    for (uint32_t i = 0; i < n; ++i) {
      const double x = n > 1 ? static_cast<double>(i) / (n - 1) : 0.0;
      lng[i] = static_cast<float>(1.0 + 39.0 * x * x * x);
      sht[i] = static_cast<float>(1.0 + 0.5 * x * x);
    }
    RS_RETURN_IF_ERROR(AddF32(w, "rope_factors_long.weight", lng));
    RS_RETURN_IF_ERROR(AddF32(w, "rope_factors_short.weight", sht));
  }
  for (uint32_t l = 0; l < spec.layers; ++l) {
    std::string b = "blk." + std::to_string(l) + ".";
    const gguf::TensorType favoured = MoreBitsLayer(l, spec.layers) ? t.more_bits : t.base;
    RS_RETURN_IF_ERROR(AddOnes(w, b + "attn_norm.weight", spec.dim));
    if (L.phi3) {  // rows [Q; K; V]
      RS_RETURN_IF_ERROR(AddMatrix(w, rng, b + "attn_qkv.weight", spec.dim, q_dim + 2 * kv_dim, inv_sqrt(spec.dim), t.base));
    } else {
      RS_RETURN_IF_ERROR(AddMatrix(w, rng, b + "attn_q.weight", spec.dim, q_dim, qk_mult * inv_sqrt(spec.dim), t.base));
      RS_RETURN_IF_ERROR(AddMatrix(w, rng, b + "attn_k.weight", spec.dim, kv_dim, qk_mult * inv_sqrt(spec.dim), t.base));
      RS_RETURN_IF_ERROR(AddMatrix(w, rng, b + "attn_v.weight", spec.dim, kv_dim, inv_sqrt(spec.dim), favoured));
    }
    if (L.qk_norm) {
      RS_RETURN_IF_ERROR(AddOnes(w, b + "attn_q_norm.weight", head_dim));
      RS_RETURN_IF_ERROR(AddOnes(w, b + "attn_k_norm.weight", head_dim));
    }
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, b + "attn_output.weight", q_dim, spec.dim, inv_sqrt(q_dim), t.base));
    if (L.post_norms) RS_RETURN_IF_ERROR(AddOnes(w, b + "post_attention_norm.weight", spec.dim));
    RS_RETURN_IF_ERROR(AddOnes(w, b + "ffn_norm.weight", spec.dim));
    if (L.moe) {  // the router stays F32, as llama-quantize keeps it
      const uint32_t E = spec.experts, fe = L.expert_ffn;
      RS_RETURN_IF_ERROR(AddMatrix(w, rng, b + "ffn_gate_inp.weight", spec.dim, E, inv_sqrt(spec.dim), gguf::TensorType::kF32));
      RS_RETURN_IF_ERROR(AddExperts(w, rng, b + "ffn_gate_exps.weight", spec.dim, fe, E, inv_sqrt(spec.dim), t.base));
      RS_RETURN_IF_ERROR(AddExperts(w, rng, b + "ffn_up_exps.weight", spec.dim, fe, E, inv_sqrt(spec.dim), t.base));
      RS_RETURN_IF_ERROR(AddExperts(w, rng, b + "ffn_down_exps.weight", fe, spec.dim, E, inv_sqrt(fe), favoured));
    } else {
      if (L.phi3) {  // rows [gate; up]
        RS_RETURN_IF_ERROR(AddMatrix(w, rng, b + "ffn_up.weight", spec.dim, 2 * spec.ffn, inv_sqrt(spec.dim), t.base));
      } else {
        RS_RETURN_IF_ERROR(AddMatrix(w, rng, b + "ffn_gate.weight", spec.dim, spec.ffn, inv_sqrt(spec.dim), t.base));
        RS_RETURN_IF_ERROR(AddMatrix(w, rng, b + "ffn_up.weight", spec.dim, spec.ffn, inv_sqrt(spec.dim), t.base));
      }
      RS_RETURN_IF_ERROR(AddMatrix(w, rng, b + "ffn_down.weight", spec.ffn, spec.dim, inv_sqrt(spec.ffn), favoured));
    }
    if (L.post_norms) RS_RETURN_IF_ERROR(AddOnes(w, b + "post_ffw_norm.weight", spec.dim));
  }
  if (tied_gemma) {
    RS_RETURN_IF_ERROR(AddF32(w, "output_norm.weight", std::vector<float>(spec.dim, std::sqrt(static_cast<float>(spec.dim)))));
  } else {
    RS_RETURN_IF_ERROR(AddOnes(w, "output_norm.weight", spec.dim));
  }
  // granite divides its logits by logit_scale: a matrix that much larger keeps them O(1).
  const float out_mult = L.granite ? spec.logit_scale : 1.0f;
  if (!spec.tied_output)
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, "output.weight", spec.dim, vocab, out_mult * inv_sqrt(spec.dim), t.output));
  return Status::Ok();
}

Status GenerateModel(const ModelSpec& spec, const std::string& path) {
  gguf::GgufWriter w;
  RS_RETURN_IF_ERROR(BuildModel(spec, &w));
  return w.WriteFile(path);
}

}  // namespace radixserve::modelgen
