// StreamRows for block-type weights with AVX-512 VNNI: TileVnni (two blocks of 32 per step in
// 512-bit registers), TileVnniK (K-quant super-blocks summed in integers), TileInt8 for odd block counts.
// Compiled into the avx512-vnni set only (the avx512-bf16 and avx512-amx sets use its table entry).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/block_decoders.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/matmul_stream_int8.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd.h"

#if RS_HAVE_AVX512_VNNI
namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace internal {
namespace {
using namespace block_decoders;

// TileInt8's products: vpdpbusd (unsigned by signed bytes, each 4 summed in int32).
struct VnniDot {
  static __m256i Sums(__m256i u, __m256i s) { return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s); }
};

// With VNNI (int32 sums, no saturation) every type runs unsigned: q + kOffset against the signed
// activations (TileVnni takes the offset back), two blocks of 32 per step in 512-bit registers:
// half the instructions of TileInt8. Loaders give the minimums of affine types only.
template <class D>
inline void LoadPair(const Int8Block& x, const Int8Block& y, __m512i* q, __m512* scale, __m512* min) {
  __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(x.q), y.q, 1);
  if constexpr (D::kOffset != 0) v = _mm512_add_epi8(v, _mm512_set1_epi8(static_cast<char>(D::kOffset)));
  *q = v;
  *scale = _mm512_insertf32x8(_mm512_castps256_ps512(x.scale), y.scale, 1);
  if constexpr (D::kAffine) {
    *min = _mm512_insertf32x8(_mm512_castps256_ps512(x.min), y.min, 1);
  } else {
    *min = _mm512_setzero_ps();
  }
}

// [d_a x 8 lanes, d_b x 8 lanes] from two fp16 scales.
inline __m512 PairScales(uint16_t a, uint16_t b) {
  const __m128 d = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(a | (static_cast<uint32_t>(b) << 16))));
  return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
                               _mm512_castps128_ps512(d));
}
// [f[0] x 8 lanes, f[1] x 8 lanes].
inline __m512 PairFloats(const float* f) {
  return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1),
                               _mm512_castps128_ps512(_mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(f)))));
}
// Low nibbles of 32 bytes then their high nibbles, in 512 bits.
inline __m512i NibblePlanes(__m256i v) {
  const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(v), _mm256_srli_epi16(v, 4), 1);
  return _mm512_and_si512(both, _mm512_set1_epi8(0x0f));
}

// Two blocks' unsigned bytes (Q4_0, Q8_0: their scales come from PairScales or Scales8), or
// with their scales and minimums (K-quants), straight into 512-bit registers for the most used
// types (half the unpacking of two LoadPair halves); the other types combine two Loads.
template <class D>
struct FastPair {
  static constexpr bool kHas = false;
  static constexpr bool kHighTimes16 = false;
};
template <>
struct FastPair<DecodeQ4_0> {
  static constexpr bool kHas = true;
  // Raw nibbles (q + 8) in element order, the high ones (elements 16-31 of a block) times 16:
  // [a.qs, a.qs, b.qs, b.qs] by two broadcast loads (load ports, not shuffles), masked with
  // 0x0f and 0xf0 by turns; TileVnni scales those lanes' sums by 1/16 (exact: a power of two).
  static constexpr bool kHighTimes16 = true;
  static __m512i Quants(const BlockQ4_0* a, const BlockQ4_0* b) {
    const __m512i v = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a->qs)))),
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs))), 1);
    const int64_t lo = 0x0f0f0f0f0f0f0f0f, hi = static_cast<int64_t>(0xf0f0f0f0f0f0f0f0);
    return _mm512_and_si512(v, _mm512_set_epi64(hi, hi, lo, lo, hi, hi, lo, lo));
  }
};
template <>
struct FastPair<DecodeQ8_0> {
  static constexpr bool kHas = true;
  static constexpr bool kHighTimes16 = false;
  static __m512i Quants(const BlockQ8_0* a, const BlockQ8_0* b) {
    const __m512i v = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a->qs))),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qs)), 1);
    return _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));  // q + 128
  }
};
template <>
struct FastPair<DecodeQ4_K> {
  static constexpr bool kHas = true;
  static constexpr bool kHighTimes16 = false;
  // Blocks j and j + 1 (j even) share 32 bytes: low nibbles, then high.
  static void Load(const DecodeQ4_K::Unit& u, int j, __m512i* q, __m512* scale, __m512* min) {
    *q = NibblePlanes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(u.x->qs + 16 * j)));
    *scale = PairFloats(u.scale + j);
    *min = PairFloats(u.min + j);
  }
};

