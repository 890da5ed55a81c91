// The 256-bit int8 tile of two weight rows (TileInt8) and the loop over pairs of rows (StreamRowsInt8),
// shared by matmul_stream_avx2.cc and matmul_stream_avx512_vnni.cc: each passes its dot product and tiles.
// In an unnamed namespace, as in matmul_stream.cc before the split: with external linkage GCC's code
// for them changed. Each set compiles one of the two files, so no set has two copies.
// Internal to kernels/cpu. Pure functions; thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/block_decoders.h"
#include "kernels/cpu/matmul_stream_internal.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/simd.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace internal {
#if RS_HAVE_AVX2
namespace {

// Few tokens are memory-bound. A tile reads its two rows in step from the two halves of the rows
// it is given (StreamRowsInt8), so memory sees two streams, each reading whole rows one after the
// other; each is prefetched kPrefetchAhead bytes ahead, into its next row when the lead leaves its
// own. (Adjacent rows made each stream read a row and skip the next, which Zen 4's prefetchers
// did not follow: one thread read 8 GB/s of Q8_0 weights from DRAM that way, 21 GB/s in halves.)
constexpr int64_t kPrefetchAhead = 3072;
// Prefetches the `count` units (legacy blocks or super-blocks) a tile reads from unit u of each of
// its rows, kPrefetchAhead on.
template <class D>
inline void PrefetchRowPair(const uint8_t* row0, const uint8_t* row1, int64_t u, int64_t count) {
  const int64_t unit = D::Bytes(row0, 1) - row0, ahead = u * unit + kPrefetchAhead;
  for (int64_t line = 0; line < (count * unit + 63) / 64; ++line) {
    _mm_prefetch(reinterpret_cast<const char*>(row0) + ahead + 64 * line, _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(row1) + ahead + 64 * line, _MM_HINT_T0);
  }
}

// The 2-row x NT-token tiles' results: row i of token J is the sum of accumulator aiJ's lanes.
inline float SumLanes(__m256 v) { return simd::HorizontalSum(v); }
#if RS_HAVE_AVX512  // the 512-bit tiles of matmul_stream_avx512_vnni.cc
inline float SumLanes(__m512 v) { return _mm512_reduce_add_ps(v); }
#endif
template <int NT, class V>
inline void StoreRowPairs(float* y0, float* y1, int64_t rows, V a00, V a10, V a01, V a11, V a02, V a12, V a03,
                          V a13) {
  const V a[2][4] = {{a00, a01, a02, a03}, {a10, a11, a12, a13}};
  for (int j = 0; j < NT; ++j) {
    y0[j * rows] = SumLanes(a[0][j]);
    y1[j * rows] = SumLanes(a[1][j]);
  }
}

// 2 weight rows x NT (1..4) tokens; named accumulators (GCC spills an array of them).
// xq starts at the first token; y0 and y1 at that token's outputs for rows w0 and w1 (+ rows: the
// next token's). Dot::Sums(u, s): the sums of each 4 products of unsigned bytes u by signed s, as
// int32 (the set's instructions for it).
template <class Dot, class D, int NT>
inline void TileInt8(const uint8_t* w0, const uint8_t* w1, int64_t nb, const QuantizedActivations& xq, float* y0,
                     float* y1, int64_t rows) {
  using block_decoders::Int8Block;
  const BlockQ8_0* x0 = xq.blocks;
  const BlockQ8_0* x1 = NT > 1 ? x0 + nb : x0;
  const BlockQ8_0* x2 = NT > 2 ? x0 + 2 * nb : x0;
  const BlockQ8_0* x3 = NT > 3 ? x0 + 3 * nb : x0;
  const float* m0 = xq.quarter_sums;
  const float* m1 = NT > 1 ? m0 + nb * 8 : m0;
  const float* m2 = NT > 2 ? m0 + 2 * nb * 8 : m0;
  const float* m3 = NT > 3 ? m0 + 3 * nb * 8 : m0;
  // The blocks' scales already widened, 8 lanes each: one load instead of an F16 conversion and a
  // broadcast per token and block.
  const float* s0 = xq.lane_scales;
  const float* s1 = NT > 1 ? s0 + nb * 8 : s0;
  const float* s2 = NT > 2 ? s0 + 2 * nb * 8 : s0;
  const float* s3 = NT > 3 ? s0 + 3 * nb * 8 : s0;
  __m256 a00 = _mm256_setzero_ps(), a10 = a00, a01 = a00, a11 = a00, a02 = a00, a12 = a00, a03 = a00, a13 = a00;
  typename D::Unit unit0, unit1;
  // A unit's blocks per outer step, unrolled (as in TileVnni).
  for (int64_t b0 = 0; b0 < nb; b0 += D::kBlocks) {
    {
      const int64_t u = b0 / D::kBlocks;
      if constexpr (NT <= 2) {  // few tokens: memory-bound; prefetch each row ahead
        PrefetchRowPair<D>(w0, w1, u, 1);
      }
      D::Prepare(w0, u, &unit0);
      D::Prepare(w1, u, &unit1);
    }
#pragma GCC unroll 8
    for (int j = 0; j < D::kBlocks; ++j) {
      const int64_t b = b0 + j;
      const Int8Block k0 = D::Load(unit0, j), k1 = D::Load(unit1, j);
      const __m256i u0 = D::kSigned ? _mm256_sign_epi8(k0.q, k0.q) : k0.q;
      const __m256i u1 = D::kSigned ? _mm256_sign_epi8(k1.q, k1.q) : k1.q;
#define RS_TILE_INT8_DOT(J)                                                                               \
  {                                                                                                       \
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x##J[b].qs));                  \
    const __m256 dx = _mm256_loadu_ps(s##J + 8 * b);                                                      \
    const __m256i p0 = Dot::Sums(u0, D::kSigned ? _mm256_sign_epi8(qx, k0.q) : qx);                       \
    const __m256i p1 = Dot::Sums(u1, D::kSigned ? _mm256_sign_epi8(qx, k1.q) : qx);                       \
    a0##J = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_mul_ps(k0.scale, dx), a0##J);                  \
    a1##J = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p1), _mm256_mul_ps(k1.scale, dx), a1##J);                  \
    if constexpr (D::kAffine) {                                                                           \
      const __m256 sums = _mm256_loadu_ps(m##J + 8 * b);                                                  \
      a0##J = _mm256_fmadd_ps(k0.min, sums, a0##J);                                                       \
      a1##J = _mm256_fmadd_ps(k1.min, sums, a1##J);                                                       \
    }                                                                                                     \
  }
      RS_TILE_INT8_DOT(0)
      if constexpr (NT > 1) RS_TILE_INT8_DOT(1)
      if constexpr (NT > 2) RS_TILE_INT8_DOT(2)
      if constexpr (NT > 3) RS_TILE_INT8_DOT(3)
#undef RS_TILE_INT8_DOT
    }
  }
  StoreRowPairs<NT>(y0, y1, rows, a00, a10, a01, a11, a02, a12, a03, a13);
}

// y for rows [r0, r1) of w (block type D) against the n tokens of xq (the contract of StreamRows),
// in pairs of rows by groups of up to 4 tokens: Tiles::Run<D, NT> multiplies a pair by a group as
// TileInt8 does, with the set's tiles (group_blocks: xq's).
template <class Tiles, class D>
void StreamRowsInt8(const WeightView& w, const QuantizedActivations& xq, int64_t n, int64_t r0, int64_t r1,
                    float* y) {
  const int64_t nb = w.cols / kQ8BlockSize;
  // Row r0 + i pairs with row r0 + half + i (see kPrefetchAhead); an odd count's middle row, the
  // last of the first half, pairs with itself and writes its one output twice.
  const int64_t half = (r1 - r0 + 1) / 2;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t ra = r0 + i, rb = ra + half < r1 ? ra + half : ra;
    const uint8_t* w0 = Row(w, ra);
    const uint8_t* w1 = Row(w, rb);
    for (int64_t t = 0; t < n; t += 4) {
      const int nt = static_cast<int>(std::min<int64_t>(4, n - t));
      float* y0 = y + t * w.rows + ra;
      float* y1 = y + t * w.rows + rb;
      const QuantizedActivations xt = xq.From(t, w.cols);
      ByTokens(nt, [&](auto nt_constant) {
        constexpr int NT = decltype(nt_constant)::value;
        Tiles::template Run<D, NT>(w0, w1, nb, xt, y0, y1, w.rows, xq.group_blocks);
      });
    }
  }
}

}  // namespace
#endif  // RS_HAVE_AVX2
}  // namespace internal
RS_KERNELS_END
}  // namespace radixserve::kernels
