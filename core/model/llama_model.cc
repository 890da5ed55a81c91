#include "core/model/llama_model.h"
#include "core/model/moe.h"
#include "core/model/served_context.h"
#include "core/model/weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/vec_ops.h"

namespace radixserve::model {

using kernels::WeightType;
using kernels::WeightView;

// Scratch of Forward; vectors only grow.
struct LlamaModel::Workspace {
  std::vector<float> x, xn, q, k, v, attn, gate, up, last, cos_sin, cos_sin_swa;
  std::vector<float> gathered_in, part_out;  // tensor parallelism: a projection's inputs of all ranks, this rank's outputs
  std::vector<int32_t> token_seq, token_pos, token_slot, tokens;
  std::vector<std::vector<float>> scores;  // per thread
  std::vector<float> moe_out;  // the MoE FFN's output [T][dim]
  MoeScratch moe;

  template <typename T>
  static T* Ensure(std::vector<T>& v, int64_t n) {
    if (static_cast<int64_t>(v.size()) < n) v.resize(n);
    return v.data();
  }
};

namespace {

// llama.cpp's CPU GELU (ggml_vec_geglu_f32 with GGML_GELU_FP16): gelu(x) of every fp16 x, rounded to fp16.
const uint16_t* GeluF16Table() {
  static const std::vector<uint16_t> table = [] {
    constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f, kCoefA = 0.044715f;
    std::vector<uint16_t> t(65536);
    for (uint32_t i = 0; i < t.size(); ++i) {
      const float x = kernels::Fp16ToFp32(static_cast<uint16_t>(i));
      t[i] = kernels::Fp32ToFp16(0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoefA * x * x))));
    }
    return t;
  }();
  return table.data();
}

// out = gelu(gate) * up with gelu as ggml's table: x <= -10 gives 0, x >= 10 passes through, else
// the table entry of x rounded to fp16. gemma2 and gemma3 only: this is what their logits were made with.
void GeluF16TableMul(const float* gate, const float* up, float* out, int64_t n) {
  const uint16_t* table = GeluF16Table();
  for (int64_t i = 0; i < n; ++i) {
    const float x = gate[i];
    if (x <= -10.0f) {
      out[i] = 0.0f;
    } else if (x >= 10.0f) {
      out[i] = x * up[i];
    } else {
      out[i] = kernels::Fp16ToFp32(table[kernels::Fp32ToFp16(x)]) * up[i];
    }
  }
}

}  // namespace

LlamaModel::~LlamaModel() = default;

Result<std::unique_ptr<LlamaModel>> LlamaModel::Load(std::shared_ptr<const gguf::GgufFile> file,
                                                     const ModelOptions& options) {
  if (!file) return Status::InvalidArgument("LlamaModel::Load: no GGUF file");
  if (options.num_threads < 1 || options.num_threads > 256)
    return Status::InvalidArgument("num_threads must be in [1, 256], got " + std::to_string(options.num_threads));
  RS_RETURN_IF_ERROR(kernels::CheckCpuRunsThisBuild());
  auto m = std::unique_ptr<LlamaModel>(new LlamaModel());
  m->file_ = std::move(file);
  m->kv_type_ = options.kv_type;
  RS_ASSIGN_OR_RETURN(m->config_, LlamaConfig::FromGguf(*m->file_));
  RS_ASSIGN_OR_RETURN(m->served_context_, ServedContext(*m->file_, options.context));
  if (Status fits = CheckKvTypeFits(m->kv_type_, m->config_.head_dim); !fits.ok())
    return Status(fits.code(), m->file_->name() + ": " + fits.message());
  m->collective_ = options.collective;
  const int rank = m->collective_ ? m->collective_->rank() : 0, size = m->collective_ ? m->collective_->size() : 1;
  if (m->config_.moe() && size > 1)
    return Status::Unsupported(m->file_->name() + ": tensor parallelism of a mixture of experts (" +
                               m->config_.architecture + ") is not supported; run it on one rank");
  RS_ASSIGN_OR_RETURN(m->shard_, TpShard::For(m->config_, rank, size));
  const int layers = m->config_.num_layers;
  m->layer_begin_ = options.layer_begin;
  m->layer_end_ = options.layer_end < 0 ? layers : options.layer_end;
  if (m->layer_begin_ < 0 || m->layer_begin_ >= m->layer_end_ || m->layer_end_ > layers)
    return Status::InvalidArgument("layer range [" + std::to_string(m->layer_begin_) + ", " +
                                   std::to_string(m->layer_end_) + ") is not a non-empty part of the model's " +
                                   std::to_string(layers) + " layers");
  m->kv_config_ = m->config_;
  m->kv_config_.num_kv_heads = m->shard_.kv_heads;
  m->kv_config_.num_layers = m->layer_end_ - m->layer_begin_;
  RS_RETURN_IF_ERROR(m->LoadWeights());
  if (size > 1) RS_RETURN_IF_ERROR(m->ShardWeights());
  // OpenBLAS runs single-threaded inside our pool's tasks (see matmul.h).
  kernels::SetBlasThreads(1);
  m->pool_ = std::make_unique<kernels::ThreadPool>(options.num_threads);
  m->matmul_scratch_ = std::make_unique<kernels::MatMulScratch>(options.num_threads);
  m->ws_ = std::make_unique<Workspace>();
  m->ws_->scores.resize(options.num_threads);
  return m;
}