template <>
struct FastPair<DecodeQ6_K> {
  static constexpr bool kHas = true;
  static constexpr bool kHighTimes16 = false;
  // Blocks j, j + 1 (j even; k = j % 4 is 0 or 2): low bits from the two 32-byte halves of the
  // half's ql (low nibbles for k = 0, high for k = 2), high bits 2k and 2k + 2 of the same qh.
  // q + 32 of blocks j, j + 1.
  static __m512i Bytes(const BlockQ6_K* x, int j) {
    const int half = j / 4, k = j % 4;
    const uint8_t* ql = x->ql + 64 * half;
    const __m512i lows = _mm512_and_si512(
        _mm512_srl_epi16(_mm512_loadu_si512(ql), _mm_cvtsi32_si128(k < 2 ? 0 : 4)), _mm512_set1_epi8(0x0f));
    const __m512i h = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qh + 32 * half)));
    const __m512i shifts = _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(2 * k)),
                                              _mm256_set1_epi16(static_cast<int16_t>(2 * k + 2)), 1);
    const __m512i highs = _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(h, shifts), _mm512_set1_epi8(3)), 4);
    return _mm512_or_si512(lows, highs);
  }
  static void Load(const DecodeQ6_K::Unit& u, int j, __m512i* q, __m512* scale, __m512* min) {
    const int half = j / 4, k = j % 4;
    *q = Bytes(u.x, j);
    const __m128 four = _mm_loadu_ps(u.scale + 8 * half + 2 * k);
    *scale = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
                                   _mm512_castps128_ps512(four));
    *min = _mm512_setzero_ps();
  }
};

// Scales of the 8 legacy blocks from x on (each block's fp16 d first, at an even byte offset), as
// floats: word permutes over the blocks' first bytes, which the quants' loads bring into L1
// anyway, never reading past the 8 blocks.
template <class Block>
inline __m256 Scales8(const Block* x) {
  constexpr int kB = sizeof(Block);
  static_assert(offsetof(Block, d) == 0 && kB % 2 == 0, "scales first, at word offsets");
  constexpr int16_t kW = kB / 2;  // words per block
  const auto* bytes = reinterpret_cast<const uint8_t*>(x);
  if constexpr (7 * kB + 2 <= 128 && 8 * kB >= 128) {
    // All 8 scales within the first 128 bytes (Q4_0): one permute of two loads.
    const __m512i at = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                        7 * kW, 6 * kW, 5 * kW, 4 * kW, 3 * kW, 2 * kW, kW, 0);
    const __m512i v = _mm512_permutex2var_epi16(_mm512_loadu_si512(bytes), at, _mm512_loadu_si512(bytes + 64));
    return _mm256_cvtph_ps(_mm512_castsi512_si128(v));
  } else {
    // Blocks 0-3 from the first 128 bytes, blocks 4-7 from 128 bytes at block 4 (Q8_0).
    static_assert(3 * kB + 2 <= 128 && 4 * kB >= 128, "four blocks' scales in 128 bytes within the 8 blocks");
    const __m512i at = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                        3 * kW, 2 * kW, kW, 0, 3 * kW, 2 * kW, kW, 0);
    const __m512i lo = _mm512_permutex2var_epi16(_mm512_loadu_si512(bytes), at, _mm512_loadu_si512(bytes + 64));
    const uint8_t* upper = bytes + 4 * kB;
    const __m512i hi = _mm512_permutex2var_epi16(_mm512_loadu_si512(upper), at, _mm512_loadu_si512(upper + 64));
    return _mm256_cvtph_ps(_mm512_castsi512_si128(_mm512_mask_blend_epi16(0xf0, lo, hi)));
  }
}
// The same 8 scales by one gather.
template <class Block>
inline __m256 GatherScales8(const Block* x) {
  constexpr int kB = sizeof(Block);
  const __m256i at = _mm256_setr_epi32(0, kB, 2 * kB, 3 * kB, 4 * kB, 5 * kB, 6 * kB, 7 * kB);
  const __m256i v = _mm256_i32gather_epi32(reinterpret_cast<const int*>(x), at, 1);
  return _mm256_cvtph_ps(_mm256_cvtepi32_epi16(v));
}
// The scales of 8 legacy blocks for a tile of NT tokens: permutes for one token (the gather was a
// fifth of a Q4_0 token's tile time on Zen 5), the gather for more (on Zen 5, medium model, 4
// sequences: 3-5 % faster than the permutes with the weights coming from DRAM, though slower with
// them in L2).
template <int NT, class Block>
inline __m256 LegacyScales8(const Block* x) {
  if constexpr (NT == 1) {
    return Scales8(x);
  } else {
    return GatherScales8(x);
  }
}

