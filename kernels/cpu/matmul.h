// MatMul: y[n][rows] = x[n][cols] * W^T for a weight matrix W[rows][cols]
// of any WeightType (weight.h; the GGUF layout: each row contiguous).
//
// Small batches (decode) stream each weight row once and dot it against all
// n activation rows with SIMD: F32/F16/BF16 against F32 activations, block
// types with int8 products against activations quantised to Q8_0 once per call
// (matmul_stream.h). Large batches (prefill) of block types use the int8 GEMM
// where the kernel set has one (gemm_int8.h, AVX-512 VNNI); otherwise a tile of
// weight rows is converted to F32 in cache and OpenBLAS sgemm runs per tile
// (blas.h); F32 weights go to sgemm directly. No F32 copy of a whole matrix is
// ever made. Work is split over the ThreadPool by row tiles; OpenBLAS itself
// runs single-threaded inside each task so that no second set of threads
// competes for the cores.
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
  // x packed for the float GEMM, one buffer per float weight type (64-byte aligned).
  void* FloatPacked(WeightType type, int64_t bytes);

 private:
  struct Buffer {
    std::unique_ptr<float[]> data;
    int64_t size = 0;
  };
  std::vector<Buffer> per_thread_;
  struct Bytes {
    std::unique_ptr<uint8_t[]> data;
    int64_t size = 0;
    void* Aligned(int64_t bytes);  // grown to bytes, 64-byte aligned
  };
  std::unique_ptr<uint8_t[]> quantized_;
  int64_t quantized_size_ = 0;
  Bytes float_packed_[3];  // F32, F16, BF16
};

// Batch sizes up to this use the streaming (GEMV-like) path; block types without an int8 GEMM in
// the kernel set stream at every batch size (matmul.cc says why).
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
