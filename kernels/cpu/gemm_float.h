// The float GEMM behind MatMul for large batches (prefill) of F32, F16 and BF16 weights, in the
// kernel sets that have one (AVX-512; BF16 weights in the avx512-bf16 set): x is packed once per
// MatMul into blocks of kGemmFloatTokens tokens, column-major inside a block (GemmFloatPackX);
// each task converts a panel of 32 weight rows by 256 columns to F32, column-major, in L1, and
// multiplies it with every token block in registers (32 rows x 12 tokens of accumulators).
// F32 and F16 weights multiply F32 activations; BF16 weights multiply activations rounded to
// BF16 (vdpbf16ps, two columns per product), as llama.cpp computes them. Every output is summed
// in column order whatever the batch size and the rows a task takes, so a row's result does not
// depend on how the work is split. Sets without the GEMM report no support (MatMul then converts
// tiles for OpenBLAS). Thread-safety: pure functions over caller buffers.
#pragma once

#include <cstdint>

#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/weight.h"

namespace radixserve::kernels {

inline constexpr int64_t kGemmFloatTokens = 12;
// Bytes of a task's weight panel (32 rows x 256 F32 columns, or 32 rows x 256 BF16 pairs).
inline constexpr int64_t kGemmFloatPanelBytes = 32 * 256 * 4;
// The packed-x layouts: F32 columns (F32, F16 weights) or BF16 column pairs (BF16 weights).
inline int GemmFloatLayout(WeightType type) { return type == WeightType::kBF16 ? 1 : 0; }
// Bytes of x [n][cols] packed for either layout (64-byte aligned buffer).
inline int64_t GemmFloatPackedBytes(int64_t n, int64_t cols) {
  return (n + kGemmFloatTokens - 1) / kGemmFloatTokens * kGemmFloatTokens * cols * 4;
}

// Whether the active kernel set's GEMM multiplies BF16 weights with activations rounded to BF16
// (the avx512-bf16 and avx512-amx sets): their products then differ from the streamed decode's
// F32 ones by up to 2^-8 of their magnitude.
bool GemmFloatRoundsActivationsToBf16();

RS_KERNELS_BEGIN
// Whether this kernel set has the float GEMM for `type`.
bool GemmFloatSupports(WeightType type);
// Packs token blocks [b0, b1) of x [n][cols] in the layout `type` needs (tokens past n are zeros);
// disjoint ranges may run in parallel.
void GemmFloatPackX(WeightType type, const float* x, int64_t n, int64_t cols, void* packed, int64_t b0, int64_t b1);
// y[t * ldy + r] = dot(W[r], x[t]) for r in [r0, r1) and every token; packed from GemmFloatPackX
// for all of x; panel holds kGemmFloatPanelBytes, 64-byte aligned.
void GemmFloatRows(const WeightView& w, const void* packed, int64_t n, int64_t r0, int64_t r1, float* y, int64_t ldy,
                   void* panel);
RS_KERNELS_END

}  // namespace radixserve::kernels

// The avx512-bf16 set's GEMM (its own library, libradixserve_kernels_avx512_bf16.so, compiled for
// AVX-512 VNNI + BF16; kernel_dispatch.cc puts it in the VNNI table): BF16 weights too.
extern "C" bool radixserve_gemm_float_supports_bf16(radixserve::kernels::WeightType type);
extern "C" void radixserve_gemm_float_pack_x_bf16(radixserve::kernels::WeightType type, const float* x, int64_t n,
                                                  int64_t cols, void* packed, int64_t b0, int64_t b1);
extern "C" void radixserve_gemm_float_rows_bf16(const radixserve::kernels::WeightView& w, const void* packed,
                                                int64_t n, int64_t r0, int64_t r1, float* y, int64_t ldy, void* panel);
