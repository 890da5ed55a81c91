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
    case gguf::TensorType::kQ8_0:
      // The scalar reference quantizer: generated files are the same bytes on every machine.
      out.resize(v.size() / 32 * sizeof(kernels::BlockQ8_0));
      kernels::ref::QuantizeRowQ8_0(v.data(), reinterpret_cast<kernels::BlockQ8_0*>(out.data()),
                                    static_cast<int64_t>(v.size()));
      break;
    default:
      break;
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

// general.file_type as llama.cpp numbers it (ALL_F32 0, MOSTLY_F16 1, MOSTLY_Q8_0 7, MOSTLY_BF16 32).
uint32_t FileType(gguf::TensorType t) {
  switch (t) {
    case gguf::TensorType::kF16: return 1;
    case gguf::TensorType::kQ8_0: return 7;
    case gguf::TensorType::kBF16: return 32;
    default: return 0;
  }
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

Result<gguf::TensorType> ParseWeightType(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n == "f32") return gguf::TensorType::kF32;
  if (n == "f16") return gguf::TensorType::kF16;
  if (n == "bf16") return gguf::TensorType::kBF16;
  if (n == "q8_0") return gguf::TensorType::kQ8_0;
  return Status::InvalidArgument("unsupported weight type '" + name + "' (expected f32, f16, bf16 or q8_0)");
}

Status BuildModel(const ModelSpec& spec, gguf::GgufWriter* w) {
  if (spec.dim == 0 || spec.layers == 0 || spec.heads == 0 || spec.kv_heads == 0 || spec.ffn == 0 || spec.context == 0)
    return Status::InvalidArgument("model sizes must all be positive");
  if (spec.dim % spec.heads != 0) return Status::InvalidArgument("dim must be a multiple of heads");
  if (spec.heads % spec.kv_heads != 0) return Status::InvalidArgument("heads must be a multiple of kv_heads");
  uint32_t head_dim = spec.dim / spec.heads;
  if (head_dim % 2 != 0) return Status::InvalidArgument("head dimension must be even (RoPE rotates pairs)");
  auto t = spec.weight_type;
  if (t != gguf::TensorType::kF32 && t != gguf::TensorType::kF16 && t != gguf::TensorType::kBF16 &&
      t != gguf::TensorType::kQ8_0)
    return Status::InvalidArgument("unsupported weight type " + gguf::TensorTypeName(t));
  if (t == gguf::TensorType::kQ8_0 && (spec.dim % 32 != 0 || spec.ffn % 32 != 0))
    return Status::InvalidArgument("Q8_0 needs dim and ffn to be multiples of 32");

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
  RS_RETURN_IF_ERROR(AddMatrix(w, rng, "token_embd.weight", spec.dim, vocab, 1.0f, t));
  for (uint32_t l = 0; l < spec.layers; ++l) {
    std::string p = "blk." + std::to_string(l) + ".";
    RS_RETURN_IF_ERROR(AddOnes(w, p + "attn_norm.weight", spec.dim));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "attn_q.weight", spec.dim, q_dim, inv_sqrt(spec.dim), t));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "attn_k.weight", spec.dim, kv_dim, inv_sqrt(spec.dim), t));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "attn_v.weight", spec.dim, kv_dim, inv_sqrt(spec.dim), t));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "attn_output.weight", q_dim, spec.dim, inv_sqrt(q_dim), t));
    RS_RETURN_IF_ERROR(AddOnes(w, p + "ffn_norm.weight", spec.dim));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "ffn_gate.weight", spec.dim, spec.ffn, inv_sqrt(spec.dim), t));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "ffn_up.weight", spec.dim, spec.ffn, inv_sqrt(spec.dim), t));
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, p + "ffn_down.weight", spec.ffn, spec.dim, inv_sqrt(spec.ffn), t));
  }
  RS_RETURN_IF_ERROR(AddOnes(w, "output_norm.weight", spec.dim));
  if (!spec.tied_output)
    RS_RETURN_IF_ERROR(AddMatrix(w, rng, "output.weight", spec.dim, vocab, inv_sqrt(spec.dim), t));
  return Status::Ok();
}

Status GenerateModel(const ModelSpec& spec, const std::string& path) {
  gguf::GgufWriter w;
  RS_RETURN_IF_ERROR(BuildModel(spec, &w));
  return w.WriteFile(path);
}

}  // namespace radixserve::modelgen
