// StreamRows for block-type weights with AVX2 int8 products: TileInt8 (vpmaddubsw), and TileIntK
// for K-quant super-blocks summed in integers.
// Compiled into the avx2 and avx512 sets; the avx512-vnni set has matmul_stream_avx512_vnni.cc instead.
#include <cstdint>

#include "kernels/cpu/block_decoders.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/matmul_stream_int8.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd.h"

#if RS_HAVE_AVX2 && !RS_HAVE_AVX512_VNNI
namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace internal {
namespace {
using namespace block_decoders;

// TileInt8's products: vpmaddubsw (unsigned by signed bytes, pairs summed in int16), then vpmaddwd
// by ones (pairs of those in int32).
struct MaddubsDot {
  static __m256i Sums(__m256i u, __m256i s) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
  }
};

// K-quant super-blocks summed in integers in 256-bit registers, as TileVnniK sums them: per block
// of 32, vpmaddubsw (unsigned q by signed x) then vpmaddwd by the int16 scale of each 16 values;
// one float step per super-block and token.
template <class D>
struct IntegerK256 {
  static constexpr bool kHas = false;
};
// A super-block's integer scales: per block of 32 (Q4_K/Q5_K: sc[0..8)) or per 16 values (Q6_K),
// and the Q4_K/Q5_K minimums per 16 values in 16 int16 lanes.
struct IntegerScales256 {
  int16_t sc[16];
  __m256i mn;
  float d, dmin;
};
inline IntegerScales256 K4Scales256(const uint8_t* scales, uint16_t d, uint16_t dmin) {
  const K4ScaleMins k = UnpackK4ScaleMins(scales);
  const __m128i sc8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(k.sc));
  const __m128i mn8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(k.mn));
  IntegerScales256 s;
  _mm_storeu_si128(reinterpret_cast<__m128i*>(s.sc), _mm_cvtepu8_epi16(sc8));
  s.mn = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mn8, mn8));
  s.d = Fp16ToFp32(d);
  s.dmin = Fp16ToFp32(dmin);
  return s;
}
template <>
struct IntegerK256<DecodeQ4_K> {
  static constexpr bool kHas = true, kMins = true;
  using Block = BlockQ4_K;
  static IntegerScales256 Scales(const Block* x) { return K4Scales256(x->scales, x->d, x->dmin); }
  static __m256i BlockScales(const IntegerScales256& s, int j) { return _mm256_set1_epi16(s.sc[j]); }
};
template <>
struct IntegerK256<DecodeQ5_K> : IntegerK256<DecodeQ4_K> {
  using Block = BlockQ5_K;
  static IntegerScales256 Scales(const Block* x) { return K4Scales256(x->scales, x->d, x->dmin); }
};
template <>
struct IntegerK256<DecodeQ6_K> {
  static constexpr bool kHas = true, kMins = false;
  using Block = BlockQ6_K;
  static IntegerScales256 Scales(const Block* x) {
    IntegerScales256 s;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(s.sc),
                        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x->scales))));
    s.mn = _mm256_setzero_si256();
    s.d = Fp16ToFp32(x->d);
    s.dmin = 0.0f;
    return s;
  }
  // The 16 scales in int16 lanes.
  static __m256i AllScales(const IntegerScales256& s) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.sc));
  }
  // Lanes 0-7 (values 0-15 of block j) and 8-15 (values 16-31).
  static __m256i BlockScales(const IntegerScales256& s, int j) {
    return _mm256_set_m128i(_mm_set1_epi16(s.sc[2 * j + 1]), _mm_set1_epi16(s.sc[2 * j]));
  }
};

