// Dequantisation of GGUF's block types: plain loops (the scalar set, and the definition) and
// their AVX2 forms (the other sets); compiled with -ffp-contract=off so that the products and
// sums round exactly as ggml's to_float does (tests compare the bits in every set).
#include <cstring>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quant_simd.h"
#include "kernels/cpu/simd.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace {

using namespace quant_simd;

[[maybe_unused]] void Q4_0(const BlockQ4_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = Fp16ToFp32(x[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = static_cast<float>((x[i].qs[j] & 0x0f) - 8) * d;
      y[j + 16] = static_cast<float>((x[i].qs[j] >> 4) - 8) * d;
    }
  }
}

[[maybe_unused]] void Q4_1(const BlockQ4_1* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = Fp16ToFp32(x[i].d), m = Fp16ToFp32(x[i].m);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = static_cast<float>(x[i].qs[j] & 0x0f) * d + m;
      y[j + 16] = static_cast<float>(x[i].qs[j] >> 4) * d + m;
    }
  }
}


[[maybe_unused]] void Q5_0(const BlockQ5_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = Fp16ToFp32(x[i].d);
    const uint32_t qh = HighBits(x[i]);
    for (int j = 0; j < kQK / 2; ++j) {
      const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10);
      const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10);
      y[j] = static_cast<float>(((x[i].qs[j] & 0x0f) | h0) - 16) * d;
      y[j + 16] = static_cast<float>(((x[i].qs[j] >> 4) | h1) - 16) * d;
    }
  }
}

[[maybe_unused]] void Q5_1(const BlockQ5_1* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = Fp16ToFp32(x[i].d), m = Fp16ToFp32(x[i].m);
    const uint32_t qh = HighBits(x[i]);
    for (int j = 0; j < kQK / 2; ++j) {
      const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10);
      const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10);
      y[j] = static_cast<float>((x[i].qs[j] & 0x0f) | h0) * d + m;
      y[j + 16] = static_cast<float>((x[i].qs[j] >> 4) | h1) * d + m;
    }
  }
}

[[maybe_unused]] void IQ4_NL(const BlockIQ4_NL* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = Fp16ToFp32(x[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = d * static_cast<float>(kIQ4NLValues[x[i].qs[j] & 0x0f]);
      y[j + 16] = d * static_cast<float>(kIQ4NLValues[x[i].qs[j] >> 4]);
    }
  }
}

[[maybe_unused]] void Q2_K(const BlockQ2_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = Fp16ToFp32(x[i].d), dmin = Fp16ToFp32(x[i].dmin);
    const uint8_t* q = x[i].qs;
    int is = 0;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part, ++is, y += 16) {
          const uint8_t sc = x[i].scales[is];
          const float dl = d * static_cast<float>(sc & 0x0f), ml = dmin * static_cast<float>(sc >> 4);
          for (int l = 0; l < 16; ++l) y[l] = dl * static_cast<float>((q[l + 16 * part] >> shift) & 3) - ml;
        }
      }
    }
  }
}


[[maybe_unused]] void Q3_K(const BlockQ3_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = Fp16ToFp32(x[i].d);
    int8_t scales[16];
    UnpackQ3Scales(x[i].scales, scales);
    const uint8_t* q = x[i].qs;
    int is = 0;
    uint8_t bit = 1;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int shift = 0; shift < 8; shift += 2, bit = static_cast<uint8_t>(bit << 1)) {
        for (int part = 0; part < 2; ++part, ++is, y += 16) {
          const float dl = d * static_cast<float>(scales[is]);
          for (int l = 0; l < 16; ++l) {
            const int lo = (q[l + 16 * part] >> shift) & 3;
            const int hi = (x[i].hmask[l + 16 * part] & bit) ? 0 : 4;
            y[l] = dl * static_cast<float>(lo - hi);
          }
        }
      }
    }
  }
}


