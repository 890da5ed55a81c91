#include "kernels/cpu/matmul_stream.h"

#include <vector>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/vec_ops.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace internal {
namespace {

const uint8_t* Row(const WeightView& w, int64_t r) { return static_cast<const uint8_t*>(w.data) + r * w.row_bytes(); }

// A per-thread row buffer for dequantised block-type rows (grows once, then reused).
float* RowBuffer(int64_t floats) {
  thread_local std::vector<float> buffer;
  if (static_cast<int64_t>(buffer.size()) < floats) buffer.resize(floats);
  return buffer.data();
}

// Fallback: one dot product per (row, token); block types other than Q8_0 are dequantised a
// row at a time into L1 and dotted in F32.
void StreamRowsGeneric(const WeightView& w, const float* x, const BlockQ8_0* xq, int64_t n, int64_t r0, int64_t r1,
                       float* y) {
  const int64_t rows = w.rows, cols = w.cols, xq_blocks = cols / kQ8BlockSize;
  const bool dequantize = !IsFloatWeight(w.type) && w.type != WeightType::kQ8_0;
  float* buffer = dequantize ? RowBuffer(cols) : nullptr;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* wr = Row(w, r);
    if (dequantize) DequantizeBlocks(w.type, wr, buffer, cols);
    for (int64_t t = 0; t < n; ++t) {
      float v = 0.0f;
      switch (w.type) {
        case WeightType::kF32: v = DotF32(reinterpret_cast<const float*>(wr), x + t * cols, cols); break;
        case WeightType::kF16: v = DotF16F32(reinterpret_cast<const uint16_t*>(wr), x + t * cols, cols); break;
        case WeightType::kBF16: v = DotBf16F32(reinterpret_cast<const uint16_t*>(wr), x + t * cols, cols); break;
        case WeightType::kQ8_0: v = DotQ8_0(reinterpret_cast<const BlockQ8_0*>(wr), xq + t * xq_blocks, cols); break;
        default: v = DotF32(buffer, x + t * cols, cols); break;
      }
      y[t * rows + r] = v;
    }
  }
}

#if RS_HAVE_AVX512
// How far ahead small-batch kernels prefetch weights (the hardware prefetcher alone
// leaves the single-token path stalled on memory).
constexpr int kPrefetchBytes = 1024;

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
    if constexpr (NT <= 2) {  // few tokens: memory-bound; prefetch each row ahead
      constexpr int kEs = kType == WeightType::kF32 ? 4 : 2;
      _mm_prefetch(reinterpret_cast<const char*>(w0) + k * kEs + kPrefetchBytes, _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(w1) + k * kEs + kPrefetchBytes, _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(w2) + k * kEs + kPrefetchBytes, _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(w3) + k * kEs + kPrefetchBytes, _MM_HINT_T0);
    }
    const __m512 v0 = LoadW<kType>(w0, k, m), v1 = LoadW<kType>(w1, k, m);
    const __m512 v2 = LoadW<kType>(w2, k, m), v3 = LoadW<kType>(w3, k, m);
#define RS_TOKEN_FMA(J)                                          \
  {                                                              \
    const __m512 xv = _mm512_maskz_loadu_ps(m, x##J + k);        \
    a0##J = _mm512_fmadd_ps(v0, xv, a0##J);                      \
    a1##J = _mm512_fmadd_ps(v1, xv, a1##J);                      \
    a2##J = _mm512_fmadd_ps(v2, xv, a2##J);                      \
    a3##J = _mm512_fmadd_ps(v3, xv, a3##J);                      \
  }
    RS_TOKEN_FMA(0)
    if constexpr (NT > 1) RS_TOKEN_FMA(1)
    if constexpr (NT > 2) RS_TOKEN_FMA(2)
    if constexpr (NT > 3) RS_TOKEN_FMA(3)
#undef RS_TOKEN_FMA
  }
