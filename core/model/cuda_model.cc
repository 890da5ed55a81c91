#include "core/model/cuda_model.h"

#include <glog/logging.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "core/model/decode_graph_cache.h"
#include "core/model/step_staging.h"
#include "core/model/weights.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/graph.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/sampling.h"

namespace radixserve::model {

namespace cu = radixserve::cuda;
using kernels::WeightType;
using kernels::WeightView;

namespace {

constexpr float kF16Max = 65504.0f;

struct DeviceMatrix {  // F16 [rows][cols]
  cu::DeviceBuffer buf;
  int64_t rows = 0, cols = 0;
  const uint16_t* data() const { return buf.as<const uint16_t>(); }
};

// Uploads w as F16 in chunks of rows, so that a large matrix never needs a whole F32 copy on the host.
Result<DeviceMatrix> UploadMatrix(const std::string& name, const WeightView& w, cu::Stream stream) {
  DeviceMatrix m;
  m.rows = w.rows;
  m.cols = w.cols;
  RS_ASSIGN_OR_RETURN(m.buf, cu::DeviceBuffer::Allocate(static_cast<size_t>(w.rows * w.cols) * 2));
  const int64_t chunk_rows = std::max<int64_t>(1, (int64_t{1} << 22) / w.cols);
  std::vector<float> f32;
  std::vector<uint16_t> f16;
  for (int64_t r = 0; r < w.rows; r += chunk_rows) {
    const int64_t n = std::min(chunk_rows, w.rows - r), elems = n * w.cols;
    const void* src = static_cast<const uint8_t*>(w.data) + r * w.row_bytes();
    if (w.type != WeightType::kF16) {
      f32.resize(elems);
      f16.resize(elems);
      kernels::DequantizeRows(w, r, r + n, f32.data());
      for (int64_t i = 0; i < elems; ++i)
        if (!(std::fabs(f32[i]) <= kF16Max))
          return Status::Unsupported(name + ": value " + std::to_string(f32[i]) + " at row " +
                                     std::to_string(r + i / w.cols) + " does not fit the GPU's F16 weights");
      kernels::ConvertF32ToF16(f32.data(), f16.data(), elems);
      src = f16.data();
    }
    RS_RETURN_IF_ERROR(cu::CopyToDevice(m.buf.as<uint16_t>() + r * w.cols, src, static_cast<size_t>(elems) * 2, stream));
    RS_RETURN_IF_ERROR(cu::Synchronize(stream));  // the staging vectors are refilled by the next chunk
  }
  return m;
}

Result<cu::DeviceBuffer> UploadFloats(const std::vector<float>& v, cu::Stream stream) {
  RS_ASSIGN_OR_RETURN(cu::DeviceBuffer b, cu::DeviceBuffer::Allocate(v.size() * sizeof(float)));
  RS_RETURN_IF_ERROR(cu::CopyToDevice(b.data(), v.data(), v.size() * sizeof(float), stream));
  RS_RETURN_IF_ERROR(cu::Synchronize(stream));
  return b;
}

// Decode graphs: slot rows padded to this many slots, so that one graph serves a sequence's
// steps until its context passes the next multiple; and at most this many graphs kept (the
// least recently run gives way).
constexpr int64_t kGraphRowAlign = 256;
constexpr size_t kMaxDecodeGraphs = 64;

// The features of LlamaConfig this forward pass does not compute yet, refused by architecture
// rather than run wrongly (the CPU model runs them).
Status CheckCudaRuns(const gguf::GgufFile& file, const LlamaConfig& c) {
  std::string missing;
  if (c.qk_norm) missing = "per-head q/k RMSNorm";
  if (c.residual_scale != 1.0f || c.logit_scale != 1.0f || !c.rope_enabled)
    missing = "residual and logit multipliers, RoPE switch";
  if (c.post_norms || c.attn_softcap > 0.0f || c.final_softcap > 0.0f || c.swa_period > 0 || c.swa_rope_differs() ||
      c.ffn_activation == FfnActivation::kGeluTanhF16Table)
    missing = "post-norms, soft-capping, per-layer sliding window and RoPE, fp16-table GELU";
  if (c.moe()) missing = "mixture of experts";
  // Partial rotary (rope_dim < head_dim) runs: the RoPE kernel leaves dimensions >= rope_dim as they are.
  if (c.rope_long_short_factors || c.rope_attn_factor != 1.0f)
    missing = "LongRoPE factors rope_factors_short/long.weight and rope.scaling.attn_factor";
  if (missing.empty()) return Status::Ok();
  return Status::Unsupported(file.name() + ": architecture '" + c.architecture +
                             "' is not supported by the CUDA backend (" + missing + "); run it on the CPU");
}

}  // namespace

struct CudaModel::Impl {
  struct Layer {
    DeviceMatrix wq, wk, wv, wo, gate, up, down;
    cu::DeviceBuffer attn_norm, ffn_norm, bq, bk, bv;
  };
  cu::OwnedStream stream;
  std::unique_ptr<cu::Gemm> gemm;
  DeviceMatrix token_embd, output_own;
  const DeviceMatrix* output = nullptr;  // &output_own, or &token_embd when tied
  cu::DeviceBuffer output_norm, rope_inv_freq;
  std::vector<Layer> layers;
  cu::DeviceBuffer k_cache, v_cache;  // [layers][slots][kv_dim]
  // Per-step scratch.
  cu::PinnedBuffer staging;  // the step's int32 inputs, copied in with one transfer
  cu::DeviceBuffer ints, x, xn, half, q, k, v, attn, gate, up, cos_sin, last, logits, samples;
  cu::SampleWorkspace sample_ws;
  // Decode graphs by shape: valid while the scratch they name is the scratch of `graph_scratch`.
  bool graphs_on = false;
  DecodeGraphCache<cu::StepGraph> graphs{kMaxDecodeGraphs};
  std::array<const void*, 13> graph_scratch{};
  int64_t graph_replays = 0, graphs_captured = 0;