// 8 blocks' factors f as FactorPair reads them: [f, f / 16] with kHighTimes16 (the lanes of a
// block's high nibbles, FastPair<DecodeQ4_0>, take f / 16), else f.
template <bool kHighTimes16>
inline __m512 FactorTable(__m256 f) {
  if constexpr (kHighTimes16) {
    return _mm512_insertf32x8(_mm512_castps256_ps512(f), _mm256_mul_ps(f, _mm256_set1_ps(1.0f / 16)), 1);
  } else {
    return _mm512_castps256_ps512(f);
  }
}
// [f[2p] x 8 lanes, f[2p + 1] x 8 lanes] of a FactorTable (lanes 4-7 of each block f / 16 with
// kHighTimes16).
template <bool kHighTimes16>
inline __m512 FactorPair(__m512 table, int p) {
  const int a = 2 * p, b = 2 * p + 1, ha = kHighTimes16 ? a + 8 : a, hb = kHighTimes16 ? b + 8 : b;
  return _mm512_permutexvar_ps(_mm512_setr_epi32(a, a, a, a, ha, ha, ha, ha, b, b, b, b, hb, hb, hb, hb), table);
}

// 2 weight rows x NT (1..4) tokens, nb even; the contract of TileInt8. The symmetric types'
// offset is taken back in the integers: each dot product starts from -kOffset times the sums of
// x's 4-byte groups, shared by both rows; for one token xq.neg_quad_sums shifted (no dot product),
// for more a dot product of x with the offset bytes (the same integers; on Zen 5 with 4 sequences
// 4 % faster than a further activation stream per token). Only the affine types add their
// minimums in floats.
template <class D, int NT>
inline void TileVnni(const uint8_t* w0, const uint8_t* w1, int64_t nb, const QuantizedActivations& xq, float* y0,
                     float* y1, int64_t rows) {
  static_assert(!D::kAffine || D::kOffset == 0, "an affine type's minimum carries no offset");
  static_assert(D::kAffine || std::has_single_bit(static_cast<unsigned>(D::kOffset)),
                "the offset is taken back by a shift of x's lane sums");
  constexpr int kOffsetShift = D::kAffine ? 0 : std::countr_zero(static_cast<unsigned>(D::kOffset));
  constexpr bool kHighTimes16 = FastPair<D>::kHighTimes16;
  const int64_t cols = nb * 32, lanes = nb * 8;
  // The offset's power of two per lane: lanes 4-7 of a block 16 times it where its quants are
  // (kHighTimes16); offset_bytes, the same as a byte per value.
  const __m512i offset_shift = kHighTimes16
                                   ? _mm512_setr_epi32(kOffsetShift, kOffsetShift, kOffsetShift, kOffsetShift,
                                                       kOffsetShift + 4, kOffsetShift + 4, kOffsetShift + 4, kOffsetShift + 4,
                                                       kOffsetShift, kOffsetShift, kOffsetShift, kOffsetShift,
                                                       kOffsetShift + 4, kOffsetShift + 4, kOffsetShift + 4, kOffsetShift + 4)
                                   : _mm512_set1_epi32(kOffsetShift);
  const __m512i offset_bytes = _mm512_sllv_epi32(_mm512_set1_epi8(static_cast<char>(D::kOffset)),
                                                 _mm512_sub_epi32(offset_shift, _mm512_set1_epi32(kOffsetShift)));
  constexpr bool kShiftedSums = NT == 1;
  __m512 a00 = _mm512_setzero_ps(), a10 = a00, a01 = a00, a11 = a00, a02 = a00, a12 = a00, a03 = a00, a13 = a00;
  // Blocks b, b + 1 of both rows against every token; f0[t], f1[t]: each lane's weight scale
  // times token t's scale.
  auto pair = [&](int64_t b, __m512i k0, __m512i k1, const __m512 (&f0)[NT], const __m512 (&f1)[NT], __m512 mn0,
                  __m512 mn1) {
#define RS_TILE_VNNI_DOT(J)                                                                       \
  {                                                                                               \
    const __m512i qx = _mm512_loadu_si512(xq.values + J * cols + 32 * b);                         \
    __m512i base = _mm512_setzero_si512();                                                        \
    if constexpr (!D::kAffine && kShiftedSums)                                                    \
      base = _mm512_sllv_epi32(_mm512_loadu_si512(xq.neg_quad_sums + J * lanes + 8 * b), offset_shift); \
    if constexpr (!D::kAffine && !kShiftedSums)                                                   \
      base = _mm512_sub_epi32(base, _mm512_dpbusd_epi32(base, offset_bytes, qx));                 \
    const __m512i p0 = _mm512_dpbusd_epi32(base, k0, qx);                                         \
    const __m512i p1 = _mm512_dpbusd_epi32(base, k1, qx);                                         \
    a0##J = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p0), f0[J], a0##J);                                \
    a1##J = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p1), f1[J], a1##J);                                \
    if constexpr (D::kAffine) {                                                                   \
      const __m512 sums = _mm512_loadu_ps(xq.quarter_sums + J * lanes + 8 * b);                   \
      a0##J = _mm512_fmadd_ps(mn0, sums, a0##J);                                                  \
      a1##J = _mm512_fmadd_ps(mn1, sums, a1##J);                                                  \
    }                                                                                             \
  }
    RS_TILE_VNNI_DOT(0)
    if constexpr (NT > 1) RS_TILE_VNNI_DOT(1)
    if constexpr (NT > 2) RS_TILE_VNNI_DOT(2)
    if constexpr (NT > 3) RS_TILE_VNNI_DOT(3)
#undef RS_TILE_VNNI_DOT
  };
  // Factors of a pair from the weights' per-lane scales (sc0, sc1) and x's lane scales.
  auto lane_factors = [&](int64_t b, __m512 sc0, __m512 sc1, __m512 (&f0)[NT], __m512 (&f1)[NT]) {
    for (int t = 0; t < NT; ++t) {
      const __m512 dx = _mm512_loadu_ps(xq.lane_scales + t * lanes + 8 * b);
      f0[t] = _mm512_mul_ps(sc0, dx);
      f1[t] = _mm512_mul_ps(sc1, dx);
    }
  };
  if constexpr (FastPair<D>::kHas && D::kBlocks == 1) {
    // Legacy blocks 8 at a time, their scales picked together (Scales8), then pairs. One token
    // multiplies them by its 8 block scales at once (a permute and no multiply per pair); more
    // tokens multiply each pair's permuted scales by their lane scales (one permute per pair,
    // not one per pair and token). The products are the same either way.
    using Block = std::remove_cv_t<std::remove_pointer_t<typename D::Unit>>;
    const Block* x0 = reinterpret_cast<const Block*>(w0);
    const Block* x1 = reinterpret_cast<const Block*>(w1);
    const __m512 none = _mm512_setzero_ps();
    int64_t b0 = 0;
    for (; b0 + 8 <= nb; b0 += 8) {
      if constexpr (NT <= 2) PrefetchRowPair<D>(w0, w1, b0, 8);
      __m256 s0 = LegacyScales8<NT>(x0 + b0), s1 = LegacyScales8<NT>(x1 + b0);
      if constexpr (NT == 1) {
        const __m256 dx = _mm256_loadu_ps(xq.block_scales + b0);
        s0 = _mm256_mul_ps(s0, dx);
        s1 = _mm256_mul_ps(s1, dx);
      }
      const __m512 t0 = FactorTable<kHighTimes16>(s0), t1 = FactorTable<kHighTimes16>(s1);
#pragma GCC unroll 4
      for (int p = 0; p < 4; ++p) {
        const int64_t b = b0 + 2 * p;
        __m512 f0[NT], f1[NT];
        if constexpr (NT == 1) {
          f0[0] = FactorPair<kHighTimes16>(t0, p);
          f1[0] = FactorPair<kHighTimes16>(t1, p);
        } else {
          lane_factors(b, FactorPair<kHighTimes16>(t0, p), FactorPair<kHighTimes16>(t1, p), f0, f1);
        }
        pair(b, FastPair<D>::Quants(x0 + b, x0 + b + 1), FastPair<D>::Quants(x1 + b, x1 + b + 1), f0, f1, none, none);
      }
    }
    for (int64_t b = b0; b < nb; b += 2) {
      if constexpr (NT <= 2) PrefetchRowPair<D>(w0, w1, b, 2);
      __m512 sc0 = PairScales(x0[b].d, x0[b + 1].d), sc1 = PairScales(x1[b].d, x1[b + 1].d);
      if constexpr (kHighTimes16) {
        const __m512 sixteenth = _mm512_setr_ps(1, 1, 1, 1, 1.0f / 16, 1.0f / 16, 1.0f / 16, 1.0f / 16, 1, 1, 1, 1,
                                                1.0f / 16, 1.0f / 16, 1.0f / 16, 1.0f / 16);
        sc0 = _mm512_mul_ps(sc0, sixteenth);
        sc1 = _mm512_mul_ps(sc1, sixteenth);
      }
      __m512 f0[NT], f1[NT];
      lane_factors(b, sc0, sc1, f0, f1);
      pair(b, FastPair<D>::Quants(x0 + b, x0 + b + 1), FastPair<D>::Quants(x1 + b, x1 + b + 1), f0, f1, none, none);
    }
  } else {
    typename D::Unit ua0, ub0, ua1, ub1;  // rows 0 and 1 (legacy types: one unit per block of the pair)
    // A unit's blocks (or a legacy pair) per outer step, unrolled: each block's place in its unit
    // is a constant, so the decoders' offsets fold into the loads.
    constexpr int kStep = D::kBlocks == 1 ? 2 : D::kBlocks;
    for (int64_t b0 = 0; b0 < nb; b0 += kStep) {
      {
        const int64_t u = b0 / D::kBlocks;
        if constexpr (NT <= 2) {  // few tokens: memory-bound; prefetch each row ahead
          PrefetchRowPair<D>(w0, w1, u, kStep / D::kBlocks);
        }
        D::Prepare(w0, u, &ua0);
        D::Prepare(w1, u, &ua1);
        if constexpr (D::kBlocks == 1) {
          D::Prepare(w0, u + 1, &ub0);
          D::Prepare(w1, u + 1, &ub1);
        }
      }
#pragma GCC unroll 8
      for (int j = 0; j < kStep; j += 2) {
        __m512i k0, k1;
        __m512 sc0, sc1, mn0, mn1;
        if constexpr (FastPair<D>::kHas) {
          FastPair<D>::Load(ua0, j, &k0, &sc0, &mn0);
          FastPair<D>::Load(ua1, j, &k1, &sc1, &mn1);
        } else if constexpr (D::kBlocks == 1) {
          LoadPair<D>(D::Load(ua0, 0), D::Load(ub0, 0), &k0, &sc0, &mn0);
          LoadPair<D>(D::Load(ua1, 0), D::Load(ub1, 0), &k1, &sc1, &mn1);
        } else {
          LoadPair<D>(D::Load(ua0, j), D::Load(ua0, j + 1), &k0, &sc0, &mn0);
          LoadPair<D>(D::Load(ua1, j), D::Load(ua1, j + 1), &k1, &sc1, &mn1);
        }
        __m512 f0[NT], f1[NT];
        lane_factors(b0 + j, sc0, sc1, f0, f1);
        pair(b0 + j, k0, k1, f0, f1, mn0, mn1);
      }
    }
  }
  StoreRowPairs<NT>(y0, y1, rows, a00, a10, a01, a11, a02, a12, a03, a13);
}

