// Generates GGUF models with deterministic weights, in every architecture the engine runs:
// llama, qwen3, qwen3moe, gemma2, gemma3, granite, smollm3 and phi3 (the Phi-4-mini layout),
// with the metadata keys, tensor names and shapes llama.cpp loads (../shared/models/ref2/README.md,
// sections 1 and 2).
//
// Used for the built-in default model (the product never needs an external
// model to start), for speed work at fixed sizes, and by tests. Weights follow
// ../shared/models/README.md: matrices N(0, 1/fan_in), embeddings N(0, 1),
// norms 1.0. The same options and seed always give the same bytes.
//
// The other architectures keep those rules, with what keeps their outputs O(1) (README of ref2,
// section 1): q/k norms, post-norms and gemma's norms 1.0 (gemma files hold HF's 1 + w, so 1.0 is
// HF's 0); a tied non-llama model draws its embeddings N(0, 1/dim) so that the logits through them
// have std ~1, except gemma, whose x sqrt(dim) input would then be as large as its layers'
// outputs (a random tied model then repeats its last token): a tied gemma draws N(0, 1/dim^2)
// and gets output_norm sqrt(dim) (input rms 1/sqrt(dim), logits std ~1); granite draws its embeddings
// N(0, 1/embedding_scale^2), its attn_q/attn_k (attention_scale * sqrt(head_dim))^-1/2 times
// larger (scores as with 1/sqrt(head_dim)) and its output matrix logit_scale times larger; the
// qwen3moe router is N(0, 1/dim), each expert's slab N(0, 1/fan_in); phi3's LongRoPE factors are
// fixed formulas (short 1 + 0.5 x^2, long 1 + 39 x^3, x = i / (rope_dim/2 - 1)).
// Stateless functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/gguf/gguf_types.h"
#include "core/gguf/gguf_writer.h"
#include "core/util/status.h"

namespace radixserve::modelgen {

// The types of a generated file's matrices, assigned as llama-quantize's presets do: the _M
// presets give output.weight and the attn_v/ffn_down of some layers more bits.
struct WeightTypes {
  gguf::TensorType base = gguf::TensorType::kF32;       // every matrix but those below
  gguf::TensorType output = gguf::TensorType::kF32;     // output.weight (token_embd.weight when tied)
  gguf::TensorType more_bits = gguf::TensorType::kF32;  // attn_v and ffn_down of the favoured layers
  static WeightTypes All(gguf::TensorType t) { return {t, t, t}; }
};

struct ModelSpec {
  // general.architecture: one of Architectures(). UseArchitecture sets it with the values that
  // architecture's real models use (RoPE base, eps, tied output, windows, context).
  std::string arch = "llama";
  std::string name = "radixserve-generated";
  uint32_t dim = 256;
  uint32_t layers = 4;
  uint32_t heads = 8;
  uint32_t kv_heads = 4;
  uint32_t ffn = 768;
  uint32_t context = 2048;
  float rope_base = 10000.0f;
  float rms_eps = 1e-5f;
  bool tied_output = false;
  WeightTypes weights;
  uint64_t seed = 1;
  // Tokenizer: copied from this GGUF's tokenizer.* keys when set, else the built-in vocabulary.
  std::string tokenizer_from;

  // --- Other architectures (ignored by llama) ---
  // The size of a head; 0: dim / heads. qwen3, qwen3moe, gemma2, gemma3 always write it as
  // attention.key_length/value_length (as their converters do), granite and smollm3 when it is
  // not dim / heads; llama and phi3 need dim / heads.
  uint32_t head_dim = 0;
  // rope.dimension_count: the rotated part of each head; 0: the whole head (phi3: 3/4 of it, as
  // Phi-4-mini's partial_rotary_factor). llama needs the whole head.
  uint32_t rope_dim = 0;
  float rope_scale_linear = 0.0f;  // > 0: rope.scaling.type linear with this factor (gemma3: its global layers only)
  float rope_base_swa = 0.0f;      // > 0: rope.freq_base_swa, the local layers' base (gemma2, gemma3)
  // qwen3moe: expert_count, expert_used_count, expert_feed_forward_length (0: ffn / 4).
  uint32_t experts = 8;
  uint32_t experts_used = 2;
  uint32_t expert_ffn = 0;
  // gemma2 / gemma3: attention.sliding_window (0: the architecture's default, 4096 / 1024) and
  // attention.sliding_window_pattern (0: not written, so llama.cpp's default: 2 / 6).
  uint32_t sliding_window = 0;
  uint32_t swa_pattern = 0;
  // gemma2: attn_logit_softcapping and final_logit_softcapping (Gemma-2's values).
  float attn_softcap = 50.0f;
  float final_softcap = 30.0f;
  // granite: embedding_scale, residual_scale, attention.scale (0: 1/head_dim, as Granite 3) and
  // logit_scale (Granite-3's values).
  float embedding_scale = 12.0f;
  float residual_scale = 0.22f;
  float attention_scale = 0.0f;
  float logit_scale = 8.0f;
  // phi3's LongRoPE: rope.scaling.original_context_length, and rope.scaling.attn_factor (0: as
  // the converter computes it, sqrt(1 + ln(context / original) / ln(original)), 1 when context
  // <= original).
  uint32_t rope_original_context = 4096;
  float rope_attn_factor = 0.0f;
};

// The architectures the generator writes.
const std::vector<std::string>& Architectures();
// Sets spec->arch and the values its real models use where the architecture's llama.cpp graph
// reads them (Qwen3: RoPE base 1e6, eps 1e-6; gemma2/3: tied, eps 1e-6, gemma3's RoPE base 1e6
// with linear x8 on the global layers and 10000 on the local ones; smollm3: base 5e6, eps 1e-6;
// phi3: context 131072 over an original 4096, so rope.scaling.attn_factor is Phi-4-mini's
// 1.19). Sizes are left as they are. InvalidArgument for an unknown architecture.
Status UseArchitecture(const std::string& arch, ModelSpec* spec);

// Named sizes of ../shared/models/README.md: "tiny" (the built-in default), "small", "medium" (llama).
Result<ModelSpec> SpecForSize(const std::string& size);
// A type name as llama-quantize spells it (any case): f32, f16, bf16, q8_0, q4_0, q4_1, q5_0,
// q5_1, iq4_nl (output.weight in Q6_K, as llama-quantize writes these), q2_k, q3_k, q4_k, q5_k,
// q6_k (every matrix), q4_k_m and q5_k_m (the mixes of section 1 of ../shared/models/ref).
Result<WeightTypes> ParseWeightType(const std::string& name);

// F32 values encoded as `type` (any type the engine runs; rows a multiple of its block size,
// quantised by kernels/cpu/quantize.h); empty for any other type.
std::vector<uint8_t> EncodeTensor(const std::vector<float>& values, gguf::TensorType type);

// Fills a writer with metadata, tokenizer and tensors.
Status BuildModel(const ModelSpec& spec, gguf::GgufWriter* out);
// BuildModel and write to `path` (atomically: a temp file renamed into place).
Status GenerateModel(const ModelSpec& spec, const std::string& path);

}  // namespace radixserve::modelgen
