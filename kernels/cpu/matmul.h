// MatMul: y[n][rows] = x[n][cols] * W^T for a weight matrix W[rows][cols]
// of any WeightType (weight.h; the GGUF layout: each row contiguous).
//
// Small batches (decode) stream each weight row once and dot it against all
// n activation rows with SIMD (Q8_0: activations quantised to Q8_0, int8 dot;
// the other block types: a few rows at a time dequantised into L1 and dotted
// with the F32 activations, so no F32 copy of a matrix ever exists).
// Large batches (prefill) convert a tile of weight rows to F32 and call
// OpenBLAS sgemm per tile (blas.h); F32 weights go to sgemm directly. Work is split
// over the ThreadPool by row tiles; OpenBLAS itself runs single-threaded
// inside each task so that no second set of threads competes for the cores.
//
// Thread-safety: a MatMulScratch belongs to one caller at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/weight.h"

namespace radixserve::kernels {

// Reused buffers of MatMul (grow on demand; no allocation once warm).
class MatMulScratch {
 public:
  explicit MatMulScratch(int num_threads) : per_thread_(num_threads) {}
  float* ThreadTile(int thread, int64_t floats);
  void* Quantized(int64_t bytes);

 private:
  struct Buffer {
    std::unique_ptr<float[]> data;
    int64_t size = 0;
  };
  std::vector<Buffer> per_thread_;
  std::unique_ptr<uint8_t[]> quantized_;
  int64_t quantized_size_ = 0;
};

// Batch sizes up to this use the streaming (GEMV-like) path.
inline constexpr int64_t kMatMulStreamMaxBatch = 8;

void MatMul(const WeightView& w, const float* x, int64_t n, float* y, MatMulScratch& scratch,
            ThreadPool& pool);

// Several matrices with the same input (e.g. Q, K and V): one parallel loop
// instead of one per matrix. At most 8 outputs; all weights have the same cols.
struct MatMulOutput {
  const WeightView* w;
  float* y;  // [n][w->rows]
};
void MatMulShared(std::span<const MatMulOutput> outputs, const float* x, int64_t n, MatMulScratch& scratch,
                  ThreadPool& pool);

// Converts rows [row_begin, row_end) of w to F32 in out (row-major, cols floats per row).
void DequantizeRows(const WeightView& w, int64_t row_begin, int64_t row_end, float* out);

// Sets OpenBLAS's own thread count (we call it from pool tasks with 1).
void SetBlasThreads(int n);

}  // namespace radixserve::kernels
