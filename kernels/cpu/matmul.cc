#include "kernels/cpu/matmul.h"

#include <algorithm>

#include "kernels/cpu/blas.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/matmul_stream.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/vec_ops.h"

namespace radixserve::kernels {
namespace {

constexpr int64_t kStreamRowsPerTask = 32;
constexpr int64_t kGemmMinRowsPerTask = 64;
constexpr int64_t kGemmMaxRowsPerTask = 512;

const uint8_t* RowPtr(const WeightView& w, int64_t r) {
  return static_cast<const uint8_t*>(w.data) + r * w.row_bytes();
}

}  // namespace

float* MatMulScratch::ThreadTile(int thread, int64_t floats) {
  Buffer& b = per_thread_[thread];
  if (b.size < floats) {
    b.data.reset(new float[floats]);
    b.size = floats;
  }
  return b.data.get();
}

void* MatMulScratch::Quantized(int64_t bytes) {
  if (quantized_size_ < bytes) {
    quantized_.reset(new uint8_t[bytes]);
    quantized_size_ = bytes;
  }
  return quantized_.get();
}

void SetBlasThreads(int n) { GetBlas().SetThreads(n); }

namespace {
// The parts of a QuantizedActivations buffer, each 64-byte aligned.
struct ActivationLayout {
  int64_t quarter_sums, total;
  ActivationLayout(int64_t n, int64_t cols) {
    auto up = [](int64_t v) { return (v + 63) / 64 * 64; };
    const int64_t nb = n * (cols / kQ8BlockSize);
    quarter_sums = up(nb * static_cast<int64_t>(sizeof(BlockQ8_0)));
    total = quarter_sums + up(nb * 8 * 4);
  }
};
}  // namespace

int64_t QuantizedActivationsBytes(int64_t n, int64_t cols) { return ActivationLayout(n, cols).total; }

QuantizedActivations QuantizeActivations(const float* x, int64_t n, int64_t cols, void* buffer) {
  const ActivationLayout layout(n, cols);
  auto* base = static_cast<uint8_t*>(buffer);
  auto* blocks = reinterpret_cast<BlockQ8_0*>(base);
  auto* sums = reinterpret_cast<float*>(base + layout.quarter_sums);
  const int64_t nb = cols / kQ8BlockSize;
  for (int64_t t = 0; t < n; ++t) QuantizeRowQ8_0(x + t * cols, blocks + t * nb, cols);
  for (int64_t b = 0; b < n * nb; ++b) {
    int s0 = 0, s1 = 0;
    for (int i = 0; i < 16; ++i) s0 += blocks[b].qs[i], s1 += blocks[b].qs[i + 16];
    const float d = Fp16ToFp32(blocks[b].d);
    for (int i = 0; i < 4; ++i) sums[8 * b + i] = d * 0.25f * static_cast<float>(s0);
    for (int i = 4; i < 8; ++i) sums[8 * b + i] = d * 0.25f * static_cast<float>(s1);
  }
  return {blocks, sums};
}

void DequantizeRows(const WeightView& w, int64_t row_begin, int64_t row_end, float* out) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    float* dst = out + (r - row_begin) * w.cols;
    const uint8_t* src = RowPtr(w, r);
    switch (w.type) {
      case WeightType::kF32: std::copy_n(reinterpret_cast<const float*>(src), w.cols, dst); break;
      case WeightType::kF16: ConvertF16ToF32(reinterpret_cast<const uint16_t*>(src), dst, w.cols); break;
      case WeightType::kBF16: ConvertBf16ToF32(reinterpret_cast<const uint16_t*>(src), dst, w.cols); break;
      default: DequantizeBlocks(w.type, src, dst, w.cols); break;
    }
  }
}

void MatMul(const WeightView& w, const float* x, int64_t n, float* y, MatMulScratch& scratch,
            ThreadPool& pool) {
  const MatMulOutput out{&w, y};
  MatMulShared(std::span<const MatMulOutput>(&out, 1), x, n, scratch, pool);
}

void MatMulShared(std::span<const MatMulOutput> outputs, const float* x, int64_t n, MatMulScratch& scratch,
                  ThreadPool& pool) {
  if (n <= 0 || outputs.empty()) return;
  const WeightView& first = *outputs[0].w;
  const int64_t cols = first.cols;
  const bool stream = n <= kMatMulStreamMaxBatch;
  // sgemm tasks: about two per thread (each call re-packs x, so fewer, larger calls are
  // cheaper), at most kGemmMaxRowsPerTask rows so a dequantised tile stays small.
  int64_t rows_per_task = kStreamRowsPerTask;
  if (!stream) {
    int64_t total_rows = 0;
    for (const MatMulOutput& o : outputs) total_rows += o.w->rows;
    rows_per_task = (total_rows + 2 * pool.num_threads() - 1) / (2 * pool.num_threads());
    rows_per_task = std::clamp<int64_t>((rows_per_task + 15) / 16 * 16, kGemmMinRowsPerTask, kGemmMaxRowsPerTask);
  }
  // Task ranges: outputs[i] owns tasks [task_begin[i], task_begin[i + 1]).
  constexpr size_t kMaxOutputs = 8;
  int64_t task_begin[kMaxOutputs + 1];
  const size_t num_out = std::min(outputs.size(), kMaxOutputs);
  task_begin[0] = 0;
  for (size_t i = 0; i < num_out; ++i)
    task_begin[i + 1] = task_begin[i] + (outputs[i].w->rows + rows_per_task - 1) / rows_per_task;

  QuantizedActivations xq;
  bool any_blocks = false;
  for (size_t i = 0; i < num_out; ++i) any_blocks |= !IsFloatWeight(outputs[i].w->type);
  if (stream && any_blocks) xq = QuantizeActivations(x, n, cols, scratch.Quantized(QuantizedActivationsBytes(n, cols)));
  pool.ParallelFor(task_begin[num_out], [&](int64_t task, int thread) {
    size_t o = 0;
    while (task >= task_begin[o + 1]) ++o;
    const WeightView& w = *outputs[o].w;
    float* y = outputs[o].y;
    const int64_t rows = w.rows;
    const int64_t r0 = (task - task_begin[o]) * rows_per_task, r1 = std::min(rows, r0 + rows_per_task);
    if (stream) {
      internal::StreamRows(w, x, xq, n, r0, r1, y);
      return;
    }
    const float* wt;
    if (w.type == WeightType::kF32) {
      wt = reinterpret_cast<const float*>(RowPtr(w, r0));
    } else {
      float* tile = scratch.ThreadTile(thread, (r1 - r0) * cols);
      DequantizeRows(w, r0, r1, tile);
      wt = tile;
    }
    GetBlas().SgemmNT(static_cast<int>(n), static_cast<int>(r1 - r0), static_cast<int>(cols), x, wt, y + r0,
                      static_cast<int>(rows));
  });
}

}  // namespace radixserve::kernels