  std::array<const void*, 13> Scratch() const {
    return {ints.data(), x.data(), xn.data(), half.data(), q.data(), k.data(), v.data(),
            attn.data(), gate.data(), up.data(), cos_sin.data(), last.data(), logits.data()};
  }

  // Runs a decode step's layers (`layers` enqueues them) from its graph, capturing it if due.
  // An evicted graph may still be in flight: CUDA frees an executable graph when it completes.
  Status RunDecode(DecodeShape shape, const std::function<Status()>& layers) {
    if (Scratch() != graph_scratch) {  // a buffer grew: the graphs name freed memory
      graphs.DropGraphs();
      graph_scratch = Scratch();
    }
    cu::StepGraph* graph = graphs.Find(shape);
    if (graph == nullptr) {
      if (!graphs.DueForCapture(shape)) return layers();
      Result<cu::StepGraph> g = cu::StepGraph::Capture(stream.get(), layers);
      if (!g.ok()) {
        graphs_on = false;
        graphs.DropGraphs();
        LOG(WARNING) << "cuda: decode graphs off, steps run kernel by kernel: " << g.status().ToString();
        return layers();
      }
      graph = graphs.Insert(shape, std::move(g).value());
      ++graphs_captured;
    }
    ++graph_replays;
    return graph->Launch(stream.get());
  }

