// Q8_0: ggml's 8-bit block quantisation (32 values share one fp16 scale).
// Weights stored as Q8_0 are used in place; activations are quantised to
// Q8_0 per block so that a dot product runs on int8 SIMD (AVX2 maddubs or
// AVX-512 VNNI). Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/cpu/kernel_set.h"

namespace radixserve::kernels {

inline constexpr int kQ8BlockSize = 32;

struct BlockQ8_0 {
  uint16_t d;                // fp16 scale
  int8_t qs[kQ8BlockSize];   // values = d * qs[i]
};
static_assert(sizeof(BlockQ8_0) == 34, "Q8_0 block must be 34 bytes as in GGUF");

RS_KERNELS_BEGIN
// n must be a multiple of 32.
void QuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n);
// QuantizeRowQ8_0 with one scale for each run of `group` blocks (n a multiple of 32 * group): the
// run's largest |x| / 127. For the activations of K-quant weights (group 8: one scale per 256
// values, as llama.cpp's Q8_K), so that their kernels can sum a whole super-block in integers.
void QuantizeRowQ8Shared(const float* x, BlockQ8_0* y, int64_t n, int group);
void DequantizeRowQ8_0(const BlockQ8_0* x, float* y, int64_t n);
// Sum over n values of a[i]*b[i], both Q8_0 (n multiple of 32).
float DotQ8_0(const BlockQ8_0* a, const BlockQ8_0* b, int64_t n);

RS_KERNELS_END

namespace ref {
void QuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n);
float DotQ8_0(const BlockQ8_0* a, const BlockQ8_0* b, int64_t n);
}  // namespace ref

}  // namespace radixserve::kernels
