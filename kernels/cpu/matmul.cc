#include "kernels/cpu/matmul.h"

#include <algorithm>

#include "kernels/cpu/blas.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/gemm_float.h"
#include "kernels/cpu/gemm_int8.h"
#include "kernels/cpu/matmul_stream.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/vec_ops.h"

namespace radixserve::kernels {
namespace {

// Streamed (few-token) loops: about kStreamTasksPerThread tasks per thread (the counter that
// hands tasks out, and the outputs where two tasks meet, sit on lines both cores write; a second
// task each keeps the threads balancing when one is slowed), in whole multiples of
// kStreamRowsPerTask rows, at most kStreamMaxRowsPerTask. On Zen 5 (medium model, 2 threads,
// b=1) 32-row tasks ran at 2/3 the speed of two tasks per thread; 4 and 8 per thread lost 5 and
// 10 %. (Prefetching each task's first bytes at its start gained nothing.)
constexpr int64_t kStreamRowsPerTask = 32;
constexpr int64_t kStreamTasksPerThread = 2;
constexpr int64_t kStreamMaxRowsPerTask = 512;
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

void* MatMulScratch::Bytes::Aligned(int64_t bytes) {
  if (size < bytes + 64) {
    data.reset(new uint8_t[bytes + 64]);
    size = bytes + 64;
  }
  const auto at = reinterpret_cast<uintptr_t>(data.get());
  return data.get() + ((64 - at % 64) % 64);
}

void* MatMulScratch::FloatPacked(WeightType type, int64_t bytes) {
  return float_packed_[static_cast<int>(type)].Aligned(bytes);
}

void SetBlasThreads(int n) { GetBlas().SetThreads(n); }

namespace {
// The parts of a QuantizedActivations buffer, each 64-byte aligned.
struct ActivationLayout {
  int64_t quarter_sums, values, lane_scales, block_scales, sums16, neg_quad_sums, total;
  ActivationLayout(int64_t n, int64_t cols) {
    auto up = [](int64_t v) { return (v + 63) / 64 * 64; };
    const int64_t nb = n * (cols / kQ8BlockSize);
    quarter_sums = up(nb * static_cast<int64_t>(sizeof(BlockQ8_0)));
    values = quarter_sums + up(nb * 8 * 4);
    lane_scales = values + up(n * cols);
    block_scales = lane_scales + up(nb * 8 * 4);
    sums16 = block_scales + up(nb * 4);
    neg_quad_sums = sums16 + up(n * (cols / 16) * 2);
    total = neg_quad_sums + up(n * cols);  // cols / 4 int32
  }
};
}  // namespace

namespace {
struct BatchLayout {
  int64_t d, d_sum, total;
  BatchLayout(int64_t n, int64_t cols) {
    auto up = [](int64_t v) { return (v + 63) / 64 * 64; };
    const int64_t nb = n * (cols / kQ8BlockSize);
    d = up(n * cols);
    d_sum = d + up(nb * 4);
    total = d_sum + up(nb * 8);
  }
};
}  // namespace

int64_t QuantizedBatchBytes(int64_t n, int64_t cols) { return BatchLayout(n, cols).total; }

QuantizedBatch QuantizeBatch(const float* x, int64_t n, int64_t cols, void* buffer, int64_t t0, int64_t t1,
                             int group_blocks) {
  const BatchLayout layout(n, cols);
  auto* base = static_cast<uint8_t*>(buffer);
  auto* q = reinterpret_cast<int8_t*>(base);
  auto* d = reinterpret_cast<float*>(base + layout.d);
  auto* d_sum = reinterpret_cast<float*>(base + layout.d_sum);
  const int64_t nb = cols / kQ8BlockSize;
  BlockQ8_0 blocks[16];
  for (int64_t t = t0; t < t1; ++t)
    for (int64_t b0 = 0; b0 < nb; b0 += 16) {
      const int64_t count = std::min<int64_t>(16, nb - b0);
      QuantizeRowQ8Shared(x + t * cols + b0 * kQ8BlockSize, blocks, count * kQ8BlockSize, group_blocks);
      for (int64_t i = 0; i < count; ++i) {
        const int64_t at = (b0 + i) * n + t;  // block-major
        std::copy_n(blocks[i].qs, kQ8BlockSize, q + at * kQ8BlockSize);
        int s0 = 0, s1 = 0;
        for (int k = 0; k < 16; ++k) s0 += blocks[i].qs[k], s1 += blocks[i].qs[k + 16];
        d[at] = Fp16ToFp32(blocks[i].d);
        d_sum[2 * at] = d[at] * static_cast<float>(s0);
        d_sum[2 * at + 1] = d[at] * static_cast<float>(s1);
      }
    }
  return {q, d, d_sum, n, cols};
}

int64_t QuantizedActivationsBytes(int64_t n, int64_t cols) { return ActivationLayout(n, cols).total; }

QuantizedActivations QuantizeActivations(const float* x, int64_t n, int64_t cols, void* buffer, int group_blocks) {
  const ActivationLayout layout(n, cols);
  auto* base = static_cast<uint8_t*>(buffer);
  auto* blocks = reinterpret_cast<BlockQ8_0*>(base);
  auto* sums = reinterpret_cast<float*>(base + layout.quarter_sums);
  auto* values = reinterpret_cast<int8_t*>(base + layout.values);
  auto* lane_scales = reinterpret_cast<float*>(base + layout.lane_scales);
  auto* block_scales = reinterpret_cast<float*>(base + layout.block_scales);
  auto* sums16 = reinterpret_cast<int16_t*>(base + layout.sums16);
  auto* neg_quad_sums = reinterpret_cast<int32_t*>(base + layout.neg_quad_sums);
  const int64_t nb = cols / kQ8BlockSize;
  for (int64_t t = 0; t < n; ++t) QuantizeRowQ8Shared(x + t * cols, blocks + t * nb, cols, group_blocks);
  for (int64_t b = 0; b < n * nb; ++b) {
    int s0 = 0, s1 = 0;
    for (int i = 0; i < 16; ++i) s0 += blocks[b].qs[i], s1 += blocks[b].qs[i + 16];
    const float d = Fp16ToFp32(blocks[b].d);
    std::copy_n(blocks[b].qs, kQ8BlockSize, values + b * kQ8BlockSize);
    for (int i = 0; i < 8; ++i) lane_scales[8 * b + i] = d;
    block_scales[b] = d;
    for (int i = 0; i < 4; ++i) sums[8 * b + i] = d * 0.25f * static_cast<float>(s0);
    for (int i = 4; i < 8; ++i) sums[8 * b + i] = d * 0.25f * static_cast<float>(s1);
    sums16[2 * b] = static_cast<int16_t>(s0);
    sums16[2 * b + 1] = static_cast<int16_t>(s1);
    for (int i = 0; i < 8; ++i) {
      const int8_t* q = blocks[b].qs + 4 * i;
      neg_quad_sums[8 * b + i] = -(q[0] + q[1] + q[2] + q[3]);
    }
  }
  return {blocks, sums, values, lane_scales, block_scales, sums16, neg_quad_sums, group_blocks};
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
  int64_t total_rows = 0;
  for (const MatMulOutput& o : outputs) total_rows += o.w->rows;
  int64_t rows_per_task;
  if (stream) {  // see kStreamTasksPerThread
    const int64_t even = (total_rows + kStreamTasksPerThread * pool.num_threads() - 1) /
                         (kStreamTasksPerThread * pool.num_threads());
    rows_per_task = std::clamp<int64_t>((even + kStreamRowsPerTask - 1) / kStreamRowsPerTask * kStreamRowsPerTask,
                                        kStreamRowsPerTask, kStreamMaxRowsPerTask);
  } else {
    // sgemm tasks: about two per thread (each call re-packs x, so fewer, larger calls are
    // cheaper), at most kGemmMaxRowsPerTask rows so a dequantised tile stays small.
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

  // Block types stream at every batch size unless the kernel set has an int8 GEMM for them: then
  // each (row, token) product is the same sum whatever the batch and the task's rows (dequantised
  // tiles through sgemm would round differently per shape, and activations re-quantised to int8
  // downstream turn those last bits into visible differences between tp ranks or thread counts).
  auto streamed = [&](const WeightView& w) { return stream || (!IsFloatWeight(w.type) && !GemmInt8Supports(w.type)); };
  QuantizedActivations xq;
  bool any_streamed_blocks = false;
  for (size_t i = 0; i < num_out; ++i)
    any_streamed_blocks |= !IsFloatWeight(outputs[i].w->type) && streamed(*outputs[i].w);
  // K-quant weights alone: one activation scale per super-block of 256 (their kernels then sum a
  // super-block in integers); any other block type among the outputs keeps one per 32.
  int group_blocks = 8;
  for (size_t i = 0; i < num_out; ++i) group_blocks = std::min(group_blocks, ActivationGroupBlocks(outputs[i].w->type, cols));
  if (any_streamed_blocks)
    xq = QuantizeActivations(x, n, cols, scratch.Quantized(QuantizedActivationsBytes(n, cols)), group_blocks);
  // Large batches of block types: the int8 GEMM where the kernel set has one, x quantised once.
  bool any_int8 = false;
  for (size_t i = 0; i < num_out; ++i) any_int8 |= !stream && GemmInt8Supports(outputs[i].w->type);
  QuantizedBatch xb;
  if (any_int8) {
    void* buffer = scratch.Quantized(QuantizedBatchBytes(n, cols));
    constexpr int64_t kTokensPerTask = 32;
    pool.ParallelFor((n + kTokensPerTask - 1) / kTokensPerTask, [&](int64_t task, int) {
      QuantizeBatch(x, n, cols, buffer, task * kTokensPerTask, std::min(n, (task + 1) * kTokensPerTask), group_blocks);
    });
    xb = QuantizeBatch(x, n, cols, buffer, 0, 0);
  }
  // Large batches of float weights: the float GEMM where the kernel set has one, x packed once per
  // weight type (F32 and F16 share a layout, but mixing them in one call is rare).
  auto float_gemm = [&](const WeightView& w) { return !stream && IsFloatWeight(w.type) && GemmFloatSupports(w.type); };
  const void* float_packed[3] = {};
  for (size_t i = 0; i < num_out; ++i) {
    const WeightView& w = *outputs[i].w;
    const int slot = static_cast<int>(w.type);
    if (!float_gemm(w) || float_packed[slot] != nullptr) continue;
    void* buffer = scratch.FloatPacked(w.type, GemmFloatPackedBytes(n, cols));
    pool.ParallelFor((n + kGemmFloatTokens - 1) / kGemmFloatTokens,
                     [&](int64_t b, int) { GemmFloatPackX(w.type, x, n, cols, buffer, b, b + 1); });
    float_packed[slot] = buffer;
  }
  pool.ParallelFor(task_begin[num_out], [&](int64_t task, int thread) {
    size_t o = 0;
    while (task >= task_begin[o + 1]) ++o;
    const WeightView& w = *outputs[o].w;
    float* y = outputs[o].y;
    const int64_t rows = w.rows;
    const int64_t r0 = (task - task_begin[o]) * rows_per_task, r1 = std::min(rows, r0 + rows_per_task);
    if (streamed(w)) {
      internal::StreamRows(w, x, xq, n, r0, r1, y);
      return;
    }
    if (any_int8 && GemmInt8Supports(w.type)) {
      GemmInt8Rows(w, xb, r0, r1, y, rows, scratch.ThreadTile(thread, GemmInt8PackBytes(cols) / 4));
      return;
    }
    if (float_gemm(w)) {
      float* panel = scratch.ThreadTile(thread, kGemmFloatPanelBytes / 4 + 16);
      panel += (16 - reinterpret_cast<uintptr_t>(panel) / 4 % 16) % 16;  // 64-byte aligned
      GemmFloatRows(w, float_packed[static_cast<int>(w.type)], n, r0, r1, y, rows, panel);
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
