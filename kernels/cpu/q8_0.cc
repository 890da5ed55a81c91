#include "kernels/cpu/q8_0.h"

#include <cmath>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/simd.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN



void QuantizeRowQ8Shared(const float* x, BlockQ8_0* y, int64_t n, int group) {
  const int64_t nb = n / kQ8BlockSize;
#if RS_HAVE_AVX2
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  for (int64_t g = 0; g < nb; g += group) {
    __m256 amax = _mm256_setzero_ps();
    for (int64_t b = g; b < g + group; ++b)
      for (int i = 0; i < kQ8BlockSize; i += 8)
        amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_mask, _mm256_loadu_ps(x + b * kQ8BlockSize + i)));
    __m128 m4 = _mm_max_ps(_mm256_extractf128_ps(amax, 1), _mm256_castps256_ps128(amax));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float d = _mm_cvtss_f32(m4) / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const uint16_t d16 = Fp32ToFp16(d);
    const __m256 mul = _mm256_set1_ps(id);
    for (int64_t b = g; b < g + group; ++b) {
      const float* xb = x + b * kQ8BlockSize;
      y[b].d = d16;
      __m256i i0 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(xb), mul), _MM_FROUND_TO_NEAREST_INT));
      __m256i i1 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(xb + 8), mul), _MM_FROUND_TO_NEAREST_INT));
      __m256i i2 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(xb + 16), mul), _MM_FROUND_TO_NEAREST_INT));
      __m256i i3 = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(xb + 24), mul), _MM_FROUND_TO_NEAREST_INT));
      // Pack 32-bit -> 16-bit -> 8-bit; packs interleave 128-bit lanes, undone by the permute.
      i0 = _mm256_packs_epi32(i0, i1);
      i2 = _mm256_packs_epi32(i2, i3);
      i0 = _mm256_packs_epi16(i0, i2);
      i0 = _mm256_permutevar8x32_epi32(i0, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs), i0);
    }
  }
#else
  if (group == 1) return ref::QuantizeRowQ8_0(x, y, n);
  for (int64_t g = 0; g < nb; g += group) {
    float amax = 0.0f;
    for (int64_t i = g * kQ8BlockSize; i < (g + group) * kQ8BlockSize; ++i) amax = std::fmax(amax, std::fabs(x[i]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int64_t b = g; b < g + group; ++b) {
      y[b].d = Fp32ToFp16(d);
      for (int i = 0; i < kQ8BlockSize; ++i)
        y[b].qs[i] = static_cast<int8_t>(std::nearbyint(x[b * kQ8BlockSize + i] * id));
    }
  }
#endif
}

void QuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n) { QuantizeRowQ8Shared(x, y, n, 1); }

void DequantizeRowQ8_0(const BlockQ8_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQ8BlockSize; ++b) {
    const float d = Fp16ToFp32(x[b].d);
    float* yb = y + b * kQ8BlockSize;
#if RS_HAVE_AVX2
    const __m256 vd = _mm256_set1_ps(d);
    for (int i = 0; i < kQ8BlockSize; i += 8) {
      __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x[b].qs + i)));
      _mm256_storeu_ps(yb + i, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(q)));
    }
#else
    for (int i = 0; i < kQ8BlockSize; ++i) yb[i] = d * static_cast<float>(x[b].qs[i]);
#endif
  }
}

float DotQ8_0(const BlockQ8_0* a, const BlockQ8_0* b, int64_t n) {
#if RS_HAVE_AVX2
  const int64_t nb = n / kQ8BlockSize;
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  auto block_dot = [](const BlockQ8_0& x, const BlockQ8_0& y) {
    __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs));
    __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.qs));
    // |x| * sign(y, x): unsigned-by-signed products for maddubs / dpbusd.
    __m256i ax = _mm256_sign_epi8(qx, qx);
    __m256i sy = _mm256_sign_epi8(qy, qx);
#if RS_HAVE_AVX512_VNNI
    __m256i dot = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ax, sy);
#else
    __m256i dot = _mm256_madd_epi16(_mm256_maddubs_epi16(ax, sy), _mm256_set1_epi16(1));
#endif
    return _mm256_cvtepi32_ps(dot);
  };
  int64_t k = 0;
  for (; k + 2 <= nb; k += 2) {
    const __m256 d0 = _mm256_set1_ps(Fp16ToFp32(a[k].d) * Fp16ToFp32(b[k].d));
    const __m256 d1 = _mm256_set1_ps(Fp16ToFp32(a[k + 1].d) * Fp16ToFp32(b[k + 1].d));
    acc0 = _mm256_fmadd_ps(d0, block_dot(a[k], b[k]), acc0);
    acc1 = _mm256_fmadd_ps(d1, block_dot(a[k + 1], b[k + 1]), acc1);
  }
  for (; k < nb; ++k) {
    const __m256 d0 = _mm256_set1_ps(Fp16ToFp32(a[k].d) * Fp16ToFp32(b[k].d));
    acc0 = _mm256_fmadd_ps(d0, block_dot(a[k], b[k]), acc0);
  }
  return simd::HorizontalSum(_mm256_add_ps(acc0, acc1));
#else
  return ref::DotQ8_0(a, b, n);
#endif
}

RS_KERNELS_END
}  // namespace radixserve::kernels
