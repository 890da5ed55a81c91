#include "kernels/cpu/gemm_int8.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/block_decoders.h"
#include "kernels/cpu/gemm_int8_pack.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/simd.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace {

#if RS_HAVE_AVX2
using namespace block_decoders;
using namespace gemm_int8_pack;

// 4 activation bytes as one int32 in every lane (an unaligned, aliasing load the compiler can fold
// into a broadcast operand).
typedef int32_t UnalignedI32 __attribute__((aligned(1), may_alias));

#endif  // RS_HAVE_AVX2

#if RS_HAVE_AVX512_VNNI
constexpr int kTileTokens = 8;
inline __m512i Broadcast4(const int8_t* p) { return _mm512_set1_epi32(*reinterpret_cast<const UnalignedI32*>(p)); }

// kTileRows rows x NT tokens from token t0; y at (t0, r0). kSplit: the two halves of a block have
// their own scales (Q2_K, Q3_K, Q6_K); otherwise one scale and minimum serve the whole block.
template <bool kSplit, int NT>
void TileKernel(const PackedBlock* pack, int64_t nb, const QuantizedBatch& x, int64_t t0, float* y, int64_t ldy,
                __mmask16 rows) {
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const PackedBlock& p = pack[b];
    __m512i w[8];
    for (int g = 0; g < 8; ++g) w[g] = _mm512_loadu_si512(p.q[g]);
    const __m512 s0 = _mm512_loadu_ps(p.scale[0]), m0 = _mm512_loadu_ps(p.min[0]);
    const __m512 s1 = kSplit ? _mm512_loadu_ps(p.scale[1]) : s0, m1 = kSplit ? _mm512_loadu_ps(p.min[1]) : m0;
    const BatchBlock xb(x, b, t0);
    // Group by group over all tokens: NT independent dot-product chains (one per token) keep
    // vpdpbusd's latency hidden.
    for (int half = 0; half < (kSplit ? 2 : 1); ++half) {
      __m512i dot[NT];
#pragma GCC unroll 8
      for (int t = 0; t < NT; ++t) dot[t] = _mm512_setzero_si512();
      const int g0 = GroupBegin<kSplit>(half), g1 = GroupEnd<kSplit>(half);
#pragma GCC unroll 8
      for (int g = g0; g < g1; ++g)
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) dot[t] = _mm512_dpbusd_epi32(dot[t], w[g], Broadcast4(xb.q + 32 * t + 4 * g));
      const __m512 s = half ? s1 : s0, m = half ? m1 : m0;
#pragma GCC unroll 8
      for (int t = 0; t < NT; ++t) {
        const __m512 dx = _mm512_set1_ps(xb.d[t]);
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[t]), _mm512_mul_ps(s, dx), acc[t]);
        acc[t] = _mm512_fmadd_ps(m, _mm512_set1_ps(xb.Sum<kSplit>(t, half)), acc[t]);
      }
    }
  }
  for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + t * ldy, rows, acc[t]);
}

// 32 rows (two packed tiles) x NT tokens for types with one scale per block: each activation
// broadcast feeds two vpdpbusd.
template <int NT>
void WideKernel(const PackedBlock* lo, const PackedBlock* hi, int64_t nb, const QuantizedBatch& x, int64_t t0,
                float* y, int64_t ldy, __mmask16 hi_rows) {
  __m512 acc_lo[NT], acc_hi[NT];
  for (int t = 0; t < NT; ++t) acc_lo[t] = acc_hi[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const BatchBlock xb(x, b, t0);
    __m512i dot_lo[NT], dot_hi[NT];
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t) dot_lo[t] = dot_hi[t] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      const __m512i wl = _mm512_loadu_si512(lo[b].q[g]), wh = _mm512_loadu_si512(hi[b].q[g]);
#pragma GCC unroll 8
      for (int t = 0; t < NT; ++t) {
        const __m512i xv = Broadcast4(xb.q + 32 * t + 4 * g);
        dot_lo[t] = _mm512_dpbusd_epi32(dot_lo[t], wl, xv);
        dot_hi[t] = _mm512_dpbusd_epi32(dot_hi[t], wh, xv);
      }
    }
    const __m512 sl = _mm512_loadu_ps(lo[b].scale[0]), sh = _mm512_loadu_ps(hi[b].scale[0]);
    const __m512 ml = _mm512_loadu_ps(lo[b].min[0]), mh = _mm512_loadu_ps(hi[b].min[0]);
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t) {
      const __m512 dx = _mm512_set1_ps(xb.d[t]);
      const __m512 ds = _mm512_set1_ps(xb.Sum<false>(t, 0));
      acc_lo[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_lo[t]), _mm512_mul_ps(sl, dx), acc_lo[t]);
      acc_hi[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_hi[t]), _mm512_mul_ps(sh, dx), acc_hi[t]);
      acc_lo[t] = _mm512_fmadd_ps(ml, ds, acc_lo[t]);
      acc_hi[t] = _mm512_fmadd_ps(mh, ds, acc_hi[t]);
    }
  }
  for (int t = 0; t < NT; ++t) {
    _mm512_storeu_ps(y + t * ldy, acc_lo[t]);
    _mm512_mask_storeu_ps(y + t * ldy + kTileRows, hi_rows, acc_hi[t]);
  }
}

