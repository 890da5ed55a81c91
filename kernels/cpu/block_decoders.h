// Decoders of GGUF's block types for the int8 kernels (matmul_stream_*.cc, gemm_int8.cc): each
// unpacks a 32-value block of a weight row in registers into bytes with per-lane scales and
// minimums. Internal to kernels/cpu; compiled into each kernel set. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quant_simd.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/weight.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace block_decoders {
#if RS_HAVE_AVX2
using namespace quant_simd;

// A 32-value weight block unpacked: bytes q with per-lane scales (one scale per 16 values at
// most) and, for the affine types, per-lane minimums.
struct Int8Block {
  __m256i q;
  __m256 scale;  // lane l (values 4l..4l+3): w = scale * q (+ min)
  __m256 min;
};

inline __m256 HalfScales(float s0, float s1) {
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_set1_ps(s0)), _mm_set1_ps(s1), 1);
}

// One decoder per type. A row is a sequence of units (a legacy block, or a K-quant super-block
// of 8 blocks of 32): Prepare(row, u) reads unit u's scales once, Load(unit, j) unpacks its
// block j. kSigned: q is signed (q + kOffset is then unsigned), else unsigned; kAffine: the
// blocks have minimums; kMaxByte: the largest q + kOffset.
template <typename Block>
struct LegacyUnit {
  static constexpr int kBlocks = 1;
  using Unit = const Block*;
  static const uint8_t* Bytes(const uint8_t* row, int64_t u) { return row + u * sizeof(Block); }
  static void Prepare(const uint8_t* row, int64_t u, Unit* out) { *out = reinterpret_cast<const Block*>(row) + u; }
};
struct DecodeQ8_0 : LegacyUnit<BlockQ8_0> {
  static constexpr bool kSigned = true, kAffine = false;
  static constexpr int kOffset = 128, kMaxByte = 255;
  static Int8Block Load(Unit x, int) {
    return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qs)), _mm256_set1_ps(Fp16ToFp32(x->d)),
            _mm256_setzero_ps()};
  }
};
struct DecodeQ4_0 : LegacyUnit<BlockQ4_0> {
  static constexpr bool kSigned = true, kAffine = false;
  static constexpr int kOffset = 8, kMaxByte = 15;
  static Int8Block Load(Unit x, int) {
    return {_mm256_sub_epi8(Nibbles(x->qs), _mm256_set1_epi8(8)), _mm256_set1_ps(Fp16ToFp32(x->d)),
            _mm256_setzero_ps()};
  }
};
struct DecodeQ4_1 : LegacyUnit<BlockQ4_1> {
  static constexpr bool kSigned = false, kAffine = true;
  static constexpr int kOffset = 0, kMaxByte = 15;
  static Int8Block Load(Unit x, int) {
    return {Nibbles(x->qs), _mm256_set1_ps(Fp16ToFp32(x->d)), _mm256_set1_ps(Fp16ToFp32(x->m))};
  }
};
struct DecodeQ5_0 : LegacyUnit<BlockQ5_0> {
  static constexpr bool kSigned = true, kAffine = false;
  static constexpr int kOffset = 16, kMaxByte = 31;
  static Int8Block Load(Unit x, int) {
    const __m256i q = _mm256_or_si256(Nibbles(x->qs), FifthBits(HighBits(*x)));
    return {_mm256_sub_epi8(q, _mm256_set1_epi8(16)), _mm256_set1_ps(Fp16ToFp32(x->d)), _mm256_setzero_ps()};
  }
};
struct DecodeQ5_1 : LegacyUnit<BlockQ5_1> {
  static constexpr bool kSigned = false, kAffine = true;
  static constexpr int kOffset = 0, kMaxByte = 31;
  static Int8Block Load(Unit x, int) {
    return {_mm256_or_si256(Nibbles(x->qs), FifthBits(HighBits(*x))), _mm256_set1_ps(Fp16ToFp32(x->d)),
            _mm256_set1_ps(Fp16ToFp32(x->m))};
  }
};
struct DecodeIQ4_NL : LegacyUnit<BlockIQ4_NL> {
  static constexpr bool kSigned = true, kAffine = false;
  static constexpr int kOffset = 128, kMaxByte = 241;
  static Int8Block Load(Unit x, int) {
    const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4NLValues));
    return {_mm256_shuffle_epi8(_mm256_set_m128i(t, t), Nibbles(x->qs)), _mm256_set1_ps(Fp16ToFp32(x->d)),
            _mm256_setzero_ps()};
  }
};

