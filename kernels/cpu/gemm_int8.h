// The int8 GEMM behind MatMul for large batches (prefill) of block-type weights: x is quantised
// to Q8_0 once per MatMul (QuantizeBatch), each tile of 16 weight rows is unpacked once into
// unsigned bytes in VNNI order, and AVX-512 VNNI (vpdpbusd), or AVX2 (vpmaddubsw + vpmaddwd)
// where the CPU has no VNNI, multiplies them with every token, as llama.cpp computes these types
// (8-bit activations). The scalar set reports no support (MatMul then streams the rows).
// Thread-safety: pure functions over caller buffers.
#pragma once

#include <cstdint>

#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/weight.h"

namespace radixserve::kernels {

// x [n][cols] quantised to Q8_0, block-major (a block's tokens side by side, so that the kernel
// reaches token t at a constant offset): values, block scales, and per half-block (16 values)
// the scale times the values' sum.
struct QuantizedBatch {
  const int8_t* q = nullptr;     // [cols / 32][n][32]
  const float* d = nullptr;      // [cols / 32][n]
  const float* d_sum = nullptr;  // [cols / 32][n][2]
  int64_t n = 0, cols = 0;
};
int64_t QuantizedBatchBytes(int64_t n, int64_t cols);
// Quantises tokens [t0, t1) of x into buffer (QuantizedBatchBytes(n, cols)); disjoint ranges may
// run in parallel. Returns the whole batch's view of the buffer. group_blocks: blocks of 32 under
// one scale (1, or 8 for K-quant weights, as the streamed kernels quantise them: see
// QuantizeActivations).
QuantizedBatch QuantizeBatch(const float* x, int64_t n, int64_t cols, void* buffer, int64_t t0, int64_t t1,
                             int group_blocks = 1);

// Bytes of the unpacked weights GemmInt8Rows works on (two 16-row tiles of kPackedBlockBytes per
// block of 32 columns).
inline constexpr int64_t kGemmInt8PackedBlockBytes = 768;
inline int64_t GemmInt8PackBytes(int64_t cols) { return 2 * (cols / 32) * kGemmInt8PackedBlockBytes; }

RS_KERNELS_BEGIN
// Whether this kernel set has the int8 GEMM for `type`.
bool GemmInt8Supports(WeightType type);
// y[t * ldy + r] = dot(W[r], x[t]) for r in [r0, r1) and every token; pack holds
// GemmInt8PackBytes(w.cols) bytes.
void GemmInt8Rows(const WeightView& w, const QuantizedBatch& x, int64_t r0, int64_t r1, float* y, int64_t ldy,
                  void* pack);
RS_KERNELS_END

}  // namespace radixserve::kernels
