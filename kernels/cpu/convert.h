// Conversions between F32 and the 16-bit float formats used by GGUF weights
// (IEEE half "F16" and bfloat16 "BF16"). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/cpu/kernel_set.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace radixserve::kernels {

// Scalar conversions (exact IEEE semantics: round-to-nearest-even, inf/NaN kept).
float Fp16ToFp32Portable(uint16_t h);
uint16_t Fp32ToFp16(float f);

inline float Fp16ToFp32(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  return Fp16ToFp32Portable(h);
#endif
}

inline float Bf16ToFp32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
inline uint16_t Fp32ToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

RS_KERNELS_BEGIN
// Row conversions, SIMD where available.
void ConvertF16ToF32(const uint16_t* src, float* dst, int64_t n);
void ConvertF32ToF16(const float* src, uint16_t* dst, int64_t n);
void ConvertBf16ToF32(const uint16_t* src, float* dst, int64_t n);
void ConvertF32ToBf16(const float* src, uint16_t* dst, int64_t n);

RS_KERNELS_END

namespace ref {  // scalar references, used by tests
void ConvertF16ToF32(const uint16_t* src, float* dst, int64_t n);
void ConvertBf16ToF32(const uint16_t* src, float* dst, int64_t n);
}  // namespace ref

}  // namespace radixserve::kernels
