// Streaming (GEMV-like) kernels behind MatMul for small batches: each weight
// row block is read once and multiplied with up to 4 activation rows held in
// registers (AVX-512 micro-kernels; scalar/AVX2 dot products otherwise).
// Internal to kernels/cpu. Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/cpu/matmul.h"
#include "kernels/cpu/q8_0.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace internal {

// y[t * rows + r] = dot(W[r], x[t]) for r in [r0, r1), t in [0, n).
// For Q8_0 weights xq holds x quantised per row (cols / 32 blocks per token).
void StreamRows(const WeightView& w, const float* x, const BlockQ8_0* xq, int64_t n, int64_t r0, int64_t r1,
                float* y);

}  // namespace internal
RS_KERNELS_END
}  // namespace radixserve::kernels
