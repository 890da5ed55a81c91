// cuda_model_bench: CudaModel's speed on the medium generated model in F16 (not a test; ctest does
// not run it). Prints prefill tokens/s, decode tokens/s at several batch sizes with a cached
// context, one decode step's time split into GEMM, attention, other kernels and host work, and
// the fraction of the device's memory bandwidth the step reaches reading the weights once.
//   cuda_model_bench [--batches 1,32,256] [--cached 128] [--prefill 512] [--steps 20] [--hbm-tbs T]
// The split times the step's GEMMs, its attention calls and its other kernels (norms, RoPE,
// conversions, KV writes, activations, residual adds, as CudaModel::Forward enqueues them for the
// medium model) alone, with the step's shapes, one group at a time on one stream; "host" is the
// step minus the three: launches, the input copy, the logits copy and the host's own work. The
// bandwidth the weights' rate is compared with is measured here, device-to-device copies of 1 GiB
// counting the bytes read and written (as CUDA's bandwidthTest does), unless --hbm-tbs gives it
// in TB/s. "greedy tok/s" and "drawn tok/s": the same steps sampling
// on the device (ForwardOptions::sampling), greedy, then temperature 0.8 with top-k 40 and top-p
// 0.9 (a sort of every row), so no logits come back to the host. "graphs tok/s": the logits steps
// on a second model with decode graphs (CudaModelOptions::decode_graphs), after two untimed steps
// (the first runs eagerly, the second captures), so the timed ones replay.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "core/model/cuda_model.h"
#include "core/modelgen/model_generator.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/ops.h"

namespace rs = radixserve;
namespace cu = radixserve::cuda;
using Clock = std::chrono::steady_clock;

