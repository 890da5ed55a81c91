#include "core/model/weights.h"

#include <cmath>
#include <set>

#include "kernels/cpu/matmul.h"

namespace radixserve::model {

using kernels::WeightType;
using kernels::WeightView;

// The engine's type for a tensor's GGUF type; Unsupported names the tensor and its type.
Result<WeightType> ToWeightType(const gguf::TensorInfo& t) {
  WeightType w;
  if (kernels::WeightTypeFromGgml(static_cast<uint32_t>(t.type), &w)) return w;
  std::string known;
  for (WeightType k : kernels::kAllWeightTypes) known += std::string(known.empty() ? "" : ", ") + GetWeightTypeInfo(k).name;
  return Status::Unsupported("tensor " + t.name + " has type " + gguf::TensorTypeName(t.type) +
                             ", which is not supported (" + known + ")");
}

namespace {

std::string ShapeString(const std::vector<uint64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

Result<const gguf::TensorInfo*> FindWithShape(const gguf::GgufFile& f, const std::string& name,
                                              std::vector<uint64_t> dims) {
  const gguf::TensorInfo* t = f.FindTensor(name);
  if (t == nullptr) return Status::NotFound(f.name() + ": tensor " + name + " is missing");
  if (t->dims != dims)
    return Status::InvalidArgument(f.name() + ": tensor " + name + " has shape " + ShapeString(t->dims) +
                                   ", expected " + ShapeString(dims));
  return t;
}

}  // namespace

namespace {

// Tensor `name`, found with GGUF shape `shape` (ne0 first), read as `rows` rows of `cols`: its
// type's block must divide a row, and its bytes must be exactly those rows.
Result<WeightView> RowsOf(const gguf::GgufFile& f, const std::string& name, std::vector<uint64_t> shape, int64_t rows,
                          int64_t cols) {
  RS_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, FindWithShape(f, name, std::move(shape)));
  RS_ASSIGN_OR_RETURN(WeightType type, ToWeightType(*t));
  const kernels::WeightTypeInfo info = kernels::GetWeightTypeInfo(type);
  if (cols % info.block_elems != 0)
    return Status::InvalidArgument(f.name() + ": " + info.name + " tensor " + name + " has a row length of " +
                                   std::to_string(cols) + ", not a multiple of its block size " +
                                   std::to_string(info.block_elems));
  WeightView w{type, f.TensorData(*t), rows, cols};
  if (static_cast<uint64_t>(w.row_bytes() * rows) != t->num_bytes())
    return Status::Corrupt(f.name() + ": tensor " + name + " byte size does not match its shape");
  return w;
}

}  // namespace

Result<WeightView> GetMatrix(const gguf::GgufFile& f, const std::string& name, int64_t rows, int64_t cols) {
  return RowsOf(f, name, {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)}, rows, cols);
}

Result<WeightView> GetExpertMatrices(const gguf::GgufFile& f, const std::string& name, int64_t experts,
                                     int64_t rows, int64_t cols) {
  return RowsOf(f, name,
                {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows), static_cast<uint64_t>(experts)},
                experts * rows, cols);
}

Result<WeightView> GetAnyRows(const gguf::GgufFile& f, const std::string& name) {
  const gguf::TensorInfo* t = f.FindTensor(name);
  if (t == nullptr) return Status::NotFound(f.name() + ": tensor " + name + " is missing");
  if (t->dims.size() == 3)
    return GetExpertMatrices(f, name, static_cast<int64_t>(t->dims[2]), static_cast<int64_t>(t->dims[1]),
                             static_cast<int64_t>(t->dims[0]));
  return GetAnyMatrix(f, name);
}

Result<std::vector<float>> GetVector(const gguf::GgufFile& f, const std::string& name, int64_t n) {
  RS_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, FindWithShape(f, name, {static_cast<uint64_t>(n)}));
  RS_ASSIGN_OR_RETURN(WeightType type, ToWeightType(*t));
  if (!kernels::IsFloatWeight(type))
    return Status::Unsupported("tensor " + name + " is a " + kernels::GetWeightTypeInfo(type).name +
                               " vector; norm weights and biases must be F32, F16 or BF16");
  WeightView w{type, f.TensorData(*t), 1, n};
  std::vector<float> out(n);
  kernels::DequantizeRows(w, 0, 1, out.data());
  return out;
}