constexpr int kWideTokens = 5;

template <class D>
void Rows(const WeightView& w, const QuantizedBatch& x, int64_t r0, int64_t r1, float* y, int64_t ldy, void* pack) {
  auto* tile = static_cast<PackedBlock*>(pack);
  const int64_t nb = w.cols / 32;
  constexpr bool kSplit = kSplitBlocks<D>;
  int64_t r = r0;
  if constexpr (!kSplit) {
    for (; r + kTileRows < r1; r += 2 * kTileRows) {  // more than 16 rows left: 32 at a time
      const int64_t hi_rows = std::min<int64_t>(kTileRows, r1 - r - kTileRows);
      PackTile<D>(w, r, kTileRows, tile);
      PackTile<D>(w, r + kTileRows, hi_rows, tile + nb);
      const __mmask16 mask = static_cast<__mmask16>((1u << hi_rows) - 1);
      int64_t t = 0;
      for (; t + kWideTokens <= x.n; t += kWideTokens)
        WideKernel<kWideTokens>(tile, tile + nb, nb, x, t, y + t * ldy + r, ldy, mask);
      switch (x.n - t) {
        case 4: WideKernel<4>(tile, tile + nb, nb, x, t, y + t * ldy + r, ldy, mask); break;
        case 3: WideKernel<3>(tile, tile + nb, nb, x, t, y + t * ldy + r, ldy, mask); break;
        case 2: WideKernel<2>(tile, tile + nb, nb, x, t, y + t * ldy + r, ldy, mask); break;
        case 1: WideKernel<1>(tile, tile + nb, nb, x, t, y + t * ldy + r, ldy, mask); break;
        default: break;
      }
    }
  }
  for (; r < r1; r += kTileRows) {
    const int64_t rows = std::min<int64_t>(kTileRows, r1 - r);
    PackTile<D>(w, r, rows, tile);
    const __mmask16 mask = static_cast<__mmask16>((1u << rows) - 1);
    int64_t t = 0;
    for (; t + kTileTokens <= x.n; t += kTileTokens) TileKernel<kSplit, kTileTokens>(tile, nb, x, t, y + t * ldy + r, ldy, mask);
    switch (x.n - t) {
      case 7: TileKernel<kSplit, 7>(tile, nb, x, t, y + t * ldy + r, ldy, mask); break;
      case 6: TileKernel<kSplit, 6>(tile, nb, x, t, y + t * ldy + r, ldy, mask); break;
      case 5: TileKernel<kSplit, 5>(tile, nb, x, t, y + t * ldy + r, ldy, mask); break;
      case 4: TileKernel<kSplit, 4>(tile, nb, x, t, y + t * ldy + r, ldy, mask); break;
      case 3: TileKernel<kSplit, 3>(tile, nb, x, t, y + t * ldy + r, ldy, mask); break;
      case 2: TileKernel<kSplit, 2>(tile, nb, x, t, y + t * ldy + r, ldy, mask); break;
      case 1: TileKernel<kSplit, 1>(tile, nb, x, t, y + t * ldy + r, ldy, mask); break;
      default: break;
    }
  }
}

#elif RS_HAVE_AVX2
// Without VNNI: vpmaddubsw multiplies unsigned by signed bytes and adds each pair into a
// saturating int16, which vpmaddwd widens to int32. With |x| <= 127 a pair stays below 2^15 for
// bytes up to 128, so every type but Q8_0 and IQ4_NL runs as with VNNI (q + kOffset against x,
// the offset folded into the minimums: the same integers and the same float operations, so the
// same bits); those two (bytes up to 255) multiply |q| by x carrying q's sign. Consecutive
// groups' int16 sums are added before widening while they cannot reach 2^15.
template <class D>
constexpr bool kSignTrick = D::kMaxByte > 128;
template <class D>
constexpr int GroupsPerInt16Sum() {
  if constexpr (kSignTrick<D>) return 1;  // |q| * x reaches 2 * 128 * 127 per pair
  int k = 1;
  while (k < 4 && 2 * k * 2 * 127 * D::kMaxByte <= 32767) k *= 2;
  return k;
}

constexpr int kHalfRows = 8;  // one register of int32 lanes: rows 0-7 or 8-15 of a packed tile
constexpr int kTileTokens = 4;
inline __m256i Broadcast4(const int8_t* p) { return _mm256_set1_epi32(*reinterpret_cast<const UnalignedI32*>(p)); }

