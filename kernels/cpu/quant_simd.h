// Helpers shared by the kernels that read GGUF's block types (dequantize.cc, matmul_stream_*.cc):
// the packed scales of the K-quants and, with AVX2, the unpacking of bit planes into bytes.
// Internal to kernels/cpu; compiled into each kernel set. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace quant_simd {

// The 32 fifth bits of a Q5_0/Q5_1 block (element j at bit j).
template <typename Block>
inline uint32_t HighBits(const Block& b) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, sizeof(qh));
  return qh;
}

// Q3_K packs 16 six-bit scales into 12 bytes: the low 4 bits of scale j in byte j % 8 (low
// nibble for j < 8, high nibble after), the top 2 bits in bytes 8..11.
inline void UnpackQ3Scales(const uint8_t* packed, int8_t* out) {
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? packed[j] & 0x0f : packed[j - 8] >> 4;
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    out[j] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

// Q4_K/Q5_K: scale and minimum j (six bits each) of the 8 sub-blocks.
inline void ScaleMinK4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

#if RS_HAVE_AVX2
// A legacy block's 16 bytes of nibbles as 32 values in element order (low nibbles first).
inline __m256i Nibbles(const uint8_t* qs) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i low = _mm_set1_epi8(0x0f);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), low), _mm_and_si128(b, low));
}

// Bit j of qh as 0x10 in byte j (j < 32).
inline __m256i FifthBits(uint32_t qh) {
  const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)),
                                             _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                                              2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// 32 bytes of q, each shifted right by `shift` and masked (the 2-bit planes of Q2_K/Q3_K).
inline __m256i Plane(__m256i q, int shift, int mask) {
  return _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(shift)), _mm256_set1_epi8(static_cast<char>(mask)));
}
#endif

}  // namespace quant_simd
RS_KERNELS_END
}  // namespace radixserve::kernels