// Q4_K, and Q5_K (kFifth) with its fifth bits from qh: 8 sub-blocks of 32 with a scale and a minimum.
template <bool kFifth, typename Block>
void K4Blocks(const Block* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = Fp16ToFp32(x[i].d), dmin = Fp16ToFp32(x[i].dmin);
    const uint8_t* q = x[i].qs;
    for (int j = 0; j < 8; j += 2, q += 32, y += 64) {
      uint8_t sc, m;
      ScaleMinK4(j, x[i].scales, &sc, &m);
      const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
      ScaleMinK4(j + 1, x[i].scales, &sc, &m);
      const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) {
        int h0 = 0, h1 = 0;
        if constexpr (kFifth) {
          h0 = ((x[i].qh[l] >> j) & 1) << 4;
          h1 = ((x[i].qh[l] >> (j + 1)) & 1) << 4;
        }
        y[l] = d1 * static_cast<float>((q[l] & 0x0f) | h0) - m1;
        y[l + 32] = d2 * static_cast<float>((q[l] >> 4) | h1) - m2;
      }
    }
  }
}
[[maybe_unused]] void Q4_K(const BlockQ4_K* x, float* y, int64_t nb) { K4Blocks<false>(x, y, nb); }
[[maybe_unused]] void Q5_K(const BlockQ5_K* x, float* y, int64_t nb) { K4Blocks<true>(x, y, nb); }

[[maybe_unused]] void Q6_K(const BlockQ6_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = Fp16ToFp32(x[i].d);
    const uint8_t* ql = x[i].ql;
    const uint8_t* qh = x[i].qh;
    const int8_t* sc = x[i].scales;
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, y += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
        y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
    }
  }
}


#if RS_HAVE_AVX2
// The AVX2 forms of the loops above: the same products and sums in the same order (mul, then
// add or sub; never fused), so the bits are the same.
namespace simd_deq {

inline __m256 Cvt8(__m128i q8) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q8)); }

// y[i] = float(q[i]) * d (+ m, or - m) for 16 int8 values.
template <int kMin>  // 0: none, 1: + m, -1: - m
inline void Store16(float* y, __m128i q, __m256 d, __m256 m) {
  __m256 a = _mm256_mul_ps(Cvt8(q), d), b = _mm256_mul_ps(Cvt8(_mm_srli_si128(q, 8)), d);
  if constexpr (kMin > 0) a = _mm256_add_ps(a, m), b = _mm256_add_ps(b, m);
  if constexpr (kMin < 0) a = _mm256_sub_ps(a, m), b = _mm256_sub_ps(b, m);
  _mm256_storeu_ps(y, a);
  _mm256_storeu_ps(y + 8, b);
}
template <int kMin>
inline void Store32(float* y, __m256i q, __m256 d, __m256 m) {
  Store16<kMin>(y, _mm256_castsi256_si128(q), d, m);
  Store16<kMin>(y + 16, _mm256_extracti128_si256(q, 1), d, m);
}



void Q4_0(const BlockQ4_0* x, float* y, int64_t nb) {
  const __m256i eight = _mm256_set1_epi8(8);
  for (int64_t i = 0; i < nb; ++i, y += kQK)
    Store32<0>(y, _mm256_sub_epi8(Nibbles(x[i].qs), eight), _mm256_set1_ps(Fp16ToFp32(x[i].d)), __m256());
}
void Q4_1(const BlockQ4_1* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK)
    Store32<1>(y, Nibbles(x[i].qs), _mm256_set1_ps(Fp16ToFp32(x[i].d)), _mm256_set1_ps(Fp16ToFp32(x[i].m)));
}
void Q5_0(const BlockQ5_0* x, float* y, int64_t nb) {
  const __m256i sixteen = _mm256_set1_epi8(16);
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const __m256i q = _mm256_or_si256(Nibbles(x[i].qs), FifthBits(HighBits(x[i])));
    Store32<0>(y, _mm256_sub_epi8(q, sixteen), _mm256_set1_ps(Fp16ToFp32(x[i].d)), __m256());
  }
}
void Q5_1(const BlockQ5_1* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const __m256i q = _mm256_or_si256(Nibbles(x[i].qs), FifthBits(HighBits(x[i])));
    Store32<1>(y, q, _mm256_set1_ps(Fp16ToFp32(x[i].d)), _mm256_set1_ps(Fp16ToFp32(x[i].m)));
  }
}
void IQ4_NL(const BlockIQ4_NL* x, float* y, int64_t nb) {
  const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4NLValues));
  const __m256i table2 = _mm256_set_m128i(table, table);
  for (int64_t i = 0; i < nb; ++i, y += kQK)
    Store32<0>(y, _mm256_shuffle_epi8(table2, Nibbles(x[i].qs)), _mm256_set1_ps(Fp16ToFp32(x[i].d)), __m256());
}