// K-quants: a unit is a super-block, with its 8 (or 16) scales and minimums as floats.
template <typename Block>
struct SuperUnit {
  const Block* x;
  float scale[16], min[16];  // per block of 32 (Q4_K, Q5_K) or per 16 values (Q2_K, Q3_K, Q6_K)
};
template <typename Block>
struct KQuant {
  static constexpr int kBlocks = 8;
  using Unit = SuperUnit<Block>;
  static const uint8_t* Bytes(const uint8_t* row, int64_t u) { return row + u * sizeof(Block); }
};
struct DecodeQ2_K : KQuant<BlockQ2_K> {
  static constexpr bool kSigned = false, kAffine = true;
  static constexpr int kOffset = 0, kMaxByte = 3;
  static void Prepare(const uint8_t* row, int64_t u, Unit* out) {
    out->x = reinterpret_cast<const BlockQ2_K*>(row) + u;
    const __m256 d = _mm256_set1_ps(Fp16ToFp32(out->x->d)), dmin = _mm256_set1_ps(-Fp16ToFp32(out->x->dmin));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(out->x->scales));
    const __m128i sc = _mm_and_si128(b, _mm_set1_epi8(0x0f));
    const __m128i mn = _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi8(0x0f));
    auto store = [](float* dst, __m128i v, __m256 k) {
      _mm256_storeu_ps(dst, _mm256_mul_ps(k, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v))));
      _mm256_storeu_ps(dst + 8, _mm256_mul_ps(k, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(v, 8)))));
    };
    store(out->scale, sc, d);
    store(out->min, mn, dmin);
  }
  static Int8Block Load(const Unit& u, int j) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(u.x->qs + 32 * (j / 4)));
    return {Plane(q, 2 * (j % 4), 3), HalfScales(u.scale[2 * j], u.scale[2 * j + 1]),
            HalfScales(u.min[2 * j], u.min[2 * j + 1])};
  }
};
struct DecodeQ3_K : KQuant<BlockQ3_K> {
  static constexpr bool kSigned = true, kAffine = false;
  static constexpr int kOffset = 4, kMaxByte = 7;
  static void Prepare(const uint8_t* row, int64_t u, Unit* out) {
    out->x = reinterpret_cast<const BlockQ3_K*>(row) + u;
    int8_t scales[16];
    UnpackQ3Scales(out->x->scales, scales);
    const float d = Fp16ToFp32(out->x->d);
    for (int i = 0; i < 16; ++i) out->scale[i] = d * static_cast<float>(scales[i]);
  }
  static Int8Block Load(const Unit& u, int j) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(u.x->qs + 32 * (j / 4)));
    const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(u.x->hmask));
    const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << j));
    const __m256i missing = _mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), _mm256_setzero_si256());
    return {_mm256_sub_epi8(Plane(q, 2 * (j % 4), 3), _mm256_and_si256(missing, _mm256_set1_epi8(4))),
            HalfScales(u.scale[2 * j], u.scale[2 * j + 1]), _mm256_setzero_ps()};
  }
};
// The 8 six-bit scales and 8 minimums of ScaleMinK4 (Q4_K, Q5_K) at once, as bytes: the same bit
// fields, taken from the 12 bytes as three little-endian words (each mask keeps a field within
// its byte).
struct K4ScaleMins {
  uint32_t sc[2], mn[2];  // sc bytes 0-7: the blocks' scales; mn: their minimums
};
inline K4ScaleMins UnpackK4ScaleMins(const uint8_t* scales) {
  uint32_t w[3];
  std::memcpy(w, scales, 12);
  const uint32_t low6 = 0x3f3f3f3f, low4 = 0x0f0f0f0f, low2 = 0x03030303;
  return {{w[0] & low6, (w[2] & low4) | (((w[0] >> 6) & low2) << 4)},
          {w[1] & low6, ((w[2] >> 4) & low4) | (((w[1] >> 6) & low2) << 4)}};
}
template <typename Block>
inline void PrepareK4(const uint8_t* row, int64_t u, SuperUnit<Block>* out) {
  out->x = reinterpret_cast<const Block*>(row) + u;
  const K4ScaleMins k = UnpackK4ScaleMins(out->x->scales);
  const __m256 d = _mm256_set1_ps(Fp16ToFp32(out->x->d)), dmin = _mm256_set1_ps(-Fp16ToFp32(out->x->dmin));
  const __m128i sc8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(k.sc));
  const __m128i mn8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(k.mn));
  _mm256_storeu_ps(out->scale, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sc8))));
  _mm256_storeu_ps(out->min, _mm256_mul_ps(dmin, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(mn8))));
}
struct DecodeQ4_K : KQuant<BlockQ4_K> {
  static constexpr bool kSigned = false, kAffine = true;
  static constexpr int kOffset = 0, kMaxByte = 15;
  static void Prepare(const uint8_t* row, int64_t u, Unit* out) { PrepareK4(row, u, out); }
  // Block j's 32 unsigned values.
  static __m256i Values(const BlockQ4_K* x, int j) {
    return Plane(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qs + 32 * (j / 2))), 4 * (j % 2), 0x0f);
  }
  static Int8Block Load(const Unit& u, int j) {
    return {Values(u.x, j), _mm256_set1_ps(u.scale[j]), _mm256_set1_ps(u.min[j])};
  }
};
struct DecodeQ5_K : KQuant<BlockQ5_K> {
  static constexpr bool kSigned = false, kAffine = true;
  static constexpr int kOffset = 0, kMaxByte = 31;
  static void Prepare(const uint8_t* row, int64_t u, Unit* out) { PrepareK4(row, u, out); }
  // Block j's 32 unsigned values: four bits from qs, the fifth from qh.
  static __m256i Values(const BlockQ5_K* x, int j) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qs + 32 * (j / 2)));
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qh));
    return _mm256_or_si256(Plane(q, 4 * (j % 2), 0x0f), _mm256_slli_epi16(Plane(qh, j, 1), 4));
  }
  static Int8Block Load(const Unit& u, int j) {
    return {Values(u.x, j), _mm256_set1_ps(u.scale[j]), _mm256_set1_ps(u.min[j])};
  }
};
struct DecodeQ6_K : KQuant<BlockQ6_K> {
  static constexpr bool kSigned = true, kAffine = false;
  static constexpr int kOffset = 32, kMaxByte = 63;
  static void Prepare(const uint8_t* row, int64_t u, Unit* out) {
    out->x = reinterpret_cast<const BlockQ6_K*>(row) + u;
    const __m256 d = _mm256_set1_ps(Fp16ToFp32(out->x->d));
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(out->x->scales));
    _mm256_storeu_ps(out->scale, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sc))));
    _mm256_storeu_ps(out->scale + 8, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(sc, 8)))));
  }
  // Block j's 32 values plus 32 (unsigned, 0-63): four bits from ql, two from qh.
  static __m256i Values(const BlockQ6_K* x, int j) {
    const int half = j / 4, k = j % 4;
    const __m256i l = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->ql + 64 * half + 32 * (k % 2)));
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qh + 32 * half));
    return _mm256_or_si256(Plane(l, k < 2 ? 0 : 4, 0x0f), _mm256_slli_epi16(Plane(h, 2 * k, 3), 4));
  }
  static Int8Block Load(const Unit& u, int j) {
    const float* sc = u.scale + 8 * (j / 4) + 2 * (j % 4);
    return {_mm256_sub_epi8(Values(u.x, j), _mm256_set1_epi8(32)), HalfScales(sc[0], sc[1]), _mm256_setzero_ps()};
  }
};