  Status Project(const DeviceMatrix& w, const float* in, int64_t T, float* out) {
    RS_RETURN_IF_ERROR(cu::ConvertF32ToF16(in, half.as<uint16_t>(), T * w.cols, stream.get()));
    return gemm->F16(w.data(), w.rows, w.cols, half.as<const uint16_t>(), T, out);
  }
};

CudaModel::CudaModel() : impl_(std::make_unique<Impl>()) {}
CudaModel::~CudaModel() = default;

Result<std::unique_ptr<CudaModel>> CudaModel::Load(std::shared_ptr<const gguf::GgufFile> file,
                                                   const CudaModelOptions& options) {
  if (!file) return Status::InvalidArgument("CudaModel::Load: no GGUF file");
  if (options.num_slots <= 0 || options.num_slots > INT32_MAX)
    return Status::InvalidArgument("CudaModel::Load: num_slots must be in [1, 2^31), got " +
                                   std::to_string(options.num_slots));
  const int devices = cu::DeviceCount();
  if (devices == 0) return Status::Unavailable("no CUDA device (" + cu::NoDeviceReason() + ")");
  if (options.device < 0 || options.device >= devices)
    return Status::InvalidArgument("CUDA device " + std::to_string(options.device) + " does not exist (" +
                                   std::to_string(devices) + " found)");
  RS_RETURN_IF_ERROR(cu::SetDevice(options.device));
  RS_ASSIGN_OR_RETURN(cu::DeviceInfo info, cu::GetDeviceInfo(options.device));

  std::unique_ptr<CudaModel> m(new CudaModel());
  m->device_name_ = info.name + " (sm_" + std::to_string(info.major * 10 + info.minor) + ", " +
                    std::to_string(info.sm_count) + " SMs, " + std::to_string(info.total_bytes >> 30) + " GiB)";
  m->num_slots_ = options.num_slots;
  m->device_ = options.device;
  if (options.kv_type != KvType::kF16 && options.kv_type != KvType::kF32)
    return Status::Unsupported(std::string("device:=cuda holds its KV cache as f16 or f32; kv_type ") +
                               KvTypeName(options.kv_type) + " runs on the CPU only");
  m->kv_type_ = options.kv_type;
  m->impl_->graphs_on = options.decode_graphs;
  RS_ASSIGN_OR_RETURN(m->config_, LlamaConfig::FromGguf(*file));
  const LlamaConfig& c = m->config_;
  if (c.head_dim > cu::kMaxAttentionHeadDim)
    return Status::Unsupported(file->name() + ": head size " + std::to_string(c.head_dim) +
                               " exceeds the CUDA attention kernel's " + std::to_string(cu::kMaxAttentionHeadDim));
  RS_RETURN_IF_ERROR(CheckCudaRuns(*file, c));
  RS_ASSIGN_OR_RETURN(LlamaWeights w, LoadLlamaWeights(*file, c));

  Impl& im = *m->impl_;
  RS_ASSIGN_OR_RETURN(im.stream, cu::OwnedStream::Create());
  const cu::Stream s = im.stream.get();
  RS_ASSIGN_OR_RETURN(im.gemm, cu::Gemm::Create(s));
  RS_ASSIGN_OR_RETURN(im.token_embd, UploadMatrix("token_embd.weight", w.token_embd, s));
  if (c.tied_output) {
    im.output = &im.token_embd;
  } else {
    RS_ASSIGN_OR_RETURN(im.output_own, UploadMatrix("output.weight", w.output, s));
    im.output = &im.output_own;
  }
  RS_ASSIGN_OR_RETURN(im.output_norm, UploadFloats(w.output_norm, s));
  RS_ASSIGN_OR_RETURN(im.rope_inv_freq, UploadFloats(w.rope_inv_freq, s));
  im.layers.resize(c.num_layers);
  for (int l = 0; l < c.num_layers; ++l) {
    const LayerWeights& L = w.layers[l];
    Impl::Layer& D = im.layers[l];
    const std::string p = "blk." + std::to_string(l) + ".";
    RS_ASSIGN_OR_RETURN(D.wq, UploadMatrix(p + "attn_q", L.wq, s));
    RS_ASSIGN_OR_RETURN(D.wk, UploadMatrix(p + "attn_k", L.wk, s));
    RS_ASSIGN_OR_RETURN(D.wv, UploadMatrix(p + "attn_v", L.wv, s));
    RS_ASSIGN_OR_RETURN(D.wo, UploadMatrix(p + "attn_output", L.wo, s));
    RS_ASSIGN_OR_RETURN(D.gate, UploadMatrix(p + "ffn_gate", L.w_gate, s));
    RS_ASSIGN_OR_RETURN(D.up, UploadMatrix(p + "ffn_up", L.w_up, s));
    RS_ASSIGN_OR_RETURN(D.down, UploadMatrix(p + "ffn_down", L.w_down, s));
    RS_ASSIGN_OR_RETURN(D.attn_norm, UploadFloats(L.attn_norm, s));
    RS_ASSIGN_OR_RETURN(D.ffn_norm, UploadFloats(L.ffn_norm, s));
    if (c.attention_bias) {
      RS_ASSIGN_OR_RETURN(D.bq, UploadFloats(L.bq, s));
      RS_ASSIGN_OR_RETURN(D.bk, UploadFloats(L.bk, s));
      RS_ASSIGN_OR_RETURN(D.bv, UploadFloats(L.bv, s));
    }
  }
  const size_t elem = m->kv_type_ == KvType::kF16 ? 2 : 4;
  const size_t kv_bytes = static_cast<size_t>(c.num_layers) * options.num_slots * c.kv_dim() * elem;
  RS_ASSIGN_OR_RETURN(im.k_cache, cu::DeviceBuffer::Allocate(kv_bytes));
  RS_ASSIGN_OR_RETURN(im.v_cache, cu::DeviceBuffer::Allocate(kv_bytes));
  return m;
}

Status CudaModel::Forward(std::span<const SequenceInput> seqs, std::span<float> logits, const ForwardOptions& options) {
  if (!options.hidden_in.empty() || !options.hidden_out.empty())
    return Status::Unsupported("Forward: the CUDA backend does not run pipeline stages yet");
  int64_t T = 0;
  const LlamaConfig& c = config_;
  RS_RETURN_IF_ERROR(ValidateSequences(c, seqs, num_slots_, &T));
  RS_RETURN_IF_ERROR(cu::SetDevice(device_));  // Forward may run on another thread than Load
  const int64_t S = static_cast<int64_t>(seqs.size());
  const int64_t out_rows = options.all_logits ? T : S;
  const DeviceSampling* ds = options.sampling;
  if (ds != nullptr) {
    RS_RETURN_IF_ERROR(ValidateDeviceSampling(*ds, out_rows, logits.size()));
  } else if (static_cast<int64_t>(logits.size()) != out_rows * c.vocab_size) {
    return Status::InvalidArgument("Forward: logits has " + std::to_string(logits.size()) + " floats, expected " +
                                   std::to_string(out_rows * c.vocab_size));
  }
  Impl& im = *impl_;
  const cu::Stream st = im.stream.get();

  // The step's inputs (step_staging.h), all in one transfer.
  const bool graph_step = im.graphs_on && !options.all_logits && T == S;  // one new token a sequence
  const StepStaging layout = StepStaging::Plan(seqs, T, graph_step ? kGraphRowAlign : 1, ds);
  const int64_t row_stride = layout.row_stride;
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.staging, layout.bytes));
  layout.Pack(seqs, ds, im.staging.data());

  const int64_t dim = c.dim, qd = c.q_dim(), kvd = c.kv_dim(), ffn = c.ffn_dim;
  const int64_t widest = std::max({dim, qd, ffn});
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.ints, layout.bytes));
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.x, T * dim * sizeof(float)));
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.xn, T * dim * sizeof(float)));
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.half, T * widest * sizeof(uint16_t)));
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.q, T * qd * sizeof(float)));
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.k, T * kvd * sizeof(float)));
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.v, T * kvd * sizeof(float)));
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.attn, T * qd * sizeof(float)));
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.gate, T * ffn * sizeof(float)));
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.up, T * ffn * sizeof(float)));
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.cos_sin, T * std::max(c.rope_dim, 2) * sizeof(float)));
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.last, S * dim * sizeof(float)));
  RS_RETURN_IF_ERROR(cu::GrowBuffer(im.logits, out_rows * c.vocab_size * sizeof(float)));
  RS_RETURN_IF_ERROR(cu::CopyToDevice(im.ints.data(), im.staging.data(), layout.bytes, st));
  const int32_t* d = im.ints.as<const int32_t>();
  const int32_t *d_tokens = d, *d_pos = d + layout.positions_at(), *d_seq = d + layout.token_seq_at();
  const int32_t *d_slot = d + layout.token_slot_at(), *d_last = d + layout.last_index_at(), *d_rows = d + layout.rows_at();

  float *x = im.x.as<float>(), *xn = im.xn.as<float>(), *q = im.q.as<float>(), *k = im.k.as<float>();
  float *v = im.v.as<float>(), *attn = im.attn.as<float>(), *gate = im.gate.as<float>(), *up = im.up.as<float>();
  float* cos_sin = im.cos_sin.as<float>();
  const bool neox = c.rope_style == RopeStyle::kNeox;
  const size_t elem = kv_type_ == KvType::kF16 ? 2 : 4;
  const size_t layer_bytes = static_cast<size_t>(num_slots_) * kvd * elem;
  const cu::AttentionShape shape{c.num_heads, c.num_kv_heads, c.head_dim, c.sliding_window,
                                 c.softmax_scale()};

  // Everything from the token ids to the logits, enqueued on the stream (or recorded into a graph).
  auto layers = [&]() -> Status {
    RS_RETURN_IF_ERROR(cu::EmbedRowsF16(im.token_embd.data(), d_tokens, T, dim, c.embedding_scale, x, st));
    RS_RETURN_IF_ERROR(cu::RopeAngles(d_pos, T, im.rope_inv_freq.as<float>(), c.rope_dim / 2, c.rope_linear_scale,
                                      cos_sin, st));
    RS_RETURN_IF_ERROR(cu::RmsNorm(x, im.layers[0].attn_norm.as<float>(), c.rms_eps, xn, T, dim, st));
    for (int l = 0; l < c.num_layers; ++l) {
      const Impl::Layer& L = im.layers[l];
      RS_RETURN_IF_ERROR(cu::ConvertF32ToF16(xn, im.half.as<uint16_t>(), T * dim, st));
      const uint16_t* xh = im.half.as<const uint16_t>();
      RS_RETURN_IF_ERROR(im.gemm->F16(L.wq.data(), qd, dim, xh, T, q));
      RS_RETURN_IF_ERROR(im.gemm->F16(L.wk.data(), kvd, dim, xh, T, k));
      RS_RETURN_IF_ERROR(im.gemm->F16(L.wv.data(), kvd, dim, xh, T, v));
      if (c.attention_bias) {
        RS_RETURN_IF_ERROR(cu::AddBias(q, L.bq.as<float>(), T, qd, st));
        RS_RETURN_IF_ERROR(cu::AddBias(k, L.bk.as<float>(), T, kvd, st));
        RS_RETURN_IF_ERROR(cu::AddBias(v, L.bv.as<float>(), T, kvd, st));
      }
      if (c.layer_uses_rope(l)) {  // smollm3 leaves every 4th layer unrotated
        RS_RETURN_IF_ERROR(cu::Rope(q, T, c.num_heads, c.head_dim, c.rope_dim, cos_sin, neox, st));
        RS_RETURN_IF_ERROR(cu::Rope(k, T, c.num_kv_heads, c.head_dim, c.rope_dim, cos_sin, neox, st));
      }
      uint8_t* k_layer = im.k_cache.as<uint8_t>() + l * layer_bytes;
      uint8_t* v_layer = im.v_cache.as<uint8_t>() + l * layer_bytes;
      RS_RETURN_IF_ERROR(cu::KvScatter(k, v, d_slot, T, kvd, k_layer, v_layer, kv_type_ == KvType::kF16, st));
      const cu::PagedKvLayer kv{k_layer, v_layer, kvd, kv_type_ == KvType::kF16};
      RS_RETURN_IF_ERROR(cu::PagedAttention(q, T, kv, shape, d_rows, row_stride, d_seq, d_pos, attn, st));
      RS_RETURN_IF_ERROR(im.Project(L.wo, attn, T, xn));
      RS_RETURN_IF_ERROR(cu::Add(xn, x, T * dim, st));  // residual
      RS_RETURN_IF_ERROR(cu::RmsNorm(x, L.ffn_norm.as<float>(), c.rms_eps, xn, T, dim, st));
      RS_RETURN_IF_ERROR(cu::ConvertF32ToF16(xn, im.half.as<uint16_t>(), T * dim, st));
      RS_RETURN_IF_ERROR(im.gemm->F16(L.gate.data(), ffn, dim, xh, T, gate));
      RS_RETURN_IF_ERROR(im.gemm->F16(L.up.data(), ffn, dim, xh, T, up));
      RS_RETURN_IF_ERROR(c.ffn_activation == FfnActivation::kGeluTanh ? cu::GeluMul(gate, up, gate, T * ffn, st)
                                                                       : cu::SiluMul(gate, up, gate, T * ffn, st));
      RS_RETURN_IF_ERROR(im.Project(L.down, gate, T, xn));
      RS_RETURN_IF_ERROR(cu::Add(xn, x, T * dim, st));  // residual
      if (l + 1 < c.num_layers)
        RS_RETURN_IF_ERROR(cu::RmsNorm(x, im.layers[l + 1].attn_norm.as<float>(), c.rms_eps, xn, T, dim, st));
    }
    const float* final_in = x;
    if (!options.all_logits) {
      RS_RETURN_IF_ERROR(cu::GatherRows(x, d_last, S, dim, im.last.as<float>(), st));
      final_in = im.last.as<float>();
    }
    RS_RETURN_IF_ERROR(cu::RmsNorm(final_in, im.output_norm.as<float>(), c.rms_eps, xn, out_rows, dim, st));
    return im.Project(*im.output, xn, out_rows, im.logits.as<float>());
  };
  RS_RETURN_IF_ERROR(graph_step ? im.RunDecode({.sequences = S, .row_width = row_stride}, layers) : layers());
  if (ds != nullptr) {
    const uint8_t* staged = im.ints.as<const uint8_t>();
    const cu::SampleRowsInput in{ds->rows.data(), out_rows, reinterpret_cast<const sampling::RowSampling*>(staged + layout.sampling_rows),
                                 reinterpret_cast<const sampling::TokenCount*>(staged + layout.counts),
                                 reinterpret_cast<const int32_t*>(staged + layout.suppressed), c.vocab_size};
    // Structured output: the rows' grammar masks come first, so every later cut sees them.
    if (!ds->token_masks.empty())
      RS_RETURN_IF_ERROR(cu::ApplyTokenBitmask(im.logits.as<float>(), reinterpret_cast<const uint32_t*>(staged + layout.token_masks),
                                               out_rows, c.vocab_size, ds->mask_words, st));
    RS_RETURN_IF_ERROR(cu::GrowBuffer(im.samples, out_rows * sizeof(sampling::RowSample)));
    RS_RETURN_IF_ERROR(cu::SampleRows(im.logits.as<float>(), in, im.sample_ws, im.samples.as<sampling::RowSample>(), st));
    RS_RETURN_IF_ERROR(cu::CopyToHost(ds->out.data(), im.samples.data(), out_rows * sizeof(sampling::RowSample), st));
  } else {
    RS_RETURN_IF_ERROR(cu::CopyToHost(logits.data(), im.logits.data(), logits.size() * sizeof(float), st));
  }
  return cu::Synchronize(st);
}