Result<WeightView> GetAnyMatrix(const gguf::GgufFile& f, const std::string& name) {
  const gguf::TensorInfo* t = f.FindTensor(name);
  if (t == nullptr) return Status::NotFound(f.name() + ": tensor " + name + " is missing");
  if (t->dims.size() != 2) return Status::InvalidArgument(f.name() + ": tensor " + name + " is not a matrix");
  return GetMatrix(f, name, static_cast<int64_t>(t->dims[1]), static_cast<int64_t>(t->dims[0]));
}

Result<LlamaWeights> LoadLlamaWeights(const gguf::GgufFile& f, const LlamaConfig& c) {
  LlamaWeights w;
  std::set<std::string> used;
  auto matrix = [&](const std::string& name, int64_t rows, int64_t cols) {
    used.insert(name);
    return GetMatrix(f, name, rows, cols);
  };
  auto vec = [&](const std::string& name, int64_t n) {
    used.insert(name);
    return GetVector(f, name, n);
  };
  RS_ASSIGN_OR_RETURN(w.token_embd, matrix("token_embd.weight", c.vocab_size, c.dim));
  if (c.tied_output) {
    w.output = w.token_embd;
  } else {
    RS_ASSIGN_OR_RETURN(w.output, matrix("output.weight", c.vocab_size, c.dim));
  }
  RS_ASSIGN_OR_RETURN(w.output_norm, vec("output_norm.weight", c.dim));
  std::vector<float> rope_freqs;
  if (c.rope_freq_factors) {
    RS_ASSIGN_OR_RETURN(rope_freqs, vec("rope_freqs.weight", c.rope_dim / 2));
  }
  std::vector<float> rope_long;
  if (c.rope_long_short_factors) {  // LongRoPE: the short set in rope_inv_freq, the long one aside
    RS_ASSIGN_OR_RETURN(rope_freqs, vec("rope_factors_short.weight", c.rope_dim / 2));
    RS_ASSIGN_OR_RETURN(rope_long, vec("rope_factors_long.weight", c.rope_dim / 2));
    for (const std::vector<float>* factors : {&rope_freqs, &rope_long})
      for (float x : *factors)
        if (!(x > 0.0f) || !std::isfinite(x))
          return Status::InvalidArgument(f.name() + ": tensor " +
                                         (factors == &rope_long ? "rope_factors_long.weight" : "rope_factors_short.weight") +
                                         " holds " + std::to_string(x) + "; RoPE frequency divisors must be positive");
  }
  w.layers.resize(c.num_layers);
  for (int l = 0; l < c.num_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& L = w.layers[l];
    RS_ASSIGN_OR_RETURN(L.attn_norm, vec(p + "attn_norm.weight", c.dim));
    RS_ASSIGN_OR_RETURN(L.ffn_norm, vec(p + "ffn_norm.weight", c.dim));
    if (c.fused_qkv) {
      RS_ASSIGN_OR_RETURN(WeightView qkv, matrix(p + "attn_qkv.weight", c.q_dim() + 2 * c.kv_dim(), c.dim));
      L.wq = qkv.Rows(0, c.q_dim());
      L.wk = qkv.Rows(c.q_dim(), c.kv_dim());
      L.wv = qkv.Rows(c.q_dim() + c.kv_dim(), c.kv_dim());
    } else {
      RS_ASSIGN_OR_RETURN(L.wq, matrix(p + "attn_q.weight", c.q_dim(), c.dim));
      RS_ASSIGN_OR_RETURN(L.wk, matrix(p + "attn_k.weight", c.kv_dim(), c.dim));
      RS_ASSIGN_OR_RETURN(L.wv, matrix(p + "attn_v.weight", c.kv_dim(), c.dim));
    }
    if (c.attention_bias) {
      RS_ASSIGN_OR_RETURN(L.bq, vec(p + "attn_q.bias", c.q_dim()));
      RS_ASSIGN_OR_RETURN(L.bk, vec(p + "attn_k.bias", c.kv_dim()));
      RS_ASSIGN_OR_RETURN(L.bv, vec(p + "attn_v.bias", c.kv_dim()));
    }
    if (c.qk_norm) {
      RS_ASSIGN_OR_RETURN(L.q_norm, vec(p + "attn_q_norm.weight", c.head_dim));
      RS_ASSIGN_OR_RETURN(L.k_norm, vec(p + "attn_k_norm.weight", c.head_dim));
    }
    RS_ASSIGN_OR_RETURN(L.wo, matrix(p + "attn_output.weight", c.dim, c.q_dim()));
    if (c.moe()) {
      const int64_t E = c.num_experts, fe = c.expert_ffn_dim;
      used.insert(p + "ffn_gate_inp.weight");
      RS_ASSIGN_OR_RETURN(L.router, GetMatrix(f, p + "ffn_gate_inp.weight", E, c.dim));
      for (const char* n : {"ffn_gate_exps.weight", "ffn_up_exps.weight", "ffn_down_exps.weight"}) used.insert(p + n);
      RS_ASSIGN_OR_RETURN(L.exp_gate, GetExpertMatrices(f, p + "ffn_gate_exps.weight", E, fe, c.dim));
      RS_ASSIGN_OR_RETURN(L.exp_up, GetExpertMatrices(f, p + "ffn_up_exps.weight", E, fe, c.dim));
      RS_ASSIGN_OR_RETURN(L.exp_down, GetExpertMatrices(f, p + "ffn_down_exps.weight", E, c.dim, fe));
    } else if (c.fused_gate_up) {
      RS_ASSIGN_OR_RETURN(WeightView gate_up, matrix(p + "ffn_up.weight", 2 * int64_t{c.ffn_dim}, c.dim));
      L.w_gate = gate_up.Rows(0, c.ffn_dim);
      L.w_up = gate_up.Rows(c.ffn_dim, c.ffn_dim);
    } else {
      RS_ASSIGN_OR_RETURN(L.w_gate, matrix(p + "ffn_gate.weight", c.ffn_dim, c.dim));
      RS_ASSIGN_OR_RETURN(L.w_up, matrix(p + "ffn_up.weight", c.ffn_dim, c.dim));
    }
    if (!c.moe()) {
      RS_ASSIGN_OR_RETURN(L.w_down, matrix(p + "ffn_down.weight", c.dim, c.ffn_dim));
    }
    if (c.post_norms) {
      RS_ASSIGN_OR_RETURN(L.post_attn_norm, vec(p + "post_attention_norm.weight", c.dim));
      RS_ASSIGN_OR_RETURN(L.post_ffn_norm, vec(p + "post_ffw_norm.weight", c.dim));
    }
  }
  // A tensor the forward pass does not read means a layout it does not know: refuse, never run wrongly.
  for (const gguf::TensorInfo& t : f.tensors())
    if (!used.count(t.name))
      return Status::Unsupported(f.name() + ": tensor " + t.name + " is not part of the " + c.architecture +
                                 " layout this engine runs");
  auto inv_freq = [&](float base, const std::vector<float>& divisors) {
    std::vector<float> f(c.rope_dim / 2);
    for (int i = 0; i < c.rope_dim / 2; ++i) {
      const double inv = std::pow(static_cast<double>(base), -2.0 * i / c.rope_dim);
      f[i] = static_cast<float>(divisors.empty() ? inv : inv / divisors[i]);
    }
    return f;
  };
  w.rope_inv_freq = inv_freq(c.rope_freq_base, rope_freqs);
  w.rope_inv_freq_swa = inv_freq(c.rope_freq_base_swa, rope_freqs);
  if (c.rope_long_short_factors) w.rope_inv_freq_long = inv_freq(c.rope_freq_base, rope_long);
  return w;
}

}  // namespace radixserve::model