// Calls fn(D{}) with the decoder D of a block type and returns true; false for the float types,
// which have none.
template <class Fn>
bool VisitDecoder(WeightType type, Fn&& fn) {
  switch (type) {
    case WeightType::kQ8_0: fn(DecodeQ8_0{}); return true;
    case WeightType::kQ4_0: fn(DecodeQ4_0{}); return true;
    case WeightType::kQ4_1: fn(DecodeQ4_1{}); return true;
    case WeightType::kQ5_0: fn(DecodeQ5_0{}); return true;
    case WeightType::kQ5_1: fn(DecodeQ5_1{}); return true;
    case WeightType::kIQ4_NL: fn(DecodeIQ4_NL{}); return true;
    case WeightType::kQ2_K: fn(DecodeQ2_K{}); return true;
    case WeightType::kQ3_K: fn(DecodeQ3_K{}); return true;
    case WeightType::kQ4_K: fn(DecodeQ4_K{}); return true;
    case WeightType::kQ5_K: fn(DecodeQ5_K{}); return true;
    case WeightType::kQ6_K: fn(DecodeQ6_K{}); return true;
    default: return false;
  }
}

#endif  // RS_HAVE_AVX2
}  // namespace block_decoders
RS_KERNELS_END
}  // namespace radixserve::kernels