Status LlamaModel::LoadWeights() {
  RS_ASSIGN_OR_RETURN(LlamaWeights w, LoadLlamaWeights(*file_, config_));
  token_embd_ = w.token_embd;
  output_ = w.output;
  output_norm_ = std::move(w.output_norm);
  // LongRoPE: the long factors iff the served context exceeds the original one (llama.cpp's rule on n_ctx).
  rope_inv_freq_ = std::move(config_.uses_long_rope_factors(served_context_) ? w.rope_inv_freq_long : w.rope_inv_freq);
  rope_inv_freq_swa_ = std::move(w.rope_inv_freq_swa);
  layers_ = std::move(w.layers);
  for (int l = 0; l < config_.num_layers; ++l)
    if (l < layer_begin_ || l >= layer_end_) layers_[l] = LayerWeights{};  // checked, not kept: another stage runs it
  return Status::Ok();
}

namespace {
std::vector<float> Slice(const std::vector<float>& v, int64_t begin, int64_t count) {
  return v.empty() ? v : std::vector<float>(v.begin() + begin, v.begin() + begin + count);
}
}  // namespace

Status LlamaModel::ShardWeights() {
  const TpShard& s = shard_;
  const int64_t hd = config_.head_dim;
  const int64_t q0 = s.q_head_begin * hd, qn = s.q_heads * hd, k0 = s.kv_head_begin * hd, kn = s.kv_heads * hd;
  for (Layer& L : layers_) {
    L.wq = L.wq.Rows(q0, qn);
    L.wk = L.wk.Rows(k0, kn);
    L.wv = L.wv.Rows(k0, kn);
    L.bq = Slice(L.bq, q0, qn);
    L.bk = Slice(L.bk, k0, kn);
    L.bv = Slice(L.bv, k0, kn);
    L.wo = L.wo.Rows(s.dim_begin, s.dim_part);
    L.w_gate = L.w_gate.Rows(s.ffn_begin, s.ffn_dim);
    L.w_up = L.w_up.Rows(s.ffn_begin, s.ffn_dim);
    L.w_down = L.w_down.Rows(s.dim_begin, s.dim_part);
  }
  return Status::Ok();
}

Status LlamaModel::Validate(std::span<const SequenceInput> seqs, const KvCache& kv, std::span<float> logits,
                            const ForwardOptions& options, int64_t* total_tokens) const {
  const LlamaConfig& c = config_;
  if (kv.num_layers() != kv_config_.num_layers || kv.kv_dim() != kv_config_.kv_dim())
    return Status::InvalidArgument("Forward: KV cache shape does not match the model");
  if (options.sampling != nullptr)
    return Status::Unsupported("Forward: the CPU model returns logits; it does not sample itself");
  int64_t total = 0;
  RS_RETURN_IF_ERROR(ValidateSequences(c, seqs, kv.num_slots(), &total));
  const int64_t hidden = total * c.dim;
  if (!first_stage() && static_cast<int64_t>(options.hidden_in.size()) != hidden)
    return Status::InvalidArgument("Forward: this pipeline stage starts at layer " + std::to_string(layer_begin_) +
                                   " and needs " + std::to_string(hidden) + " floats of hidden state, got " +
                                   std::to_string(options.hidden_in.size()));
  if (!last_stage()) {
    if (static_cast<int64_t>(options.hidden_out.size()) != hidden)
      return Status::InvalidArgument("Forward: this pipeline stage ends before layer " + std::to_string(layer_end_) +
                                     " and writes " + std::to_string(hidden) + " floats of hidden state, got room for " +
                                     std::to_string(options.hidden_out.size()));
    *total_tokens = total;
    return Status::Ok();
  }
  const int64_t rows = options.all_logits ? total : static_cast<int64_t>(seqs.size());
  if (static_cast<int64_t>(logits.size()) != rows * c.vocab_size)
    return Status::InvalidArgument("Forward: logits has " + std::to_string(logits.size()) + " floats, expected " +
                                   std::to_string(rows * c.vocab_size));
  *total_tokens = total;
  return Status::Ok();
}