// K-quant super-blocks summed in integers (Q4_K, Q5_K, Q6_K against activations with one scale
// per super-block: QuantizedActivations::group_blocks 8), as llama.cpp sums them against Q8_K:
// per pair of blocks, vpmaddubsw (unsigned q by signed x, pairs in int16: at most 2 * 63 * 127)
// then vpdpwssd by the int16 sub-block scales into int32; one float step per super-block, where
// the minimums (Q4_K, Q5_K) or the offset 32 of Q6_K come back through x's integer sums of 16.
template <class D>
struct IntegerK {
  static constexpr bool kHas = false;
};
// A super-block's scales for IntegerK: `sc` has the int16 scales in its lanes 0-7 (Q4_K/Q5_K, one
// per block) or 0-15 (Q6_K, one per 16 values), repeated; `mn` the Q4_K/Q5_K minimums as int32,
// `sc16` the Q6_K scales as 16 int16.
struct IntegerScales {
  __m512i sc;
  __m256i mn, sc16;
  float d, dmin;
};
inline IntegerScales K4Scales(const uint8_t* scales, uint16_t d, uint16_t dmin) {
  const K4ScaleMins k = UnpackK4ScaleMins(scales);
  IntegerScales s;
  s.sc = _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(k.sc))));
  s.mn = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(k.mn)));
  s.sc16 = _mm256_setzero_si256();
  s.d = Fp16ToFp32(d);
  s.dmin = Fp16ToFp32(dmin);
  return s;
}
// Pair p's int16 lanes 0-15 take block 2p's scale, 16-31 block 2p + 1's.
inline __m512i K4PairIndex(int p) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(static_cast<int16_t>(2 * p))),
                            _mm256_set1_epi16(static_cast<int16_t>(2 * p + 1)), 1);
}
template <>
struct IntegerK<DecodeQ4_K> {
  static constexpr bool kHas = true, kMins = true;
  using Block = BlockQ4_K;
  static IntegerScales Scales(const Block* x) { return K4Scales(x->scales, x->d, x->dmin); }
  static __m512i Index(int p) { return K4PairIndex(p); }
  static __m512i Bytes(const Block* x, int p) {
    return NibblePlanes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qs + 32 * p)));
  }
};
template <>
struct IntegerK<DecodeQ5_K> {
  static constexpr bool kHas = true, kMins = true;
  using Block = BlockQ5_K;
  static IntegerScales Scales(const Block* x) { return K4Scales(x->scales, x->d, x->dmin); }
  static __m512i Index(int p) { return K4PairIndex(p); }
  // Blocks 2p, 2p + 1: the nibbles of 32 bytes, fifth bits 2p and 2p + 1 of qh.
  static __m512i Bytes(const Block* x, int p) {
    const __m512i lows = NibblePlanes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qs + 32 * p)));
    const __m512i h = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qh)));
    const __m512i shifts = _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(2 * p)),
                                              _mm256_set1_epi16(static_cast<int16_t>(2 * p + 1)), 1);
    const __m512i highs = _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(h, shifts), _mm512_set1_epi8(1)), 4);
    return _mm512_or_si512(lows, highs);
  }
};
template <>
struct IntegerK<DecodeQ6_K> {
  static constexpr bool kHas = true, kMins = false;
  using Block = BlockQ6_K;
  static IntegerScales Scales(const Block* x) {
    IntegerScales s;
    s.sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x->scales)));
    s.sc = _mm512_broadcast_i64x4(s.sc16);
    s.mn = _mm256_setzero_si256();
    s.d = Fp16ToFp32(x->d);
    s.dmin = 0.0f;
    return s;
  }
  // Pair p's 4 groups of 16 values, 8 int16 lanes each: scales 4p .. 4p + 3.
  static __m512i Index(int p) {
    const int16_t i = static_cast<int16_t>(4 * p);
    return _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(i + 1)), _mm_set1_epi16(i))),
        _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(i + 3)), _mm_set1_epi16(static_cast<int16_t>(i + 2))), 1);
  }
  static __m512i Bytes(const Block* x, int p) { return FastPair<DecodeQ6_K>::Bytes(x, 2 * p); }  // q + 32
};

