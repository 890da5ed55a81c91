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

  const BlockQ8_0* xq = nullptr;
  bool any_q8 = false;
  for (size_t i = 0; i < num_out; ++i) any_q8 |= outputs[i].w->type == WeightType::kQ8_0;
  if (stream && any_q8) {
    const int64_t xq_blocks = cols / kQ8BlockSize;
    auto* q = static_cast<BlockQ8_0*>(scratch.Quantized(n * xq_blocks * static_cast<int64_t>(sizeof(BlockQ8_0))));
    for (int64_t t = 0; t < n; ++t) QuantizeRowQ8_0(x + t * cols, q + t * xq_blocks, cols);
    xq = q;
  }
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
