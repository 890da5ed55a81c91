// LlamaConfig: the hyper-parameters of a llama-family model (llama, qwen2, qwen3, qwen3moe, phi3,
// gemma, gemma2, gemma3, granite, smollm3), read from GGUF metadata, with what sets each architecture
// apart. Plain data; thread-safe to read.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "core/gguf/gguf_reader.h"
#include "core/util/status.h"

namespace radixserve::model {

enum class RopeStyle { kNorm, kNeox };  // pairs (2i, 2i+1), or (i, i + rot/2)
// kGeluTanhF16Table: llama.cpp's CPU GELU (gemma2, gemma3): the input rounded to fp16 indexes a
// table of gelu(x) rounded to fp16; x <= -10 gives 0, x >= 10 passes through.
enum class FfnActivation { kSilu, kGeluTanh, kGeluTanhF16Table };

struct LlamaConfig {
  std::string architecture;    // general.architecture: llama, qwen2, qwen3, qwen3moe, phi3, gemma, gemma2, gemma3, granite, smollm3
  int32_t dim = 0;             // embedding_length
  int32_t num_layers = 0;      // block_count
  int32_t num_heads = 0;       // attention.head_count
  int32_t num_kv_heads = 0;    // attention.head_count_kv (defaults to num_heads)
  int32_t head_dim = 0;        // dim / num_heads (or attention.key_length)
  int32_t ffn_dim = 0;         // feed_forward_length
  int32_t vocab_size = 0;      // rows of token_embd.weight
  int32_t context_length = 0;  // context_length
  float rms_eps = 1e-5f;       // attention.layer_norm_rms_epsilon
  float rope_freq_base = 10000.0f;
  int32_t rope_dim = 0;        // rope.dimension_count (defaults to head_dim)
  float rope_linear_scale = 1.0f;  // positions are divided by this (rope.scaling.type = linear)
  bool tied_output = false;    // output.weight absent: logits use token_embd.weight
  RopeStyle rope_style = RopeStyle::kNorm;
  FfnActivation ffn_activation = FfnActivation::kSilu;
  float embedding_scale = 1.0f;  // gemma multiplies its embeddings by sqrt(dim); granite.embedding_scale
  float residual_scale = 1.0f;   // granite.residual_scale: attention and FFN outputs are scaled before the residual add
  float attention_scale = 0.0f;  // granite.attention.scale, gemma2/3's 27B rule: the softmax scale; 0: 1/sqrt(head_dim)
  float logit_scale = 1.0f;      // granite.logit_scale: the logits are divided by it
  bool qk_norm = false;          // qwen3: attn_q_norm/attn_k_norm, an RMSNorm per head of Q and K before RoPE
  bool rope_enabled = true;      // granite.rope.scaling.finetuned = false: no layer rotates Q and K
  int32_t no_rope_period = 0;    // smollm3: layers with (l + 1) % period == 0 skip RoPE (4, fixed); 0: none
  bool attention_bias = false;   // qwen2: q/k/v projections have biases
  bool fused_qkv = false;        // phi3: one attn_qkv matrix, rows [Q; K; V]
  bool fused_gate_up = false;    // phi3: ffn_up holds [gate; up]
  bool rope_freq_factors = false;  // rope_freqs.weight divides each frequency (Llama 3.1 scaling)
  // phi3's LongRoPE: rope_factors_short.weight and rope_factors_long.weight ([rope_dim / 2] each)
  // divide the frequencies; llama.cpp takes the long set iff its n_ctx (here: the served context,
  // served_context.h) exceeds rope_original_context, the short one otherwise.
  bool rope_long_short_factors = false;
  int32_t rope_original_context = 0;  // rope.scaling.original_context_length (absent: context_length)
  float rope_attn_factor = 1.0f;  // rope.scaling.attn_factor: multiplies cos and sin (the rotated dims only)
  int32_t sliding_window = 0;    // attention.sliding_window: keys with pos_q - pos_k >= it are masked; 0: none
  // Which layers the window applies to (llama.cpp's set_swa_pattern): layer l is local iff
  // l % swa_period < swa_period - 1; 0: every layer (Mistral). gemma2: 2, gemma3: 6 unless
  // attention.sliding_window_pattern says otherwise.
  int32_t swa_period = 0;
  // RoPE of the local layers (gemma3: rope.freq_base_swa, absent 10000, unscaled; gemma2: the
  // global base). Equal to the global ones for every other architecture.
  float rope_freq_base_swa = 10000.0f;
  float rope_linear_scale_swa = 1.0f;
  float attn_softcap = 0.0f;     // gemma2.attn_logit_softcapping c: scores become c * tanh(s / c); 0: none
  float final_softcap = 0.0f;    // gemma2.final_logit_softcapping c: logits become c * tanh(l / c); 0: none
  bool post_norms = false;       // gemma2/3: post_attention_norm and post_ffw_norm on each block's outputs
  // qwen3moe: every layer's FFN is a mixture of num_experts SwiGLU experts of width expert_ffn_dim
  // (expert_feed_forward_length; absent: feed_forward_length / expert_used_count, as llama.cpp),
  // routed by softmax over all experts, top experts_used, their weights renormalised to sum 1.
  // 0 experts: a dense FFN of ffn_dim.
  int32_t num_experts = 0;       // expert_count
  int32_t experts_used = 0;      // expert_used_count, 1..num_experts
  int32_t expert_ffn_dim = 0;

  bool moe() const { return num_experts > 0; }

  int32_t q_dim() const { return num_heads * head_dim; }
  int32_t kv_dim() const { return num_kv_heads * head_dim; }
  // The scale of q.k in the softmax.
  float softmax_scale() const {
    return attention_scale > 0.0f ? attention_scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
  }
  // Whether layer `layer` rotates Q and K (smollm3's every 4th layer does not).
  bool layer_uses_rope(int layer) const {
    return rope_enabled && (no_rope_period == 0 || (layer + 1) % no_rope_period != 0);
  }

  // Whether layer `layer` masks keys by the sliding window.
  bool layer_is_local(int layer) const {
    return sliding_window > 0 && (swa_period == 0 || layer % swa_period < swa_period - 1);
  }
  // Whether a model served with `context` tokens divides its frequencies by rope_factors_long.
  bool uses_long_rope_factors(int64_t context) const {
    return rope_long_short_factors && context > rope_original_context;
  }
  // Whether local layers rotate with other frequencies than global ones (gemma3).
  bool swa_rope_differs() const {
    return rope_freq_base_swa != rope_freq_base || rope_linear_scale_swa != rope_linear_scale;
  }

  // Reads and validates the config; the message names the offending key.
  static Result<LlamaConfig> FromGguf(const gguf::GgufFile& file);
  std::string ToString() const;
};

}  // namespace radixserve::model