// 2 weight rows x NT (1..4) tokens over whole super-blocks; the contract of TileInt8.
template <class D, int NT>
inline void TileVnniK(const uint8_t* w0, const uint8_t* w1, int64_t nb, const QuantizedActivations& xq, float* y0,
                      float* y1, int64_t rows) {
  using K = IntegerK<D>;
  using Block = typename K::Block;
  const int64_t cols = nb * 32, lanes = nb * 8, sums = cols / 16;
  const Block* r0 = reinterpret_cast<const Block*>(w0);
  const Block* r1 = reinterpret_cast<const Block*>(w1);
  __m512 a00 = _mm512_setzero_ps(), a10 = a00, a01 = a00, a11 = a00, a02 = a00, a12 = a00, a03 = a00, a13 = a00;
  for (int64_t sb = 0; sb < nb / 8; ++sb) {
    if constexpr (NT <= 2) {  // few tokens: memory-bound; prefetch each row ahead
      PrefetchRowPair<D>(w0, w1, sb, 1);
    }
    const IntegerScales s0 = K::Scales(r0 + sb), s1 = K::Scales(r1 + sb);
    __m512i i00 = _mm512_setzero_si512(), i10 = i00, i01 = i00, i11 = i00, i02 = i00, i12 = i00, i03 = i00, i13 = i00;
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const __m512i q0 = K::Bytes(r0 + sb, p), q1 = K::Bytes(r1 + sb, p);
      const __m512i idx = K::Index(p);
      const __m512i c0 = _mm512_permutexvar_epi16(idx, s0.sc), c1 = _mm512_permutexvar_epi16(idx, s1.sc);
      const int64_t at = 32 * (8 * sb + 2 * p);
#define RS_TILE_VNNI_K_DOT(J)                                                    \
  {                                                                              \
    const __m512i qx = _mm512_loadu_si512(xq.values + J * cols + at);            \
    i0##J = _mm512_dpwssd_epi32(i0##J, _mm512_maddubs_epi16(q0, qx), c0);        \
    i1##J = _mm512_dpwssd_epi32(i1##J, _mm512_maddubs_epi16(q1, qx), c1);        \
  }
      RS_TILE_VNNI_K_DOT(0)
      if constexpr (NT > 1) RS_TILE_VNNI_K_DOT(1)
      if constexpr (NT > 2) RS_TILE_VNNI_K_DOT(2)
      if constexpr (NT > 3) RS_TILE_VNNI_K_DOT(3)
#undef RS_TILE_VNNI_K_DOT
    }
    // The super-block's float step per token: its integer sum times d * dx, and the minimums
    // (times x's block sums) or Q6_K's offset (32 times the scaled sums of 16) taken back.
#define RS_TILE_VNNI_K_SUM(J)                                                                                \
  {                                                                                                          \
    const float dx = xq.lane_scales[J * lanes + 64 * sb];                                                    \
    const __m256i x16 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq.sums16 + J * sums + 16 * sb)); \
    if constexpr (K::kMins) {                                                                                \
      const __m256i x32 = _mm256_madd_epi16(x16, _mm256_set1_epi16(1));                                      \
      const __m512 m0 = _mm512_cvtepi32_ps(_mm512_zextsi256_si512(_mm256_mullo_epi32(s0.mn, x32)));          \
      const __m512 m1 = _mm512_cvtepi32_ps(_mm512_zextsi256_si512(_mm256_mullo_epi32(s1.mn, x32)));          \
      a0##J = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i0##J), _mm512_set1_ps(s0.d * dx), a0##J);                  \
      a1##J = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i1##J), _mm512_set1_ps(s1.d * dx), a1##J);                  \
      a0##J = _mm512_fmadd_ps(m0, _mm512_set1_ps(-s0.dmin * dx), a0##J);                                     \
      a1##J = _mm512_fmadd_ps(m1, _mm512_set1_ps(-s1.dmin * dx), a1##J);                                     \
    } else {                                                                                                 \
      const __m512i o0 = _mm512_zextsi256_si512(_mm256_slli_epi32(_mm256_madd_epi16(s0.sc16, x16), 5));      \
      const __m512i o1 = _mm512_zextsi256_si512(_mm256_slli_epi32(_mm256_madd_epi16(s1.sc16, x16), 5));      \
      a0##J = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(i0##J, o0)), _mm512_set1_ps(s0.d * dx), a0##J); \
      a1##J = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(i1##J, o1)), _mm512_set1_ps(s1.d * dx), a1##J); \
    }                                                                                                        \
  }
    RS_TILE_VNNI_K_SUM(0)
    if constexpr (NT > 1) RS_TILE_VNNI_K_SUM(1)
    if constexpr (NT > 2) RS_TILE_VNNI_K_SUM(2)
    if constexpr (NT > 3) RS_TILE_VNNI_K_SUM(3)