Status CudaModel::ReadKv(int layer, int64_t slot, std::vector<float>* k, std::vector<float>* v) const {
  if (layer < 0 || layer >= config_.num_layers || slot < 0 || slot >= num_slots_)
    return Status::OutOfRange("ReadKv: layer " + std::to_string(layer) + " slot " + std::to_string(slot));
  RS_RETURN_IF_ERROR(cu::SetDevice(device_));
  const Impl& im = *impl_;
  const int64_t kvd = config_.kv_dim();
  const size_t elem = kv_type_ == KvType::kF16 ? 2 : 4;
  const size_t offset = (static_cast<size_t>(layer) * num_slots_ + slot) * kvd * elem;
  std::vector<uint8_t> kb(kvd * elem), vb(kvd * elem);
  RS_RETURN_IF_ERROR(cu::CopyToHost(kb.data(), im.k_cache.as<uint8_t>() + offset, kb.size(), im.stream.get()));
  RS_RETURN_IF_ERROR(cu::CopyToHost(vb.data(), im.v_cache.as<uint8_t>() + offset, vb.size(), im.stream.get()));
  RS_RETURN_IF_ERROR(cu::Synchronize(im.stream.get()));
  k->resize(kvd);
  v->resize(kvd);
  for (int64_t i = 0; i < kvd; ++i) {
    if (elem == 2) {
      (*k)[i] = kernels::Fp16ToFp32(reinterpret_cast<const uint16_t*>(kb.data())[i]);
      (*v)[i] = kernels::Fp16ToFp32(reinterpret_cast<const uint16_t*>(vb.data())[i]);
    } else {
      (*k)[i] = reinterpret_cast<const float*>(kb.data())[i];
      (*v)[i] = reinterpret_cast<const float*>(vb.data())[i];
    }
  }
  return Status::Ok();
}

int64_t CudaModel::graph_replays() const { return impl_->graph_replays; }
int64_t CudaModel::graphs_captured() const { return impl_->graphs_captured; }

std::string CudaModel::Describe() const {
  return "cuda: " + device_name_ + (impl_->graphs_on ? ", decode graphs" : "");
}

}  // namespace radixserve::model