#define RS_STORE(J)                                                   \
  {                                                                   \
    float* yt = y + (t + J) * rows;                                   \
    yt[0] = simd::HorizontalSum(a0##J);                               \
    yt[1] = simd::HorizontalSum(a1##J);                               \
    yt[2] = simd::HorizontalSum(a2##J);                               \
    yt[3] = simd::HorizontalSum(a3##J);                               \
  }
  RS_STORE(0)
  if constexpr (NT > 1) RS_STORE(1)
  if constexpr (NT > 2) RS_STORE(2)
  if constexpr (NT > 3) RS_STORE(3)
#undef RS_STORE
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

template <WeightType kType>
void StreamRowsFloat(const WeightView& w, const float* x, int64_t n, int64_t r0, int64_t r1, float* y) {
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4) TileRowsFloat<kType>(Row(w, r), w.row_bytes(), w.cols, x, n, y + r, w.rows);
  if (r < r1) StreamRowsGeneric(w, x, nullptr, n, r, r1, y);
}

// Block types: 4 rows at a time dequantised into an L1-resident buffer, then the F32 tile.
void StreamRowsBlocks(const WeightView& w, const float* x, int64_t n, int64_t r0, int64_t r1, float* y) {
  const int64_t cols = w.cols;
  float* buffer = RowBuffer(4 * cols);
  int64_t r = r0;
  for (; r + 4 <= r1; r += 4) {
    for (int i = 0; i < 4; ++i) DequantizeBlocks(w.type, Row(w, r + i), buffer + i * cols, cols);
    TileRowsFloat<WeightType::kF32>(reinterpret_cast<const uint8_t*>(buffer), cols * 4, cols, x, n, y + r, w.rows);
  }
  if (r < r1) StreamRowsGeneric(w, x, nullptr, n, r, r1, y);
}

// Q8_0 x Q8_0: 2 weight rows x NT (1..4) tokens, int8 products via
// |w| * sign(x, w); named accumulators for the same reason as TileFloat.
template <int NT>
inline void TileQ8(const WeightView& w, const BlockQ8_0* xq, int64_t r, int64_t t, float* y) {
  const int64_t nb = w.cols / kQ8BlockSize, rows = w.rows;
  const BlockQ8_0* w0 = reinterpret_cast<const BlockQ8_0*>(Row(w, r));
  const BlockQ8_0* w1 = reinterpret_cast<const BlockQ8_0*>(Row(w, r + 1));
  const BlockQ8_0* x0 = xq + t * nb;
  const BlockQ8_0* x1 = NT > 1 ? x0 + nb : x0;
  const BlockQ8_0* x2 = NT > 2 ? x0 + 2 * nb : x0;
  const BlockQ8_0* x3 = NT > 3 ? x0 + 3 * nb : x0;
  __m256 a00 = _mm256_setzero_ps(), a10 = a00, a01 = a00, a11 = a00, a02 = a00, a12 = a00, a03 = a00, a13 = a00;
  for (int64_t b = 0; b < nb; ++b) {
    if constexpr (NT <= 2) {  // few tokens: memory-bound; prefetch each row ahead
      _mm_prefetch(reinterpret_cast<const char*>(w0 + b) + kPrefetchBytes, _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(w1 + b) + kPrefetchBytes, _MM_HINT_T0);
    }
    const __m256i q0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w0[b].qs));
    const __m256i q1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w1[b].qs));
    const __m256i u0 = _mm256_sign_epi8(q0, q0), u1 = _mm256_sign_epi8(q1, q1);
    const float d0 = Fp16ToFp32(w0[b].d), d1 = Fp16ToFp32(w1[b].d);
#if RS_HAVE_AVX512_VNNI
#define RS_I8DOT(u, s) _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s)
#else
#define RS_I8DOT(u, s) _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1))
#endif
#define RS_TOKEN_DOT(J)                                                                         \
  {                                                                                             \
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x##J[b].qs));        \
    const float dx = Fp16ToFp32(x##J[b].d);                                                     \
    const __m256i p0 = RS_I8DOT(u0, _mm256_sign_epi8(qx, q0));                                  \
    const __m256i p1 = RS_I8DOT(u1, _mm256_sign_epi8(qx, q1));                                  \
    a0##J = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(d0 * dx), a0##J);            \
    a1##J = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p1), _mm256_set1_ps(d1 * dx), a1##J);            \
  }
    RS_TOKEN_DOT(0)
    if constexpr (NT > 1) RS_TOKEN_DOT(1)
    if constexpr (NT > 2) RS_TOKEN_DOT(2)
    if constexpr (NT > 3) RS_TOKEN_DOT(3)
#undef RS_TOKEN_DOT
#undef RS_I8DOT
  }
#define RS_STORE(J)                                   \
  {                                                   \
    float* yt = y + (t + J) * rows + r;               \
    yt[0] = simd::HorizontalSum(a0##J);               \
    yt[1] = simd::HorizontalSum(a1##J);               \
  }
  RS_STORE(0)
  if constexpr (NT > 1) RS_STORE(1)
  if constexpr (NT > 2) RS_STORE(2)
  if constexpr (NT > 3) RS_STORE(3)
#undef RS_STORE
}

void StreamRowsQ8(const WeightView& w, const BlockQ8_0* xq, int64_t n, int64_t r0, int64_t r1, float* y) {
  int64_t r = r0;
  for (; r + 2 <= r1; r += 2) {
    int64_t t = 0;
    for (; t + 4 <= n; t += 4) TileQ8<4>(w, xq, r, t, y);
    switch (n - t) {
      case 3: TileQ8<3>(w, xq, r, t, y); break;
      case 2: TileQ8<2>(w, xq, r, t, y); break;
      case 1: TileQ8<1>(w, xq, r, t, y); break;
      default: break;
    }
  }
  if (r < r1) StreamRowsGeneric(w, nullptr, xq, n, r, r1, y);
}
#endif

}  // namespace

void StreamRows(const WeightView& w, const float* x, const BlockQ8_0* xq, int64_t n, int64_t r0, int64_t r1,
                float* y) {
#if RS_HAVE_AVX512
  switch (w.type) {
    case WeightType::kF32: return StreamRowsFloat<WeightType::kF32>(w, x, n, r0, r1, y);
    case WeightType::kF16: return StreamRowsFloat<WeightType::kF16>(w, x, n, r0, r1, y);
    case WeightType::kBF16: return StreamRowsFloat<WeightType::kBF16>(w, x, n, r0, r1, y);
    case WeightType::kQ8_0: return StreamRowsQ8(w, xq, n, r0, r1, y);
    default: return StreamRowsBlocks(w, x, n, r0, r1, y);
  }
#endif
  StreamRowsGeneric(w, x, xq, n, r0, r1, y);
}

}  // namespace internal
RS_KERNELS_END
}  // namespace radixserve::kernels
