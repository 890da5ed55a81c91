#include "core/model/llama_config.h"

#include <cmath>
#include <sstream>

namespace radixserve::model {
namespace {

Result<int32_t> PositiveInt(const gguf::GgufFile& f, const std::string& key) {
  RS_ASSIGN_OR_RETURN(int64_t v, f.GetInt(key));
  if (v <= 0 || v > (int64_t{1} << 30))
    return Status::InvalidArgument(f.name() + ": metadata " + key + " must be positive, got " + std::to_string(v));
  return static_cast<int32_t>(v);
}

// A multiplier read as llama.cpp does: `fallback` when absent and not required; it must be finite and > 0.
Result<float> PositiveFloat(const gguf::GgufFile& f, const std::string& key, bool required, double fallback) {
  RS_ASSIGN_OR_RETURN(double v, required ? f.GetFloat(key) : f.GetFloatOr(key, fallback));
  if (!(v > 0.0) || !std::isfinite(v))
    return Status::InvalidArgument(f.name() + ": metadata " + key + " must be a positive number, got " +
                                   std::to_string(v));
  return static_cast<float>(v);
}

// granite: embedding, residual and attention multipliers (absent: none) and the logit divisor
// (required, as in llama.cpp); rope.scaling.finetuned switches RoPE off when false.
Status ReadGraniteMultipliers(const gguf::GgufFile& f, LlamaConfig* c) {
  RS_ASSIGN_OR_RETURN(c->embedding_scale, PositiveFloat(f, "granite.embedding_scale", false, 1.0));
  RS_ASSIGN_OR_RETURN(c->residual_scale, PositiveFloat(f, "granite.residual_scale", false, 1.0));
  if (f.Has("granite.attention.scale")) {
    RS_ASSIGN_OR_RETURN(c->attention_scale, PositiveFloat(f, "granite.attention.scale", true, 0.0));
  }
  RS_ASSIGN_OR_RETURN(c->logit_scale, PositiveFloat(f, "granite.logit_scale", true, 0.0));
  RS_ASSIGN_OR_RETURN(c->rope_enabled, f.GetBoolOr("granite.rope.scaling.finetuned", true));
  return Status::Ok();
}

// gemma2 / gemma3, as llama.cpp's loader reads them (its defaults where a key is absent):
// sliding window and its layer pattern, the local layers' RoPE, the soft-caps, and the query
// scale of the 27B shapes (1/sqrt(n_embd/n_head) instead of 1/sqrt(head_dim), by layer count).
Status ReadGemma23(const gguf::GgufFile& f, LlamaConfig* c) {
  const std::string p = c->architecture + ".";
  const bool gemma2 = c->architecture == "gemma2";
  c->embedding_scale = std::sqrt(static_cast<float>(c->dim));
  if (gemma2) {
    c->sliding_window = 4096;  // Gemma-2's window; the key overrides it (read by the caller)
    RS_ASSIGN_OR_RETURN(c->attn_softcap, PositiveFloat(f, p + "attn_logit_softcapping", false, 50.0));
    RS_ASSIGN_OR_RETURN(c->final_softcap, PositiveFloat(f, p + "final_logit_softcapping", false, 30.0));
  }
  if (f.Has(p + "attention.sliding_window")) {
    RS_ASSIGN_OR_RETURN(c->sliding_window, PositiveInt(f, p + "attention.sliding_window"));
  }
  RS_ASSIGN_OR_RETURN(int64_t period, f.GetIntOr(p + "attention.sliding_window_pattern", gemma2 ? 2 : 6));
  if (period < 0 || period > (int64_t{1} << 20))
    return Status::InvalidArgument(f.name() + ": metadata " + p + "attention.sliding_window_pattern must be >= 0, got " +
                                   std::to_string(period));
  c->swa_period = static_cast<int32_t>(period);
  if (gemma2) {
    c->rope_linear_scale_swa = c->rope_linear_scale;
    RS_ASSIGN_OR_RETURN(c->rope_freq_base_swa, PositiveFloat(f, p + "rope.freq_base_swa", false, c->rope_freq_base));
  } else {  // gemma3's local layers: base 10000 unless the key says otherwise, never scaled
    c->rope_linear_scale_swa = 1.0f;
    RS_ASSIGN_OR_RETURN(c->rope_freq_base_swa, PositiveFloat(f, p + "rope.freq_base_swa", false, 10000.0));
  }
  if (c->num_layers == (gemma2 ? 46 : 62))  // llama.cpp's LLM_TYPE_27B
    c->attention_scale = 1.0f / std::sqrt(static_cast<float>(c->dim / c->num_heads));
  return Status::Ok();
}

// qwen3moe's mixture of experts: expert_count and expert_used_count are required (llama.cpp
// refuses a MoE without experts), used <= count; the expert width is expert_feed_forward_length,
// else feed_forward_length / expert_used_count (llama.cpp's fallback).
Status ReadExperts(const gguf::GgufFile& f, LlamaConfig* c) {
  const std::string p = c->architecture + ".";
  RS_ASSIGN_OR_RETURN(c->num_experts, PositiveInt(f, p + "expert_count"));
  RS_ASSIGN_OR_RETURN(c->experts_used, PositiveInt(f, p + "expert_used_count"));
  if (c->num_experts > 1024)
    return Status::Unsupported(f.name() + ": metadata " + p + "expert_count " + std::to_string(c->num_experts) +
                               " (at most 1024)");
  if (c->experts_used > c->num_experts)
    return Status::InvalidArgument(f.name() + ": metadata " + p + "expert_used_count " +
                                   std::to_string(c->experts_used) + " exceeds " + p + "expert_count " +
                                   std::to_string(c->num_experts));
  if (f.Has(p + "expert_feed_forward_length")) {
    RS_ASSIGN_OR_RETURN(c->expert_ffn_dim, PositiveInt(f, p + "expert_feed_forward_length"));
  } else if (c->ffn_dim > 0 && c->ffn_dim % c->experts_used == 0) {
    c->expert_ffn_dim = c->ffn_dim / c->experts_used;
  } else {
    return Status::NotFound(f.name() + ": metadata " + p + "expert_feed_forward_length is missing (and " + p +
                            "feed_forward_length does not give it)");
  }
  if (c->ffn_dim == 0) c->ffn_dim = c->expert_ffn_dim;
  return Status::Ok();
}

// phi3's LongRoPE (llama.cpp loads rope_factors_long/short for phi3 only): both factor tensors,
// the context length they switch at, and the attention factor (read for every architecture, as
// llama.cpp's rope_attn_factor; absent: 1).
Status ReadLongRope(const gguf::GgufFile& f, LlamaConfig* c) {
  const std::string p = c->architecture + ".";
  RS_ASSIGN_OR_RETURN(c->rope_attn_factor, PositiveFloat(f, p + "rope.scaling.attn_factor", false, 1.0));
  const bool has_long = f.FindTensor("rope_factors_long.weight") != nullptr;
  const bool has_short = f.FindTensor("rope_factors_short.weight") != nullptr;
  if (!has_long && !has_short) return Status::Ok();
  if (c->architecture != "phi3")
    return Status::Unsupported(f.name() + ": tensor " + (has_long ? "rope_factors_long.weight" : "rope_factors_short.weight") +
                               " (LongRoPE) is supported for phi3 only, not " + c->architecture);
  if (has_long != has_short)
    return Status::NotFound(f.name() + ": tensor " + (has_long ? "rope_factors_short.weight" : "rope_factors_long.weight") +
                            " is missing (LongRoPE needs both rope_factors_short.weight and rope_factors_long.weight)");
  if (c->rope_freq_factors)
    return Status::Unsupported(f.name() + ": tensor rope_freqs.weight together with the LongRoPE factors "
                               "rope_factors_short/long.weight is not supported");
  c->rope_long_short_factors = true;
  c->rope_original_context = c->context_length;
  if (f.Has(p + "rope.scaling.original_context_length")) {
    RS_ASSIGN_OR_RETURN(c->rope_original_context, PositiveInt(f, p + "rope.scaling.original_context_length"));
  }
  return Status::Ok();
}

}  // namespace

Result<LlamaConfig> LlamaConfig::FromGguf(const gguf::GgufFile& f) {
  LlamaConfig c;
  RS_ASSIGN_OR_RETURN(c.architecture, f.GetString("general.architecture"));
  const std::string& arch = c.architecture;
  if (arch == "llama") {
  } else if (arch == "qwen2") {
    c.rope_style = RopeStyle::kNeox;
    c.attention_bias = true;
  } else if (arch == "qwen3") {
    c.rope_style = RopeStyle::kNeox;
    c.qk_norm = true;
  } else if (arch == "qwen3moe") {  // qwen3 attention; the experts are read below
    c.rope_style = RopeStyle::kNeox;
    c.qk_norm = true;
  } else if (arch == "granite") {  // llama with four multipliers, read below
  } else if (arch == "smollm3") {
    c.no_rope_period = 4;  // hard-coded in llama.cpp; HF's no_rope_layers is not converted
  } else if (arch == "phi3") {
    c.rope_style = RopeStyle::kNeox;
    c.fused_qkv = true;
    c.fused_gate_up = true;
  } else if (arch == "gemma") {
    c.rope_style = RopeStyle::kNeox;
    c.ffn_activation = FfnActivation::kGeluTanh;
  } else if (arch == "gemma2" || arch == "gemma3") {  // the rest in ReadGemma23
    c.rope_style = RopeStyle::kNeox;
    c.ffn_activation = FfnActivation::kGeluTanhF16Table;
    c.post_norms = true;
    c.qk_norm = arch == "gemma3";
  } else {
    return Status::Unsupported(f.name() + ": architecture '" + arch +
                               "' is not supported (llama, qwen2, qwen3, qwen3moe, phi3, gemma, gemma2, gemma3, granite, smollm3)");
  }
  const bool gemma23 = arch == "gemma2" || arch == "gemma3";
  const std::string p = c.architecture + ".";
  RS_ASSIGN_OR_RETURN(c.dim, PositiveInt(f, p + "embedding_length"));
  RS_ASSIGN_OR_RETURN(c.num_layers, PositiveInt(f, p + "block_count"));
  RS_ASSIGN_OR_RETURN(c.num_heads, PositiveInt(f, p + "attention.head_count"));
  c.num_kv_heads = c.num_heads;
  if (f.Has(p + "attention.head_count_kv")) {
    RS_ASSIGN_OR_RETURN(c.num_kv_heads, PositiveInt(f, p + "attention.head_count_kv"));
  }
  // qwen3moe: feed_forward_length is not used when expert_feed_forward_length is present.
  if (arch != "qwen3moe" || f.Has(p + "feed_forward_length")) {
    RS_ASSIGN_OR_RETURN(c.ffn_dim, PositiveInt(f, p + "feed_forward_length"));
  }
  if (arch == "qwen3moe") RS_RETURN_IF_ERROR(ReadExperts(f, &c));
  RS_ASSIGN_OR_RETURN(c.context_length, PositiveInt(f, p + "context_length"));
  // gemma2/gemma3: required, as llama.cpp reads it for them.
  RS_ASSIGN_OR_RETURN(double eps, gemma23 ? f.GetFloat(p + "attention.layer_norm_rms_epsilon")
                                          : f.GetFloatOr(p + "attention.layer_norm_rms_epsilon", 1e-5));
  c.rms_eps = static_cast<float>(eps);
  RS_ASSIGN_OR_RETURN(double base, f.GetFloatOr(p + "rope.freq_base", 10000.0));
  c.rope_freq_base = static_cast<float>(base);
  if (!(c.rope_freq_base > 0.0f)) return Status::InvalidArgument(f.name() + ": " + p + "rope.freq_base must be > 0");

  if (c.dim % c.num_heads != 0)
    return Status::InvalidArgument(f.name() + ": embedding_length " + std::to_string(c.dim) +
                                   " is not a multiple of head_count " + std::to_string(c.num_heads));
  c.head_dim = c.dim / c.num_heads;
  if (f.Has(p + "attention.key_length")) {
    RS_ASSIGN_OR_RETURN(c.head_dim, PositiveInt(f, p + "attention.key_length"));
    RS_ASSIGN_OR_RETURN(int64_t vlen, f.GetIntOr(p + "attention.value_length", c.head_dim));
    if (vlen != c.head_dim)
      return Status::Unsupported(f.name() + ": attention.key_length != attention.value_length");
  }
  if (c.num_heads % c.num_kv_heads != 0)
    return Status::InvalidArgument(f.name() + ": head_count " + std::to_string(c.num_heads) +
                                   " is not a multiple of head_count_kv " + std::to_string(c.num_kv_heads));
  c.rope_dim = c.head_dim;
  if (f.Has(p + "rope.dimension_count")) {
    RS_ASSIGN_OR_RETURN(c.rope_dim, PositiveInt(f, p + "rope.dimension_count"));
  }
  if (c.rope_dim > c.head_dim || c.rope_dim % 2 != 0)
    return Status::InvalidArgument(f.name() + ": metadata " + p + "rope.dimension_count " + std::to_string(c.rope_dim) +
                                   " must be even and <= the head size " + std::to_string(c.head_dim));

  std::string scaling = "none";
  if (f.Has(p + "rope.scaling.type")) {
    RS_ASSIGN_OR_RETURN(scaling, f.GetString(p + "rope.scaling.type"));
  }
  RS_ASSIGN_OR_RETURN(double factor, f.GetFloatOr(p + "rope.scaling.factor", 0.0));
  if (scaling == "linear" || (scaling == "none" && f.Has(p + "rope.scale_linear"))) {
    if (scaling == "none") {
      RS_ASSIGN_OR_RETURN(factor, f.GetFloat(p + "rope.scale_linear"));
    }
    if (factor > 0.0) c.rope_linear_scale = static_cast<float>(factor);
  } else if (scaling != "none") {
    return Status::Unsupported(f.name() + ": rope.scaling.type '" + scaling + "' is not supported (none, linear)");
  }

  const gguf::TensorInfo* embd = f.FindTensor("token_embd.weight");
  if (embd == nullptr) return Status::NotFound(f.name() + ": tensor token_embd.weight is missing");
  if (embd->dims.size() != 2 || embd->dims[0] != static_cast<uint64_t>(c.dim) || embd->dims[1] == 0 ||
      embd->dims[1] > (uint64_t{1} << 30))
    return Status::InvalidArgument(f.name() + ": token_embd.weight must have shape [" + std::to_string(c.dim) +
                                   ", vocab]");
  c.vocab_size = static_cast<int32_t>(embd->dims[1]);
  c.tied_output = f.FindTensor("output.weight") == nullptr;
  if (arch == "gemma") c.embedding_scale = std::sqrt(static_cast<float>(c.dim));
  if (arch == "granite") RS_RETURN_IF_ERROR(ReadGraniteMultipliers(f, &c));
  c.rope_freq_factors = f.FindTensor("rope_freqs.weight") != nullptr;
  RS_RETURN_IF_ERROR(ReadLongRope(f, &c));
  c.rope_freq_base_swa = c.rope_freq_base;
  c.rope_linear_scale_swa = c.rope_linear_scale;
  if (gemma23) {
    RS_RETURN_IF_ERROR(ReadGemma23(f, &c));
  } else if (f.Has(p + "attention.sliding_window")) {
    RS_ASSIGN_OR_RETURN(c.sliding_window, PositiveInt(f, p + "attention.sliding_window"));
  }
  return c;
}

std::string LlamaConfig::ToString() const {
  std::ostringstream os;
  os << architecture << " dim=" << dim << " layers=" << num_layers << " heads=" << num_heads
     << " kv_heads=" << num_kv_heads << " head_dim=" << head_dim << " ffn=" << ffn_dim << " vocab=" << vocab_size
     << " ctx=" << context_length << " rope_dim=" << rope_dim << " rope_base=" << rope_freq_base
     << " rope_scale=" << rope_linear_scale << (rope_style == RopeStyle::kNeox ? " rope=neox" : " rope=norm")
     << (rope_freq_factors ? " rope_freqs" : "") << (rope_long_short_factors ? " longrope" : "") << (tied_output ? " tied" : "") << (attention_bias ? " qkv_bias" : "")
     << (fused_qkv ? " fused_qkv" : "") << (fused_gate_up ? " fused_gate_up" : "")
     << (ffn_activation == FfnActivation::kGeluTanh ? " gelu" : "")
     << (ffn_activation == FfnActivation::kGeluTanhF16Table ? " gelu_f16_table" : "") << (embedding_scale != 1.0f ? " embd_scale" : "");
  if (rope_long_short_factors) os << " rope_orig_ctx=" << rope_original_context;
  if (rope_attn_factor != 1.0f) os << " rope_attn_factor=" << rope_attn_factor;
  if (qk_norm) os << " qk_norm";
  if (residual_scale != 1.0f) os << " residual_scale=" << residual_scale;
  if (attention_scale > 0.0f) os << " attn_scale=" << attention_scale;
  if (logit_scale != 1.0f) os << " logit_scale=" << logit_scale;
  if (!rope_enabled) os << " no_rope";
  if (no_rope_period > 0) os << " no_rope_every=" << no_rope_period;
  if (sliding_window > 0) os << " window=" << sliding_window;
  if (sliding_window > 0 && swa_period > 0) os << " swa_period=" << swa_period;
  if (swa_rope_differs()) os << " swa_rope_base=" << rope_freq_base_swa << " swa_rope_scale=" << rope_linear_scale_swa;
  if (post_norms) os << " post_norms";
  if (attn_softcap > 0.0f) os << " attn_softcap=" << attn_softcap;
  if (final_softcap > 0.0f) os << " final_softcap=" << final_softcap;
  if (moe()) os << " experts=" << num_experts << " used=" << experts_used << " expert_ffn=" << expert_ffn_dim;
  return os.str();
}

}  // namespace radixserve::model