// 2 weight rows x NT (1..4) tokens over whole super-blocks; the contract of TileInt8.
template <class D, int NT>
inline void TileIntK(const uint8_t* w0, const uint8_t* w1, int64_t nb, const QuantizedActivations& xq, float* y0,
                     float* y1, int64_t rows) {
  using K = IntegerK256<D>;
  using Block = typename K::Block;
  const int64_t cols = nb * 32, lanes = nb * 8, sums = cols / 16;
  const Block* r0 = reinterpret_cast<const Block*>(w0);
  const Block* r1 = reinterpret_cast<const Block*>(w1);
  __m256 a00 = _mm256_setzero_ps(), a10 = a00, a01 = a00, a11 = a00, a02 = a00, a12 = a00, a03 = a00, a13 = a00;
  for (int64_t sb = 0; sb < nb / 8; ++sb) {
    if constexpr (NT <= 2) {  // few tokens: memory-bound; prefetch each row ahead
      PrefetchRowPair<D>(w0, w1, sb, 1);
    }
    const IntegerScales256 s0 = K::Scales(r0 + sb), s1 = K::Scales(r1 + sb);
    __m256i i00 = _mm256_setzero_si256(), i10 = i00, i01 = i00, i11 = i00, i02 = i00, i12 = i00, i03 = i00, i13 = i00;
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      const __m256i q0 = D::Values(r0 + sb, j), q1 = D::Values(r1 + sb, j);
      const __m256i c0 = K::BlockScales(s0, j), c1 = K::BlockScales(s1, j);
      const int64_t at = 32 * (8 * sb + j);
#define RS_TILE_INT_K_DOT(J)                                                                       \
  {                                                                                                \
    const __m256i qx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq.values + J * cols + at)); \
    i0##J = _mm256_add_epi32(i0##J, _mm256_madd_epi16(_mm256_maddubs_epi16(q0, qx), c0));         \
    i1##J = _mm256_add_epi32(i1##J, _mm256_madd_epi16(_mm256_maddubs_epi16(q1, qx), c1));         \
  }
      RS_TILE_INT_K_DOT(0)
      if constexpr (NT > 1) RS_TILE_INT_K_DOT(1)
      if constexpr (NT > 2) RS_TILE_INT_K_DOT(2)
      if constexpr (NT > 3) RS_TILE_INT_K_DOT(3)
#undef RS_TILE_INT_K_DOT
    }
    // The float step per token, as TileVnniK's: the minimums times x's sums of 16 (both per 16
    // values), or Q6_K's offset (32 times the scaled sums of 16), taken back.
#define RS_TILE_INT_K_SUM(J)                                                                                 \
  {                                                                                                          \
    const float dx = xq.lane_scales[J * lanes + 64 * sb];                                                    \
    const __m256i x16 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq.sums16 + J * sums + 16 * sb)); \
    if constexpr (K::kMins) {                                                                                \
      const __m256 m0 = _mm256_cvtepi32_ps(_mm256_madd_epi16(s0.mn, x16));                                   \
      const __m256 m1 = _mm256_cvtepi32_ps(_mm256_madd_epi16(s1.mn, x16));                                   \
      a0##J = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i0##J), _mm256_set1_ps(s0.d * dx), a0##J);                  \
      a1##J = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i1##J), _mm256_set1_ps(s1.d * dx), a1##J);                  \
      a0##J = _mm256_fmadd_ps(m0, _mm256_set1_ps(-s0.dmin * dx), a0##J);                                     \
      a1##J = _mm256_fmadd_ps(m1, _mm256_set1_ps(-s1.dmin * dx), a1##J);                                     \
    } else {                                                                                                 \
      const __m256i o0 = _mm256_slli_epi32(_mm256_madd_epi16(K::AllScales(s0), x16), 5);                     \
      const __m256i o1 = _mm256_slli_epi32(_mm256_madd_epi16(K::AllScales(s1), x16), 5);                     \
      a0##J = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(i0##J, o0)), _mm256_set1_ps(s0.d * dx), a0##J); \
      a1##J = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(i1##J, o1)), _mm256_set1_ps(s1.d * dx), a1##J); \
    }                                                                                                        \
  }
    RS_TILE_INT_K_SUM(0)
    if constexpr (NT > 1) RS_TILE_INT_K_SUM(1)
    if constexpr (NT > 2) RS_TILE_INT_K_SUM(2)
    if constexpr (NT > 3) RS_TILE_INT_K_SUM(3)
#undef RS_TILE_INT_K_SUM
  }
  StoreRowPairs<NT>(y0, y1, rows, a00, a10, a01, a11, a02, a12, a03, a13);
}

// The tiles of these sets: super-blocks summed in integers where the activations have one scale
// per super-block, else TileInt8.
struct Avx2Tiles {
  template <class D, int NT>
  static void Run(const uint8_t* w0, const uint8_t* w1, int64_t nb, const QuantizedActivations& xt, float* y0,
                  float* y1, int64_t rows, int group_blocks) {
    if constexpr (IntegerK256<D>::kHas) {
      if (group_blocks == 8) return TileIntK<D, NT>(w0, w1, nb, xt, y0, y1, rows);
    }
    TileInt8<MaddubsDot, D, NT>(w0, w1, nb, xt, y0, y1, rows);
  }
};

}  // namespace

bool StreamRowsInt8Avx2(const WeightView& w, const QuantizedActivations& xq, int64_t n, int64_t r0, int64_t r1,
                        float* y) {
  return VisitDecoder(w.type, [&](auto d) { StreamRowsInt8<Avx2Tiles, decltype(d)>(w, xq, n, r0, r1, y); });
}

}  // namespace internal
RS_KERNELS_END
}  // namespace radixserve::kernels
#endif  // RS_HAVE_AVX2 && !RS_HAVE_AVX512_VNNI