// Rows [row0, row0 + rows) (rows <= 8) of a packed tile x NT tokens from token t0; y at (t0, row0).
// kSplit as in the VNNI kernel.
template <class D, bool kSplit, int NT>
void HalfTileKernel(const PackedBlock* pack, int64_t nb, int row0, const QuantizedBatch& x, int64_t t0, float* y,
                    int64_t ldy, int rows) {
  constexpr bool kSign = kSignTrick<D>;
  static_assert(!kSign || !D::kAffine, "the sign trick drops the minimums");
  constexpr int kSum = GroupsPerInt16Sum<D>();
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const PackedBlock& p = pack[b];
    const BatchBlock xb(x, b, t0);
    for (int half = 0; half < (kSplit ? 2 : 1); ++half) {
      __m256i dot[NT];
#pragma GCC unroll 8
      for (int t = 0; t < NT; ++t) dot[t] = _mm256_setzero_si256();
      const int g0 = GroupBegin<kSplit>(half), g1 = GroupEnd<kSplit>(half);
#pragma GCC unroll 8
      for (int g = g0; g < g1; g += kSum) {
        __m256i u[kSum], sign[kSum];
#pragma GCC unroll 4
        for (int k = 0; k < kSum; ++k) {
          const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p.q[g + k][row0]));
          if constexpr (kSign) {
            sign[k] = _mm256_xor_si256(v, _mm256_set1_epi8(static_cast<char>(0x80)));  // q itself
            u[k] = _mm256_abs_epi8(sign[k]);
          } else {
            u[k] = v;
          }
        }
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) {
          __m256i sum16 = _mm256_setzero_si256();
#pragma GCC unroll 4
          for (int k = 0; k < kSum; ++k) {
            __m256i xv = Broadcast4(xb.q + 32 * t + 4 * (g + k));
            if constexpr (kSign) xv = _mm256_sign_epi8(xv, sign[k]);
            const __m256i prod = _mm256_maddubs_epi16(u[k], xv);
            sum16 = k == 0 ? prod : _mm256_add_epi16(sum16, prod);
          }
          dot[t] = _mm256_add_epi32(dot[t], _mm256_madd_epi16(sum16, ones));
        }
      }
      const int h = kSplit ? half : 0;
      const __m256 s = _mm256_loadu_ps(p.scale[h] + row0);
#pragma GCC unroll 8
      for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot[t]), _mm256_mul_ps(s, _mm256_set1_ps(xb.d[t])), acc[t]);
        if constexpr (!kSign)
          acc[t] = _mm256_fmadd_ps(_mm256_loadu_ps(p.min[h] + row0), _mm256_set1_ps(xb.Sum<kSplit>(t, half)), acc[t]);
      }
    }
  }
  if (rows == kHalfRows) {
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(y + t * ldy, acc[t]);
  } else {
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(rows), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (int t = 0; t < NT; ++t) _mm256_maskstore_ps(y + t * ldy, mask, acc[t]);
  }
}

template <class D>
void Rows(const WeightView& w, const QuantizedBatch& x, int64_t r0, int64_t r1, float* y, int64_t ldy, void* pack) {
  auto* tile = static_cast<PackedBlock*>(pack);
  const int64_t nb = w.cols / 32;
  constexpr bool kSplit = kSplitBlocks<D>;
  for (int64_t r = r0; r < r1; r += kTileRows) {
    const int rows = static_cast<int>(std::min<int64_t>(kTileRows, r1 - r));
    PackTile<D>(w, r, rows, tile);
    for (int row0 = 0; row0 < rows; row0 += kHalfRows) {
      const int n_rows = std::min(kHalfRows, rows - row0);
      float* yr = y + r + row0;
      int64_t t = 0;
      for (; t + kTileTokens <= x.n; t += kTileTokens)
        HalfTileKernel<D, kSplit, kTileTokens>(tile, nb, row0, x, t, yr + t * ldy, ldy, n_rows);
      switch (x.n - t) {
        case 3: HalfTileKernel<D, kSplit, 3>(tile, nb, row0, x, t, yr + t * ldy, ldy, n_rows); break;
        case 2: HalfTileKernel<D, kSplit, 2>(tile, nb, row0, x, t, yr + t * ldy, ldy, n_rows); break;
        case 1: HalfTileKernel<D, kSplit, 1>(tile, nb, row0, x, t, yr + t * ldy, ldy, n_rows); break;
        default: break;
      }
    }
  }
}
#endif  // RS_HAVE_AVX512_VNNI, RS_HAVE_AVX2

}  // namespace

bool GemmInt8Supports(WeightType type) {
#if RS_HAVE_AVX2
  return !IsFloatWeight(type);
#else
  (void)type;
  return false;
#endif
}

void GemmInt8Rows(const WeightView& w, const QuantizedBatch& x, int64_t r0, int64_t r1, float* y, int64_t ldy,
                  void* pack) {
#if RS_HAVE_AVX2
  VisitDecoder(w.type, [&](auto d) { Rows<decltype(d)>(w, x, r0, r1, y, ldy, pack); });
#else
  (void)w, (void)x, (void)r0, (void)r1, (void)y, (void)ldy, (void)pack;
#endif
}

RS_KERNELS_END
}  // namespace radixserve::kernels
