#include "kernels/cpu/convert.h"

#include "kernels/cpu/simd.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN

void ConvertF16ToF32(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
#if RS_HAVE_AVX2
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) dst[i] = Fp16ToFp32(src[i]);
}

void ConvertF32ToF16(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
#if RS_HAVE_AVX2
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
#endif
  for (; i < n; ++i) dst[i] = Fp32ToFp16(src[i]);
}

void ConvertBf16ToF32(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
#if RS_HAVE_AVX2
  for (; i + 8 <= n; i += 8) {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
  }
#endif
  for (; i < n; ++i) dst[i] = Bf16ToFp32(src[i]);
}

void ConvertF32ToBf16(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = Fp32ToBf16(src[i]);
}

RS_KERNELS_END
}  // namespace radixserve::kernels