#undef RS_TILE_VNNI_K_SUM
  }
  StoreRowPairs<NT>(y0, y1, rows, a00, a10, a01, a11, a02, a12, a03, a13);
}

// The tiles of this set: super-blocks summed in integers where the activations have one scale per
// super-block, else pairs of blocks (TileVnni), else (an odd number of blocks) TileInt8.
struct VnniTiles {
  template <class D, int NT>
  static void Run(const uint8_t* w0, const uint8_t* w1, int64_t nb, const QuantizedActivations& xt, float* y0,
                  float* y1, int64_t rows, int group_blocks) {
    if constexpr (IntegerK<D>::kHas) {
      if (group_blocks == 8) return TileVnniK<D, NT>(w0, w1, nb, xt, y0, y1, rows);
    }
    if (nb % 2 == 0) return TileVnni<D, NT>(w0, w1, nb, xt, y0, y1, rows);
    TileInt8<VnniDot, D, NT>(w0, w1, nb, xt, y0, y1, rows);
  }
};

}  // namespace

bool StreamRowsInt8Vnni(const WeightView& w, const QuantizedActivations& xq, int64_t n, int64_t r0, int64_t r1,
                        float* y) {
  return VisitDecoder(w.type, [&](auto d) { StreamRowsInt8<VnniTiles, decltype(d)>(w, xq, n, r0, r1, y); });
}

}  // namespace internal
RS_KERNELS_END
}  // namespace radixserve::kernels
#endif  // RS_HAVE_AVX512_VNNI
