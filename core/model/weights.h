// Weights of a GGUF file as the kernels see them: each tensor's engine type, matrices used in
// place from the mapping, and small vectors (norms, biases) converted to F32. Every error names
// the file and the tensor. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/model/llama_config.h"
#include "core/util/status.h"
#include "kernels/cpu/weight.h"

namespace radixserve::model {

// The engine's type for a tensor's GGUF type; Unsupported names the tensor and its type.
Result<kernels::WeightType> ToWeightType(const gguf::TensorInfo& t);

// Tensor `name` as a [rows][cols] matrix (GGUF dims [cols, rows]), used in place.
Result<kernels::WeightView> GetMatrix(const gguf::GgufFile& f, const std::string& name, int64_t rows, int64_t cols);

// A 2-D tensor with whatever shape it has.
Result<kernels::WeightView> GetAnyMatrix(const gguf::GgufFile& f, const std::string& name);

// A 3-D expert tensor `name` of GGUF dims [cols, rows, experts] as one [experts * rows][cols]
// matrix, used in place: expert e is the slab Rows(e * rows, rows) (each row quantised on its own).
Result<kernels::WeightView> GetExpertMatrices(const gguf::GgufFile& f, const std::string& name, int64_t experts,
                                              int64_t rows, int64_t cols);

// A 2-D tensor, or a 3-D one read as its rows (dims[1] * dims[2] of them), with whatever shape it has.
Result<kernels::WeightView> GetAnyRows(const gguf::GgufFile& f, const std::string& name);

// A vector of n values converted to F32 (it must be F32, F16 or BF16).
Result<std::vector<float>> GetVector(const gguf::GgufFile& f, const std::string& name, int64_t n);

// One transformer block's tensors, as the forward pass reads them (fused tensors split by rows).
struct LayerWeights {
  std::vector<float> attn_norm, ffn_norm;
  std::vector<float> bq, bk, bv;  // empty unless config.attention_bias
  std::vector<float> q_norm, k_norm;  // [head_dim], one RMSNorm for every head; empty unless config.qk_norm
  std::vector<float> post_attn_norm, post_ffn_norm;  // [dim]; empty unless config.post_norms (gemma2/3)
  kernels::WeightView wq, wk, wv, wo, w_gate, w_up, w_down;  // w_gate/w_up/w_down: empty with experts
  // config.moe(): the router ffn_gate_inp [num_experts][dim] and the experts' matrices, each
  // [num_experts * rows][cols] (expert e: Rows(e * rows, rows)); gate/up rows = expert_ffn_dim.
  kernels::WeightView router, exp_gate, exp_up, exp_down;
};

// Every tensor of a llama-family file by its role, for any backend to compute on or upload.
struct LlamaWeights {
  kernels::WeightView token_embd, output;  // output is token_embd when the file ties them
  std::vector<float> output_norm;
  std::vector<LayerWeights> layers;
  std::vector<float> rope_inv_freq;  // [rope_dim / 2]: base^(-2i/rope_dim), rope_freqs.weight's divisors applied
  std::vector<float> rope_inv_freq_swa;  // the same with rope_freq_base_swa, for the local layers
  // LongRoPE (config.rope_long_short_factors): rope_inv_freq is divided by rope_factors_short and
  // this one by rope_factors_long; the backend picks by its served context
  // (LlamaConfig::uses_long_rope_factors). Empty otherwise.
  std::vector<float> rope_inv_freq_long;
};

// Finds and checks every tensor the config calls for. A tensor the forward pass would not read
// means a layout this engine does not know: it is refused by name, never run wrongly.
Result<LlamaWeights> LoadLlamaWeights(const gguf::GgufFile& f, const LlamaConfig& c);

}  // namespace radixserve::model