void Q2_K(const BlockQ2_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = Fp16ToFp32(x[i].d), dmin = Fp16ToFp32(x[i].dmin);
    int is = 0;
    for (int half = 0; half < 2; ++half) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qs + 32 * half));
      for (int shift = 0; shift < 8; shift += 2) {
        const __m256i v = Plane(q, shift, 3);
        for (int part = 0; part < 2; ++part, ++is, y += 16) {
          const uint8_t sc = x[i].scales[is];
          const __m128i v16 = part ? _mm256_extracti128_si256(v, 1) : _mm256_castsi256_si128(v);
          Store16<-1>(y, v16, _mm256_set1_ps(d * static_cast<float>(sc & 0x0f)),
                      _mm256_set1_ps(dmin * static_cast<float>(sc >> 4)));
        }
      }
    }
  }
}

void Q3_K(const BlockQ3_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = Fp16ToFp32(x[i].d);
    int8_t scales[16];
    UnpackQ3Scales(x[i].scales, scales);
    const __m256i hmask = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].hmask));
    int is = 0, bit = 0;
    for (int half = 0; half < 2; ++half) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qs + 32 * half));
      for (int shift = 0; shift < 8; shift += 2, ++bit) {
        const __m256i b = _mm256_set1_epi8(static_cast<char>(1 << bit));
        const __m256i missing = _mm256_cmpeq_epi8(_mm256_and_si256(hmask, b), _mm256_setzero_si256());
        const __m256i v = _mm256_sub_epi8(Plane(q, shift, 3), _mm256_and_si256(missing, _mm256_set1_epi8(4)));
        for (int part = 0; part < 2; ++part, ++is, y += 16) {
          const __m128i v16 = part ? _mm256_extracti128_si256(v, 1) : _mm256_castsi256_si128(v);
          Store16<0>(y, v16, _mm256_set1_ps(d * static_cast<float>(scales[is])), __m256());
        }
      }
    }
  }
}

void Q4_K(const BlockQ4_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = Fp16ToFp32(x[i].d), dmin = Fp16ToFp32(x[i].dmin);
    for (int j = 0; j < 8; j += 2, y += 64) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qs + 16 * j));
      uint8_t sc, m;
      ScaleMinK4(j, x[i].scales, &sc, &m);
      Store32<-1>(y, Plane(q, 0, 0x0f), _mm256_set1_ps(d * static_cast<float>(sc)),
                  _mm256_set1_ps(dmin * static_cast<float>(m)));
      ScaleMinK4(j + 1, x[i].scales, &sc, &m);
      Store32<-1>(y + 32, Plane(q, 4, 0x0f), _mm256_set1_ps(d * static_cast<float>(sc)),
                  _mm256_set1_ps(dmin * static_cast<float>(m)));
    }
  }
}

void Q5_K(const BlockQ5_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = Fp16ToFp32(x[i].d), dmin = Fp16ToFp32(x[i].dmin);
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qh));
    for (int j = 0; j < 8; j += 2, y += 64) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qs + 16 * j));
      const __m256i h0 = _mm256_slli_epi16(Plane(qh, j, 1), 4), h1 = _mm256_slli_epi16(Plane(qh, j + 1, 1), 4);
      uint8_t sc, m;
      ScaleMinK4(j, x[i].scales, &sc, &m);
      Store32<-1>(y, _mm256_or_si256(Plane(q, 0, 0x0f), h0), _mm256_set1_ps(d * static_cast<float>(sc)),
                  _mm256_set1_ps(dmin * static_cast<float>(m)));
      ScaleMinK4(j + 1, x[i].scales, &sc, &m);
      Store32<-1>(y + 32, _mm256_or_si256(Plane(q, 4, 0x0f), h1), _mm256_set1_ps(d * static_cast<float>(sc)),
                  _mm256_set1_ps(dmin * static_cast<float>(m)));
    }
  }
}