namespace {

int Fail(const rs::Status& s) {
  std::fprintf(stderr, "cuda_model_bench: %s\n", s.ToString().c_str());
  return 1;
}

std::vector<int> SplitInts(const std::string& s) {
  std::vector<int> out;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = std::min(s.find(',', at), s.size());
    out.push_back(std::atoi(s.substr(at, comma - at).c_str()));
    at = comma + 1;
  }
  return out;
}

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Bytes read and written per second by device-to-device copies of 1 GiB, best of 5 rounds of 4:
// the rate a step that reads its weights once could at best reach.
rs::Result<double> CopyBandwidth() {
  constexpr size_t kBytes = size_t{1} << 30;
  RS_ASSIGN_OR_RETURN(cu::DeviceBuffer a, cu::DeviceBuffer::Allocate(kBytes));
  RS_ASSIGN_OR_RETURN(cu::DeviceBuffer b, cu::DeviceBuffer::Allocate(kBytes));
  RS_RETURN_IF_ERROR(cu::CopyOnDevice(b.data(), a.data(), kBytes, nullptr));  // untimed: the first touches the pages
  RS_RETURN_IF_ERROR(cu::Synchronize(nullptr));
  double best = 1e9;
  for (int round = 0; round < 5; ++round) {
    const auto t0 = Clock::now();
    for (int i = 0; i < 4; ++i) RS_RETURN_IF_ERROR(cu::CopyOnDevice(b.data(), a.data(), kBytes, nullptr));
    RS_RETURN_IF_ERROR(cu::Synchronize(nullptr));
    best = std::min(best, Seconds(t0, Clock::now()) / 4);
  }
  return 2.0 * kBytes / best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string batches = "1,32,256";
  int cached = 128, prefill = 512, steps = 20;
  double hbm_tbs = 0;  // 0: measured
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--batches") batches = v;
    else if (k == "--cached") cached = std::atoi(v.c_str());
    else if (k == "--prefill") prefill = std::atoi(v.c_str());
    else if (k == "--steps") steps = std::max(1, std::atoi(v.c_str()));
    else if (k == "--hbm-tbs") hbm_tbs = std::atof(v.c_str());
    else return Fail(rs::Status::InvalidArgument("unknown flag " + k));
  }
  const std::vector<int> sizes = SplitInts(batches);
  const int max_batch = *std::max_element(sizes.begin(), sizes.end());

  const std::string path = std::filesystem::temp_directory_path() / "radixserve_cuda_bench_medium_f16.gguf";
  auto spec = rs::modelgen::SpecForSize("medium");
  if (!spec.ok()) return Fail(spec.status());
  spec->weights = rs::modelgen::WeightTypes::All(rs::gguf::TensorType::kF16);
  // Positions: the logits steps, then the greedy and the drawn ones, continuing.
  const int64_t row_len = std::max(prefill, cached + 3 * steps + 1);
  spec->context = std::max<uint32_t>(spec->context, static_cast<uint32_t>(row_len));
  if (rs::Status s = rs::modelgen::GenerateModel(*spec, path); !s.ok()) return Fail(s);
  auto file = rs::gguf::GgufFile::Open(path);
  if (!file.ok()) return Fail(file.status());
  std::shared_ptr<const rs::gguf::GgufFile> shared(std::move(file).value());
  const int64_t num_slots = int64_t{max_batch} * row_len;
  auto model = rs::model::CudaModel::Load(shared, {.device = 0, .kv_type = rs::model::KvType::kF16, .num_slots = num_slots});
  if (!model.ok()) return Fail(model.status());
  rs::model::CudaModel& m = **model;
  auto graphed_model = rs::model::CudaModel::Load(
      shared, {.device = 0, .kv_type = rs::model::KvType::kF16, .num_slots = num_slots, .decode_graphs = true});
  if (!graphed_model.ok()) return Fail(graphed_model.status());
  rs::model::CudaModel& g = **graphed_model;
  const rs::model::LlamaConfig& c = m.config();
  std::printf("device: %s\nmodel: medium F16, %s\n", m.Describe().c_str(), c.ToString().c_str());
  if (hbm_tbs > 0) {
    std::printf("memory bandwidth: %.2f TB/s (given)\n", hbm_tbs);
  } else {
    auto copy = CopyBandwidth();
    if (!copy.ok()) return Fail(copy.status());
    hbm_tbs = *copy / 1e12;
    std::printf("memory bandwidth: %.2f TB/s (device-to-device copies, read + write)\n", hbm_tbs);
  }

  // Each sequence b owns slots [b * row_len, (b + 1) * row_len).
  std::vector<std::vector<int32_t>> slots(max_batch), tokens(max_batch);
  for (int b = 0; b < max_batch; ++b) {
    slots[b].resize(row_len);
    std::iota(slots[b].begin(), slots[b].end(), static_cast<int32_t>(b * row_len));
    tokens[b].resize(row_len);
    for (int64_t i = 0; i < row_len; ++i) tokens[b][i] = static_cast<int32_t>(3 + (b * 7919 + i * 104729) % (c.vocab_size - 3));
  }
  std::vector<float> logits(static_cast<size_t>(max_batch) * c.vocab_size);

  {  // prefill: one sequence of `prefill` tokens, best of 3
    double best = 1e9;
    for (int r = 0; r < 3; ++r) {
      rs::model::SequenceInput s{0, std::span<const int32_t>(tokens[0].data(), prefill),
                                 std::span<const int32_t>(slots[0].data(), prefill)};
      const auto t0 = Clock::now();
      if (rs::Status st = m.Forward({&s, 1}, std::span<float>(logits.data(), c.vocab_size), {}); !st.ok()) return Fail(st);
      best = std::min(best, Seconds(t0, Clock::now()));
    }
    std::printf("| prefill %d | %.0f tok/s | %.2f ms |\n", prefill, prefill / best, best * 1e3);
  }

  // Weight bytes read once per decode step (F16 matrices).
  const double weight_bytes =
      2.0 * (double(c.num_layers) * (double(c.q_dim()) * c.dim * 2 + 2.0 * c.kv_dim() * c.dim + 3.0 * c.ffn_dim * c.dim) +
             double(c.vocab_size) * c.dim);
  std::printf("| batch | cached | decode tok/s | step ms | GEMM ms | attention ms | other kernels ms | host ms | "
              "weights GB/s | of bandwidth | greedy tok/s | drawn tok/s | graphs tok/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  auto gemm = cu::Gemm::Create(nullptr);
  if (!gemm.ok()) return Fail(gemm.status());
  for (int B : sizes) {
    // Fill the cached context of B sequences (prefill each), then time `steps` decode steps.
    for (int b = 0; b < B; ++b) {
      rs::model::SequenceInput s{0, std::span<const int32_t>(tokens[b].data(), cached),
                                 std::span<const int32_t>(slots[b].data(), cached)};
      if (rs::Status st = m.Forward({&s, 1}, std::span<float>(logits.data(), c.vocab_size), {}); !st.ok()) return Fail(st);
    }
    std::vector<rs::model::SequenceInput> seqs(B);
    double total = 0;
    for (int step = 0; step < steps; ++step) {
      for (int b = 0; b < B; ++b)
        seqs[b] = {cached + step, std::span<const int32_t>(tokens[b].data() + cached + step, 1),
                   std::span<const int32_t>(slots[b].data(), cached + step + 1)};
      const auto t0 = Clock::now();
      if (rs::Status st = m.Forward(seqs, std::span<float>(logits.data(), size_t(B) * c.vocab_size), {}); !st.ok())
        return Fail(st);
      total += Seconds(t0, Clock::now());
    }
    const double step_s = total / steps;
    // The same steps sampling on the device (no logits to the host), continuing: greedy, then drawn.
    std::vector<rs::sampling::RowSampling> sample_rows(B);
    std::vector<rs::sampling::RowSample> out(B);
    auto sampled_step_s = [&](int first_step) -> rs::Result<double> {
      const rs::model::DeviceSampling ds{sample_rows, {}, {}, out};
      rs::model::ForwardOptions on_device;
      on_device.sampling = &ds;
      double sampled_total = 0;
      for (int step = first_step; step < first_step + steps; ++step) {
        for (int b = 0; b < B; ++b) {
          seqs[b] = {cached + step, std::span<const int32_t>(tokens[b].data() + cached + step, 1),
                     std::span<const int32_t>(slots[b].data(), cached + step + 1)};
          sample_rows[b].uniform = (step * B + b) % 997 / 997.0;
        }
        const auto t0 = Clock::now();
        RS_RETURN_IF_ERROR(m.Forward(seqs, {}, on_device));
        sampled_total += Seconds(t0, Clock::now());
      }
      return sampled_total / steps;
    };
    auto greedy_step_s = sampled_step_s(steps);
    if (!greedy_step_s.ok()) return Fail(greedy_step_s.status());
    for (rs::sampling::RowSampling& r : sample_rows) {
      r.temperature = 0.8f;
      r.top_k = 40;
      r.top_p = 0.9f;
    }
    auto drawn_step_s = sampled_step_s(2 * steps);
    if (!drawn_step_s.ok()) return Fail(drawn_step_s.status());
    // The logits steps again on the graphed model, over its own copy of the cached context.
    double graphed_total = 0;
    for (int b = 0; b < B; ++b) {
      rs::model::SequenceInput s{0, std::span<const int32_t>(tokens[b].data(), cached),
                                 std::span<const int32_t>(slots[b].data(), cached)};
      if (rs::Status st = g.Forward({&s, 1}, std::span<float>(logits.data(), c.vocab_size), {}); !st.ok()) return Fail(st);
    }
    for (int step = -2; step < steps; ++step) {
      const int at = std::max(step, 0);  // the two untimed steps write the first timed position
      for (int b = 0; b < B; ++b)
        seqs[b] = {cached + at, std::span<const int32_t>(tokens[b].data() + cached + at, 1),
                   std::span<const int32_t>(slots[b].data(), cached + at + 1)};
      const auto t0 = Clock::now();
      if (rs::Status st = g.Forward(seqs, std::span<float>(logits.data(), size_t(B) * c.vocab_size), {}); !st.ok())
        return Fail(st);
      if (step >= 0) graphed_total += Seconds(t0, Clock::now());
    }
    const double graphed_step_s = graphed_total / steps;

    // The step's GEMMs alone: per layer q, k, v, o, gate, up, down, then the output, M = B.
    struct Shape {
      int64_t rows, cols, count;
    };
    const Shape shapes[] = {{c.q_dim(), c.dim, c.num_layers},     {c.kv_dim(), c.dim, 2 * c.num_layers},
                            {c.dim, c.q_dim(), c.num_layers},     {c.ffn_dim, c.dim, 2 * c.num_layers},
                            {c.dim, c.ffn_dim, c.num_layers},     {c.vocab_size, c.dim, 1}};
    int64_t max_w = 0, max_x = 0, max_y = 0;
    for (const Shape& s : shapes) {
      max_w = std::max(max_w, s.rows * s.cols);
      max_x = std::max(max_x, B * s.cols);
      max_y = std::max(max_y, B * s.rows);
    }
    auto w = cu::DeviceBuffer::Allocate(max_w * 2), x = cu::DeviceBuffer::Allocate(max_x * 2),
         y = cu::DeviceBuffer::Allocate(max_y * 4);
    if (!w.ok() || !x.ok() || !y.ok()) return Fail(rs::Status::ResourceExhausted("bench buffers"));
    auto time_gpu = [&](auto&& body) {
      (void)cu::Synchronize(nullptr);
      const auto t0 = Clock::now();
      for (int r = 0; r < steps; ++r) body();
      (void)cu::Synchronize(nullptr);
      return Seconds(t0, Clock::now()) / steps;
    };
    const double gemm_s = time_gpu([&] {
      for (const Shape& s : shapes)
        for (int64_t i = 0; i < s.count; ++i)
          (void)(*gemm)->F16(w->as<uint16_t>(), s.rows, s.cols, x->as<uint16_t>(), B, y->as<float>());
    });
    // Attention alone: B tokens at position `cached` over an F16 cache of the same size.
    auto kbuf = cu::DeviceBuffer::Allocate(size_t(B) * row_len * c.kv_dim() * 2);
    auto vbuf = cu::DeviceBuffer::Allocate(size_t(B) * row_len * c.kv_dim() * 2);
    auto q = cu::DeviceBuffer::Allocate(size_t(B) * c.q_dim() * 4), o = cu::DeviceBuffer::Allocate(size_t(B) * c.q_dim() * 4);
    std::vector<int32_t> rows(size_t(B) * row_len), tok_row(B), tok_pos(B, cached);
    for (int b = 0; b < B; ++b) {
      std::copy(slots[b].begin(), slots[b].end(), rows.begin() + size_t(b) * row_len);
      tok_row[b] = b;
    }
    auto d_rows = cu::DeviceBuffer::Allocate(rows.size() * 4), d_row = cu::DeviceBuffer::Allocate(B * 4),
         d_pos = cu::DeviceBuffer::Allocate(B * 4);
    if (!kbuf.ok() || !vbuf.ok() || !q.ok() || !o.ok() || !d_rows.ok() || !d_row.ok() || !d_pos.ok())
      return Fail(rs::Status::ResourceExhausted("bench buffers"));
    (void)cu::CopyToDevice(d_rows->data(), rows.data(), rows.size() * 4, nullptr);
    (void)cu::CopyToDevice(d_row->data(), tok_row.data(), B * 4, nullptr);
    (void)cu::CopyToDevice(d_pos->data(), tok_pos.data(), B * 4, nullptr);
    const cu::PagedKvLayer layer{kbuf->data(), vbuf->data(), c.kv_dim(), true};
    const cu::AttentionShape shape{c.num_heads, c.num_kv_heads, c.head_dim, 0,
                                   1.0f / std::sqrt(static_cast<float>(c.head_dim))};
    const double attn_s = time_gpu([&] {
      for (int l = 0; l < c.num_layers; ++l)
        (void)cu::PagedAttention(q->as<float>(), B, layer, shape, d_rows->as<int32_t>(), row_len, d_row->as<int32_t>(),
                                 d_pos->as<int32_t>(), o->as<float>(), nullptr);
    });
    // The other kernels alone: the step's sequence of them for a llama-family model without
    // biases (the medium model), B tokens, the KV writes into slots 0..B-1.
    const int64_t widest = std::max({int64_t{c.dim}, int64_t{c.q_dim()}, int64_t{c.ffn_dim}});
    auto f1 = cu::DeviceBuffer::Allocate(size_t(B) * widest * 4), f2 = cu::DeviceBuffer::Allocate(size_t(B) * widest * 4),
         f3 = cu::DeviceBuffer::Allocate(size_t(B) * widest * 4), norm_w = cu::DeviceBuffer::Allocate(size_t(c.dim) * 4),
         cos_sin = cu::DeviceBuffer::Allocate(size_t(B) * std::max(c.rope_dim, 2) * 4);
    if (!f1.ok() || !f2.ok() || !f3.ok() || !norm_w.ok() || !cos_sin.ok())
      return Fail(rs::Status::ResourceExhausted("bench buffers"));
    float *a = f1->as<float>(), *b2 = f2->as<float>(), *b3 = f3->as<float>(), *nw = norm_w->as<float>();
    const std::vector<float> ones(c.dim, 1.0f);  // norm weights, and RoPE frequencies that keep angles small
    (void)cu::CopyToDevice(nw, ones.data(), ones.size() * 4, nullptr);
    float* cs = cos_sin->as<float>();
    uint16_t* h = x->as<uint16_t>();
    const int32_t* ids = d_row->as<int32_t>();  // 0..B-1: token ids, slots and rows alike
    const double other_s = time_gpu([&] {
      (void)cu::EmbedRowsF16(w->as<uint16_t>(), ids, B, c.dim, c.embedding_scale, a, nullptr);
      (void)cu::RopeAngles(d_pos->as<int32_t>(), B, nw, c.rope_dim / 2, c.rope_linear_scale, cs, nullptr);
      (void)cu::RmsNorm(a, nw, c.rms_eps, b2, B, c.dim, nullptr);
      for (int l = 0; l < c.num_layers; ++l) {
        (void)cu::ConvertF32ToF16(b2, h, int64_t{B} * c.dim, nullptr);
        (void)cu::Rope(b3, B, c.num_heads, c.head_dim, c.rope_dim, cs, false, nullptr);
        (void)cu::Rope(b2, B, c.num_kv_heads, c.head_dim, c.rope_dim, cs, false, nullptr);
        (void)cu::KvScatter(b2, b3, ids, B, c.kv_dim(), kbuf->data(), vbuf->data(), true, nullptr);
        (void)cu::ConvertF32ToF16(b3, h, int64_t{B} * c.q_dim(), nullptr);
        (void)cu::Add(b2, a, int64_t{B} * c.dim, nullptr);
        (void)cu::RmsNorm(a, nw, c.rms_eps, b2, B, c.dim, nullptr);
        (void)cu::ConvertF32ToF16(b2, h, int64_t{B} * c.dim, nullptr);
        (void)cu::SiluMul(b2, b3, b2, int64_t{B} * c.ffn_dim, nullptr);
        (void)cu::ConvertF32ToF16(b2, h, int64_t{B} * c.ffn_dim, nullptr);
        (void)cu::Add(b3, a, int64_t{B} * c.dim, nullptr);
        if (l + 1 < c.num_layers) (void)cu::RmsNorm(a, nw, c.rms_eps, b2, B, c.dim, nullptr);
      }
      (void)cu::GatherRows(a, ids, B, c.dim, b3, nullptr);
      (void)cu::RmsNorm(b3, nw, c.rms_eps, b2, B, c.dim, nullptr);
      (void)cu::ConvertF32ToF16(b2, h, int64_t{B} * c.dim, nullptr);
    });
    const double gbs = weight_bytes / step_s / 1e9;
    std::printf("| %d | %d | %.0f | %.3f | %.3f | %.3f | %.3f | %.3f | %.0f | %.1f %% | %.0f | %.0f | %.0f |\n", B,
                cached, B / step_s, step_s * 1e3, gemm_s * 1e3, attn_s * 1e3, other_s * 1e3,
                (step_s - gemm_s - attn_s - other_s) * 1e3, gbs, 100.0 * gbs / (hbm_tbs * 1e3), B / *greedy_step_s,
                B / *drawn_step_s, B / graphed_step_s);
  }
  std::filesystem::remove(path);
  return 0;
}
