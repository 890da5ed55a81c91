// Compile-time SIMD feature switches shared by the CPU kernels.
// Every SIMD path has a scalar fallback, so the kernels build on any target.
#pragma once

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define RS_HAVE_AVX2 1
#include <immintrin.h>
#else
#define RS_HAVE_AVX2 0
#endif

#if RS_HAVE_AVX2 && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define RS_HAVE_AVX512 1
#else
#define RS_HAVE_AVX512 0
#endif

#if RS_HAVE_AVX512 && defined(__AVX512VNNI__)
#define RS_HAVE_AVX512_VNNI 1
#else
#define RS_HAVE_AVX512_VNNI 0
#endif

// AMX tiles are compiled into the avx512-amx kernel set only (kernels/cpu/CMakeLists.txt).
// GCC spells the feature macros __AMX_TILE__/__AMX_INT8__, clang (14 at least) __AMXTILE__/__AMXINT8__.
#if (defined(__AMX_TILE__) || defined(__AMXTILE__)) && (defined(__AMX_INT8__) || defined(__AMXINT8__))
#define RS_COMPILER_HAS_AMX_INT8 1
#else
#define RS_COMPILER_HAS_AMX_INT8 0
#endif
#if RS_HAVE_AVX512_VNNI && RS_COMPILER_HAS_AMX_INT8
#define RS_HAVE_AMX_INT8 1
#else
#define RS_HAVE_AMX_INT8 0
#endif

#if RS_HAVE_AVX2
namespace radixserve::kernels::simd {
// Horizontal sum of 8 floats.
inline float HorizontalSum(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v);
  __m128 hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  __m128 shuf = _mm_movehdup_ps(lo);
  __m128 sums = _mm_add_ps(lo, shuf);
  shuf = _mm_movehl_ps(shuf, sums);
  sums = _mm_add_ss(sums, shuf);
  return _mm_cvtss_f32(sums);
}
#if RS_HAVE_AVX512
// Horizontal sum of 16 floats, staying in zmm registers (GCC spills arrays of
// accumulators to the stack when they are narrowed with a cast).
inline float HorizontalSum(__m512 v) {
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0x4e));
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0xb1));
  v = _mm512_add_ps(v, _mm512_permute_ps(v, 0x4e));
  v = _mm512_add_ps(v, _mm512_permute_ps(v, 0xb1));
  return _mm512_cvtss_f32(v);
}
#endif
}  // namespace radixserve::kernels::simd
#endif