void LlamaModel::Attention(int layer, std::span<const SequenceInput> seqs, KvCache& kv, int64_t T) {
  const LlamaConfig& c = config_;
  Workspace& ws = *ws_;
  const int group = shard_.group();
  const int kv_heads = shard_.kv_heads;
  const int64_t qd = int64_t{shard_.q_heads} * c.head_dim;
  const int hd = c.head_dim;
  const float scale = c.softmax_scale();
  const kernels::KvLayerView view = kv.Layer(layer - layer_begin_);
  const bool local = c.layer_is_local(layer);
  const float* q = ws.q.data();
  float* out = ws.attn.data();
  pool_->ParallelFor(T * kv_heads, [&](int64_t task, int thread) {
    const int64_t t = task / kv_heads;
    const int h = static_cast<int>(task % kv_heads);
    const SequenceInput& in = seqs[ws.token_seq[t]];
    const int64_t n_keys = ws.token_pos[t] + 1;
    // A local layer's sliding window keeps the keys with pos_q - pos_k < window.
    const int64_t first = local ? std::max<int64_t>(0, n_keys - c.sliding_window) : 0;
    const int64_t off = t * qd + static_cast<int64_t>(h) * group * hd;
    kernels::AttendSlots(q + off, group, view, h, in.slots.data() + first, n_keys - first, hd, scale,
                         ws.scores[thread].data(), out + off, c.attn_softcap);
  });
}

void LlamaModel::ScaleLogits(std::span<float> logits) const {
  if (config_.logit_scale != 1.0f) {
    const float inv = 1.0f / config_.logit_scale;  // llama.cpp multiplies by the reciprocal
    for (float& v : logits) v *= inv;
  }
  if (config_.final_softcap > 0.0f) {  // gemma2: cap * tanh(logit / cap), llama.cpp's order of operations
    const float cap = config_.final_softcap, inv = 1.0f / cap;
    for (float& v : logits) v = cap * std::tanh(v * inv);
  }
}

Status LlamaModel::Project(const WeightView& w, const float* in, int64_t in_cols, int64_t T, float* out) {
  if (collective_ == nullptr) {
    kernels::MatMul(w, in, T, out, *matmul_scratch_, *pool_);
    return Status::Ok();
  }
  // Every rank's input columns, then this rank's output rows over all of them, then everyone's.
  Workspace& ws = *ws_;
  const int size = collective_->size();
  float* full_in = Workspace::Ensure(ws.gathered_in, T * in_cols * size);
  float* part = Workspace::Ensure(ws.part_out, T * w.rows);
  RS_RETURN_IF_ERROR(collective_->AllGather(in, T, in_cols, full_in));
  kernels::MatMul(w, full_in, T, part, *matmul_scratch_, *pool_);
  return collective_->AllGather(part, T, w.rows, out);
}

