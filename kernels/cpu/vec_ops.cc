#include "kernels/cpu/vec_ops.h"

#include <cmath>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/simd.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN



#if RS_HAVE_AVX512
namespace {
inline __m512 LoadF16x16(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline __m512 LoadBf16x16(const uint16_t* p) {
  __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
template <typename Load>
inline float Dot16(const uint16_t* w, const float* x, int64_t n, Load load, float (*tail)(uint16_t)) {
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm512_fmadd_ps(load(w + i), _mm512_loadu_ps(x + i), a0);
    a1 = _mm512_fmadd_ps(load(w + i + 16), _mm512_loadu_ps(x + i + 16), a1);
  }
  for (; i + 16 <= n; i += 16) a0 = _mm512_fmadd_ps(load(w + i), _mm512_loadu_ps(x + i), a0);
  float s = simd::HorizontalSum(_mm512_add_ps(a0, a1));
  for (; i < n; ++i) s += tail(w[i]) * x[i];
  return s;
}
}  // namespace
#endif

float DotF32(const float* a, const float* b, int64_t n) {
  int64_t i = 0;
  float s = 0.0f;
#if RS_HAVE_AVX512
  __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
  for (; i + 64 <= n; i += 64) {
    a0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), a0);
    a1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), a1);
    a2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), a2);
    a3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), a3);
  }
  for (; i + 16 <= n; i += 16) a0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), a0);
  s = simd::HorizontalSum(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
#elif RS_HAVE_AVX2
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), a1);
    a2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), a2);
    a3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), a3);
  }
  for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), a0);
  s = simd::HorizontalSum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
#endif
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

float DotF16F32(const uint16_t* w, const float* x, int64_t n) {
#if RS_HAVE_AVX512
  return Dot16(w, x, n, LoadF16x16, Fp16ToFp32);
#elif RS_HAVE_AVX2
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i))),
                         _mm256_loadu_ps(x + i), a0);
    a1 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i + 8))),
                         _mm256_loadu_ps(x + i + 8), a1);
  }
  float s = simd::HorizontalSum(_mm256_add_ps(a0, a1));
  for (; i < n; ++i) s += Fp16ToFp32(w[i]) * x[i];
  return s;
#else
  return ref::DotF16F32(w, x, n);
#endif
}

float DotBf16F32(const uint16_t* w, const float* x, int64_t n) {
#if RS_HAVE_AVX512
  return Dot16(w, x, n, LoadBf16x16, Bf16ToFp32);
#else
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s += Bf16ToFp32(w[i]) * x[i];
  return s;
#endif
}

void Axpy(float a, const float* x, float* y, int64_t n) {
  int64_t i = 0;
#if RS_HAVE_AVX2
  const __m256 va = _mm256_set1_ps(a);
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
#endif
  for (; i < n; ++i) y[i] += a * x[i];
}

void RmsNorm(const float* x, const float* w, float eps, float* y, int64_t n) {
  const float ss = DotF32(x, x, n);
  const float scale = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  int64_t i = 0;
#if RS_HAVE_AVX2
  const __m256 vs = _mm256_set1_ps(scale);
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs), _mm256_loadu_ps(w + i)));
#endif
  for (; i < n; ++i) y[i] = x[i] * scale * w[i];
}

#if RS_HAVE_AVX2
namespace {
// exp(x) for 8 floats, ~1 ulp over the range used by softmax/SiLU (Cephes-style).
inline __m256 Exp8(__m256 x) {
  const __m256 max_x = _mm256_set1_ps(88.3762626647949f), min_x = _mm256_set1_ps(-87.3365447504f);
  x = _mm256_min_ps(_mm256_max_ps(x, min_x), max_x);
  const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
  __m256 fx = _mm256_round_ps(_mm256_mul_ps(x, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 y = _mm256_set1_ps(1.9875691500E-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507E-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073E-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894E-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459E-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201E-1f));
  y = _mm256_fmadd_ps(y, _mm256_mul_ps(x, x), _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}
}  // namespace
#endif

void SiluMul(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
#if RS_HAVE_AVX2
  const __m256 one = _mm256_set1_ps(1.0f);
  for (; i + 8 <= n; i += 8) {
    __m256 g = _mm256_loadu_ps(gate + i);
    __m256 e = Exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
    __m256 s = _mm256_div_ps(g, _mm256_add_ps(one, e));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
  }
#endif
  for (; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void Softmax(float* x, int64_t n) {
  float mx = -INFINITY;
  int64_t i = 0;
#if RS_HAVE_AVX2
  __m256 vmax = _mm256_set1_ps(-INFINITY);
  for (; i + 8 <= n; i += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(x + i));
  __m128 m4 = _mm_max_ps(_mm256_extractf128_ps(vmax, 1), _mm256_castps256_ps128(vmax));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  mx = _mm_cvtss_f32(m4);
#endif
  for (; i < n; ++i) mx = std::fmax(mx, x[i]);
  float sum = 0.0f;
  i = 0;
#if RS_HAVE_AVX2
  const __m256 vmx = _mm256_set1_ps(mx);
  __m256 vsum = _mm256_setzero_ps();
  for (; i + 8 <= n; i += 8) {
    __m256 e = Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmx));
    _mm256_storeu_ps(x + i, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  sum = simd::HorizontalSum(vsum);
#endif
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  const float inv = 1.0f / sum;
  i = 0;
#if RS_HAVE_AVX2
  const __m256 vinv = _mm256_set1_ps(inv);
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vinv));
#endif
  for (; i < n; ++i) x[i] *= inv;
}

void SoftCap(float* x, int64_t n, float cap) {
  const float inv = 1.0f / cap;
  int64_t i = 0;
#if RS_HAVE_AVX2
  // tanh(y) = sign(y) (1 - 2 / (exp(2|y|) + 1)): no overflow, and an absolute error of a few ulp
  // of 1 where y is small (the scores' scale, which is what the softmax sees).
  const __m256 vinv = _mm256_set1_ps(inv), vcap = _mm256_set1_ps(cap), one = _mm256_set1_ps(1.0f),
               two = _mm256_set1_ps(2.0f), sign_bit = _mm256_set1_ps(-0.0f);
  for (; i + 8 <= n; i += 8) {
    const __m256 y = _mm256_mul_ps(_mm256_loadu_ps(x + i), vinv);
    const __m256 ay = _mm256_andnot_ps(sign_bit, y);
    const __m256 e = Exp8(_mm256_mul_ps(two, ay));
    const __m256 t = _mm256_sub_ps(one, _mm256_div_ps(two, _mm256_add_ps(e, one)));
    _mm256_storeu_ps(x + i, _mm256_mul_ps(vcap, _mm256_or_ps(t, _mm256_and_ps(sign_bit, y))));
  }
#endif
  for (; i < n; ++i) x[i] = cap * std::tanh(x[i] * inv);
}

void RopeNorm(float* x, int num_heads, int head_dim, int rot_dim, const float* cos_sin) {
  ref::RopeNorm(x, num_heads, head_dim, rot_dim, cos_sin);  // tiny: the scalar loop vectorises well enough
}
void RopeNeox(float* x, int num_heads, int head_dim, int rot_dim, const float* cos_sin) {
  ref::RopeNeox(x, num_heads, head_dim, rot_dim, cos_sin);
}
void GeluMul(const float* gate, const float* up, float* out, int64_t n) {
  ref::GeluMul(gate, up, out, n);  // gemma only, and a small share of its step
}

RS_KERNELS_END
}  // namespace radixserve::kernels