void Q6_K(const BlockQ6_K* x, float* y, int64_t nb) {
  const __m256i thirty_two = _mm256_set1_epi8(32);
  for (int64_t i = 0; i < nb; ++i) {
    const float d = Fp16ToFp32(x[i].d);
    for (int half = 0; half < 2; ++half, y += 128) {
      const uint8_t* ql = x[i].ql + 64 * half;
      const int8_t* sc = x[i].scales + 8 * half;
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qh + 32 * half));
      const __m256i q[4] = {
          _mm256_or_si256(Plane(l0, 0, 0x0f), _mm256_slli_epi16(Plane(h, 0, 3), 4)),
          _mm256_or_si256(Plane(l1, 0, 0x0f), _mm256_slli_epi16(Plane(h, 2, 3), 4)),
          _mm256_or_si256(Plane(l0, 4, 0x0f), _mm256_slli_epi16(Plane(h, 4, 3), 4)),
          _mm256_or_si256(Plane(l1, 4, 0x0f), _mm256_slli_epi16(Plane(h, 6, 3), 4)),
      };
      for (int k = 0; k < 4; ++k) {
        const __m256i v = _mm256_sub_epi8(q[k], thirty_two);
        Store16<0>(y + 32 * k, _mm256_castsi256_si128(v), _mm256_set1_ps(d * static_cast<float>(sc[2 * k])), __m256());
        Store16<0>(y + 32 * k + 16, _mm256_extracti128_si256(v, 1),
                   _mm256_set1_ps(d * static_cast<float>(sc[2 * k + 1])), __m256());
      }
    }
  }
}

}  // namespace simd_deq
#define RS_DEQ simd_deq::
#else
#define RS_DEQ
#endif

}  // namespace

void DequantizeBlocks(WeightType type, const void* src, float* dst, int64_t n) {
  const int64_t nb = n / GetWeightTypeInfo(type).block_elems;
  switch (type) {
    case WeightType::kQ4_0: return RS_DEQ Q4_0(static_cast<const BlockQ4_0*>(src), dst, nb);
    case WeightType::kQ4_1: return RS_DEQ Q4_1(static_cast<const BlockQ4_1*>(src), dst, nb);
    case WeightType::kQ5_0: return RS_DEQ Q5_0(static_cast<const BlockQ5_0*>(src), dst, nb);
    case WeightType::kQ5_1: return RS_DEQ Q5_1(static_cast<const BlockQ5_1*>(src), dst, nb);
    case WeightType::kQ8_0: return DequantizeRowQ8_0(static_cast<const BlockQ8_0*>(src), dst, n);
    case WeightType::kIQ4_NL: return RS_DEQ IQ4_NL(static_cast<const BlockIQ4_NL*>(src), dst, nb);
    case WeightType::kQ2_K: return RS_DEQ Q2_K(static_cast<const BlockQ2_K*>(src), dst, nb);
    case WeightType::kQ3_K: return RS_DEQ Q3_K(static_cast<const BlockQ3_K*>(src), dst, nb);
    case WeightType::kQ4_K: return RS_DEQ Q4_K(static_cast<const BlockQ4_K*>(src), dst, nb);
    case WeightType::kQ5_K: return RS_DEQ Q5_K(static_cast<const BlockQ5_K*>(src), dst, nb);
    case WeightType::kQ6_K: return RS_DEQ Q6_K(static_cast<const BlockQ6_K*>(src), dst, nb);
    case WeightType::kF32:
    case WeightType::kF16:
    case WeightType::kBF16: break;  // convert.h
  }
}

RS_KERNELS_END
}  // namespace radixserve::kernels