Status LlamaModel::Forward(std::span<const SequenceInput> seqs, KvCache& kv, std::span<float> logits,
                           const ForwardOptions& options) {
  int64_t T = 0;
  RS_RETURN_IF_ERROR(Validate(seqs, kv, logits, options, &T));
  if (collective_) collective_->BeginStep(options.step);
  const LlamaConfig& c = config_;
  Workspace& ws = *ws_;
  const int64_t S = static_cast<int64_t>(seqs.size());
  // This rank's heads and FFN columns (all of them without tensor parallelism).
  const int64_t dim = c.dim, qd = int64_t{shard_.q_heads} * c.head_dim, kvd = kv_config_.kv_dim(), ffn = shard_.ffn_dim;
  const int q_heads = shard_.q_heads, kv_heads = shard_.kv_heads;
  const int half_rot = c.rope_dim / 2;

  float* x = Workspace::Ensure(ws.x, T * dim);
  float* xn = Workspace::Ensure(ws.xn, T * dim);
  float* q = Workspace::Ensure(ws.q, T * qd);
  float* k = Workspace::Ensure(ws.k, T * kvd);
  float* v = Workspace::Ensure(ws.v, T * kvd);
  Workspace::Ensure(ws.attn, T * qd);
  float* gate = c.moe() ? nullptr : Workspace::Ensure(ws.gate, T * ffn);
  float* up = c.moe() ? nullptr : Workspace::Ensure(ws.up, T * ffn);
  float* moe_out = c.moe() ? Workspace::Ensure(ws.moe_out, T * dim) : nullptr;
  float* cos_sin = Workspace::Ensure(ws.cos_sin, T * c.rope_dim);
  const bool swa_rope = c.swa_rope_differs();  // gemma3's local layers rotate with their own base
  float* cos_sin_swa = swa_rope ? Workspace::Ensure(ws.cos_sin_swa, T * c.rope_dim) : nullptr;
  int32_t* token_seq = Workspace::Ensure(ws.token_seq, T);
  int32_t* token_pos = Workspace::Ensure(ws.token_pos, T);
  int32_t* token_slot = Workspace::Ensure(ws.token_slot, T);
  int64_t max_keys = 0;
  for (const SequenceInput& in : seqs)
    max_keys = std::max<int64_t>(max_keys, in.cached_len + static_cast<int64_t>(in.new_tokens.size()));
  for (auto& s : ws.scores) Workspace::Ensure(s, max_keys * shard_.group());

  // Per-token bookkeeping, embeddings and rotary angles.
  int64_t t = 0;
  for (int64_t s = 0; s < S; ++s) {
    const SequenceInput& in = seqs[s];
    for (size_t i = 0; i < in.new_tokens.size(); ++i, ++t) {
      const int32_t pos = in.cached_len + static_cast<int32_t>(i);
      token_seq[t] = static_cast<int32_t>(s);
      token_pos[t] = pos;
      token_slot[t] = in.slots[pos];
      if (first_stage()) {
        kernels::DequantizeRows(token_embd_, in.new_tokens[i], in.new_tokens[i] + 1, x + t * dim);
        if (c.embedding_scale != 1.0f)
          for (int64_t j = 0; j < dim; ++j) x[t * dim + j] *= c.embedding_scale;
      }
      // cos and sin times rope.scaling.attn_factor (ggml's mscale; 1 but for phi3's LongRoPE).
      const float p = static_cast<float>(pos) / c.rope_linear_scale, mscale = c.rope_attn_factor;
      float* cs = cos_sin + t * c.rope_dim;
      for (int j = 0; j < half_rot; ++j) {
        const float theta = p * rope_inv_freq_[j];
        cs[2 * j] = std::cos(theta) * mscale;
        cs[2 * j + 1] = std::sin(theta) * mscale;
      }
      if (swa_rope) {
        const float ps = static_cast<float>(pos) / c.rope_linear_scale_swa;
        float* css = cos_sin_swa + t * c.rope_dim;
        for (int j = 0; j < half_rot; ++j) {
          const float theta = ps * rope_inv_freq_swa_[j];
          css[2 * j] = std::cos(theta) * mscale;
          css[2 * j + 1] = std::sin(theta) * mscale;
        }
      }
    }
  }

  if (!first_stage()) std::copy(options.hidden_in.begin(), options.hidden_in.end(), x);
  auto* const rope = c.rope_style == RopeStyle::kNeox ? &kernels::RopeNeox : &kernels::RopeNorm;
  auto* const activation = c.ffn_activation == FfnActivation::kGeluTanhF16Table ? &GeluF16TableMul
                           : c.ffn_activation == FfnActivation::kGeluTanh      ? &kernels::GeluMul
                                                                               : &kernels::SiluMul;
  kernels::MatMulScratch& mm = *matmul_scratch_;
  kernels::ThreadPool& pool = *pool_;
  // Per-token element-wise work, parallel over token chunks for large batches.
  auto for_tokens = [&](auto&& fn) {
    constexpr int64_t kChunk = 16;
    if (T < 2 * kChunk) return fn(int64_t{0}, T);
    pool.ParallelFor((T + kChunk - 1) / kChunk,
                     [&](int64_t task, int) { fn(task * kChunk, std::min(T, (task + 1) * kChunk)); });
  };
  for_tokens([&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      kernels::RmsNorm(x + i * dim, layers_[layer_begin_].attn_norm.data(), c.rms_eps, xn + i * dim, dim);
  });
  for (int l = layer_begin_; l < layer_end_; ++l) {
    const Layer& L = layers_[l];
    const bool rotate = c.layer_uses_rope(l);
    const float* layer_cos_sin = swa_rope && c.layer_is_local(l) ? cos_sin_swa : cos_sin;
    const kernels::MatMulOutput qkv[] = {{&L.wq, q}, {&L.wk, k}, {&L.wv, v}};
    kernels::MatMulShared(qkv, xn, T, mm, pool);
    for_tokens([&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const float* cs = layer_cos_sin + i * c.rope_dim;
        if (c.attention_bias) {
          kernels::Axpy(1.0f, L.bq.data(), q + i * qd, qd);
          kernels::Axpy(1.0f, L.bk.data(), k + i * kvd, kvd);
          kernels::Axpy(1.0f, L.bv.data(), v + i * kvd, kvd);
        }
        if (c.qk_norm) {
          for (int h = 0; h < q_heads; ++h) {
            float* qh = q + i * qd + int64_t{h} * c.head_dim;
            kernels::RmsNorm(qh, L.q_norm.data(), c.rms_eps, qh, c.head_dim);
          }
          for (int h = 0; h < kv_heads; ++h) {
            float* kh = k + i * kvd + int64_t{h} * c.head_dim;
            kernels::RmsNorm(kh, L.k_norm.data(), c.rms_eps, kh, c.head_dim);
          }
        }
        if (rotate) {
          rope(q + i * qd, q_heads, c.head_dim, c.rope_dim, cs);
          rope(k + i * kvd, kv_heads, c.head_dim, c.rope_dim, cs);
        }
        kv.Write(l - layer_begin_, token_slot[i], k + i * kvd, v + i * kvd);
      }
    });
    Attention(l, seqs, kv, T);
    RS_RETURN_IF_ERROR(Project(L.wo, ws.attn.data(), qd, T, xn));
    for_tokens([&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (c.post_norms) kernels::RmsNorm(xn + i * dim, L.post_attn_norm.data(), c.rms_eps, xn + i * dim, dim);
        kernels::Axpy(c.residual_scale, xn + i * dim, x + i * dim, dim);  // residual
        kernels::RmsNorm(x + i * dim, L.ffn_norm.data(), c.rms_eps, xn + i * dim, dim);
      }
    });
    float* ffn_out = xn;
    if (c.moe()) {  // only the experts the tokens chose are read (moe.h)
      const MoeWeights moe{L.router, L.exp_gate, L.exp_up, L.exp_down, c.num_experts, c.experts_used, c.expert_ffn_dim};
      MoeFfn(moe, xn, T, dim, moe_out, ws.moe, mm, pool);
      ffn_out = moe_out;
    } else {
      const kernels::MatMulOutput gate_up[] = {{&L.w_gate, gate}, {&L.w_up, up}};
      kernels::MatMulShared(gate_up, xn, T, mm, pool);
      for_tokens([&](int64_t b, int64_t e) { activation(gate + b * ffn, up + b * ffn, gate + b * ffn, (e - b) * ffn); });
      RS_RETURN_IF_ERROR(Project(L.w_down, gate, ffn, T, xn));
    }
    const float* next_norm = l + 1 < layer_end_ ? layers_[l + 1].attn_norm.data() : nullptr;
    for_tokens([&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        float* o = ffn_out + i * dim;
        if (c.post_norms) kernels::RmsNorm(o, L.post_ffn_norm.data(), c.rms_eps, o, dim);
        kernels::Axpy(c.residual_scale, o, x + i * dim, dim);  // residual
        if (next_norm) kernels::RmsNorm(x + i * dim, next_norm, c.rms_eps, xn + i * dim, dim);
      }
    });
  }

  if (!last_stage()) {  // the next stage goes on from the residual stream
    std::copy(x, x + T * dim, options.hidden_out.begin());
    return Status::Ok();
  }
  if (options.all_logits) {
    for (int64_t i = 0; i < T; ++i) kernels::RmsNorm(x + i * dim, output_norm_.data(), c.rms_eps, xn + i * dim, dim);
    kernels::MatMul(output_, xn, T, logits.data(), mm, pool);
    ScaleLogits(logits);
    return Status::Ok();
  }
  float* last = Workspace::Ensure(ws.last, S * dim);
  int64_t end = 0;
  for (int64_t s = 0; s < S; ++s) {
    end += static_cast<int64_t>(seqs[s].new_tokens.size());
    kernels::RmsNorm(x + (end - 1) * dim, output_norm_.data(), c.rms_eps, last + s * dim, dim);
  }
  kernels::MatMul(output_, last, S, logits.data(), mm, pool);
  ScaleLogits(logits);
  return Status::Ok();
}

}  // namespace radixserve::model
