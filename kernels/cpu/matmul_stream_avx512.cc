// StreamRows for F32/F16/BF16 weights: AVX-512 FMA tiles against the F32 activations.
// Compiled into the avx512 and avx512-vnni sets; empty in the others (RS_HAVE_AVX512).
#include <algorithm>
#include <cstdint>

#include "kernels/cpu/matmul_stream_internal.h"
#include "kernels/cpu/simd.h"

#if RS_HAVE_AVX512
namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace internal {
namespace {

// Loads 16 weights (masked for the row tail) as floats.
template <WeightType kType>
inline __m512 LoadW(const uint8_t* row, int64_t k, __mmask16 m) {
  if constexpr (kType == WeightType::kF32) {
    return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(row) + k);
  } else if constexpr (kType == WeightType::kF16) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, reinterpret_cast<const uint16_t*>(row) + k));
  } else {
    __m512i v = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, reinterpret_cast<const uint16_t*>(row) + k));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  }
}

// 4 weight rows x NT (1..4) tokens. Accumulators are named variables: GCC
// keeps them in registers, while an array of them is spilled every iteration.
// Rows w0 + i * row_bytes (i < 4); y points at output row r of token 0, rows apart per token.
template <WeightType kType, int NT>
inline void TileFloat(const uint8_t* w0, int64_t row_bytes, int64_t cols, const float* x, int64_t t, float* y,
                      int64_t rows) {
  const uint8_t* w1 = w0 + row_bytes;
  const uint8_t* w2 = w1 + row_bytes;
  const uint8_t* w3 = w2 + row_bytes;
  const float* x0 = x + t * cols;
  const float* x1 = NT > 1 ? x0 + cols : x0;
  const float* x2 = NT > 2 ? x0 + 2 * cols : x0;
  const float* x3 = NT > 3 ? x0 + 3 * cols : x0;
  __m512 a00 = _mm512_setzero_ps(), a10 = a00, a20 = a00, a30 = a00;
  __m512 a01 = a00, a11 = a00, a21 = a00, a31 = a00;
  __m512 a02 = a00, a12 = a00, a22 = a00, a32 = a00;
  __m512 a03 = a00, a13 = a00, a23 = a00, a33 = a00;
  const __mmask16 tail = static_cast<__mmask16>((1u << (cols % 16)) - 1);
  for (int64_t k = 0; k < cols; k += 16) {
    const __mmask16 m = k + 16 <= cols ? static_cast<__mmask16>(0xffff) : tail;
    const __m512 v0 = LoadW<kType>(w0, k, m), v1 = LoadW<kType>(w1, k, m);
    const __m512 v2 = LoadW<kType>(w2, k, m), v3 = LoadW<kType>(w3, k, m);
#define RS_TILE_FLOAT_FMA(J)                                     \
  {                                                              \
    const __m512 xv = _mm512_maskz_loadu_ps(m, x##J + k);        \
    a0##J = _mm512_fmadd_ps(v0, xv, a0##J);                      \
    a1##J = _mm512_fmadd_ps(v1, xv, a1##J);                      \
    a2##J = _mm512_fmadd_ps(v2, xv, a2##J);                      \
    a3##J = _mm512_fmadd_ps(v3, xv, a3##J);                      \
  }
    RS_TILE_FLOAT_FMA(0)
    if constexpr (NT > 1) RS_TILE_FLOAT_FMA(1)
    if constexpr (NT > 2) RS_TILE_FLOAT_FMA(2)
    if constexpr (NT > 3) RS_TILE_FLOAT_FMA(3)
#undef RS_TILE_FLOAT_FMA
  }
#define RS_TILE_FLOAT_STORE(J)                                        \
  {                                                                   \
    float* yt = y + (t + J) * rows;                                   \
    yt[0] = simd::HorizontalSum(a0##J);                               \
    yt[1] = simd::HorizontalSum(a1##J);                               \
    yt[2] = simd::HorizontalSum(a2##J);                               \
    yt[3] = simd::HorizontalSum(a3##J);                               \
  }
  RS_TILE_FLOAT_STORE(0)
  if constexpr (NT > 1) RS_TILE_FLOAT_STORE(1)
  if constexpr (NT > 2) RS_TILE_FLOAT_STORE(2)
  if constexpr (NT > 3) RS_TILE_FLOAT_STORE(3)
#undef RS_TILE_FLOAT_STORE
}

// 4 rows of w from row r, against all n tokens.
template <WeightType kType>
void TileRowsFloat(const uint8_t* w0, int64_t row_bytes, int64_t cols, const float* x, int64_t n, float* y,
                   int64_t rows) {
  int64_t t = 0;
  for (; t + 4 <= n; t += 4) TileFloat<kType, 4>(w0, row_bytes, cols, x, t, y, rows);
  switch (n - t) {
    case 3: TileFloat<kType, 3>(w0, row_bytes, cols, x, t, y, rows); break;
    case 2: TileFloat<kType, 2>(w0, row_bytes, cols, x, t, y, rows); break;
    case 1: TileFloat<kType, 1>(w0, row_bytes, cols, x, t, y, rows); break;
    default: break;
  }
}

// One weight row x NT (1..4) tokens. With few tokens the product is bound by reading weights
// from memory, and one sequential stream per thread reads faster than the 4-row tiles' four
// interleaved ones (on Zen 4, 1.7x at one token). Each (row, token) sums its products in the
// tiles' order, so a token's output has the same bits at any batch size.
template <WeightType kType, int NT>
inline void RowFloat(const uint8_t* w, int64_t cols, const float* x, float* y, int64_t rows) {
  const float* x0 = x;
  const float* x1 = NT > 1 ? x0 + cols : x0;
  const float* x2 = NT > 2 ? x0 + 2 * cols : x0;
  const float* x3 = NT > 3 ? x0 + 3 * cols : x0;
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  const __mmask16 tail = static_cast<__mmask16>((1u << (cols % 16)) - 1);
  for (int64_t k = 0; k < cols; k += 16) {
    const __mmask16 m = k + 16 <= cols ? static_cast<__mmask16>(0xffff) : tail;
    const __m512 v = LoadW<kType>(w, k, m);
    a0 = _mm512_fmadd_ps(v, _mm512_maskz_loadu_ps(m, x0 + k), a0);
    if constexpr (NT > 1) a1 = _mm512_fmadd_ps(v, _mm512_maskz_loadu_ps(m, x1 + k), a1);
    if constexpr (NT > 2) a2 = _mm512_fmadd_ps(v, _mm512_maskz_loadu_ps(m, x2 + k), a2);
    if constexpr (NT > 3) a3 = _mm512_fmadd_ps(v, _mm512_maskz_loadu_ps(m, x3 + k), a3);
  }
  y[0] = simd::HorizontalSum(a0);
  if constexpr (NT > 1) y[rows] = simd::HorizontalSum(a1);
  if constexpr (NT > 2) y[2 * rows] = simd::HorizontalSum(a2);
  if constexpr (NT > 3) y[3 * rows] = simd::HorizontalSum(a3);
}

// One weight row against all n tokens, four at a time.
template <WeightType kType>
void RowAllTokensFloat(const uint8_t* w, int64_t cols, const float* x, int64_t n, float* y, int64_t rows) {
  for (int64_t t = 0; t < n; t += 4) {
    const float* xt = x + t * cols;
    float* yt = y + t * rows;
    ByTokens(static_cast<int>(std::min<int64_t>(4, n - t)),
             [&](auto nt) { RowFloat<kType, decltype(nt)::value>(w, cols, xt, yt, rows); });
  }
}

// Up to this many tokens a row is streamed alone (RowFloat); above it, 4-row tiles reuse each
// activation load across rows.
constexpr int64_t kRowWiseMaxTokens = 4;

template <WeightType kType>
void StreamRowsFloat(const WeightView& w, const float* x, int64_t n, int64_t r0, int64_t r1, float* y) {
  int64_t r = r0;
  if (n > kRowWiseMaxTokens)
    for (; r + 4 <= r1; r += 4) TileRowsFloat<kType>(Row(w, r), w.row_bytes(), w.cols, x, n, y + r, w.rows);
  for (; r < r1; ++r) RowAllTokensFloat<kType>(Row(w, r), w.cols, x, n, y + r, w.rows);
}

}  // namespace

void StreamRowsFloatAvx512(const WeightView& w, const float* x, int64_t n, int64_t r0, int64_t r1, float* y) {
  switch (w.type) {
    case WeightType::kF32: return StreamRowsFloat<WeightType::kF32>(w, x, n, r0, r1, y);
    case WeightType::kF16: return StreamRowsFloat<WeightType::kF16>(w, x, n, r0, r1, y);
    case WeightType::kBF16: return StreamRowsFloat<WeightType::kBF16>(w, x, n, r0, r1, y);
    default: return;
  }
}

}  // namespace internal
RS_KERNELS_END
}  // namespace radixserve::kernels
#endif  // RS_HAVE_AVX512
