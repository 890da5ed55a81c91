// Dequantisation of GGUF's block types. Written as fixed-length loops without branches so that
// the compiler vectorises them for each kernel set; compiled with -ffp-contract=off so that the
// products and sums round exactly as ggml's to_float does (tests compare the bits).
#include <cstring>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/quant_blocks.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace {

void Q4_0(const BlockQ4_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = Fp16ToFp32(x[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = static_cast<float>((x[i].qs[j] & 0x0f) - 8) * d;
      y[j + 16] = static_cast<float>((x[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void Q4_1(const BlockQ4_1* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = Fp16ToFp32(x[i].d), m = Fp16ToFp32(x[i].m);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = static_cast<float>(x[i].qs[j] & 0x0f) * d + m;
      y[j + 16] = static_cast<float>(x[i].qs[j] >> 4) * d + m;
    }
  }
}

template <typename Block>
uint32_t HighBits(const Block& b) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, sizeof(qh));
  return qh;
}

void Q5_0(const BlockQ5_0* x, float* y, int64_t nb) {
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

void Q5_1(const BlockQ5_1* x, float* y, int64_t nb) {
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

void IQ4_NL(const BlockIQ4_NL* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = Fp16ToFp32(x[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = d * static_cast<float>(kIQ4NLValues[x[i].qs[j] & 0x0f]);
      y[j + 16] = d * static_cast<float>(kIQ4NLValues[x[i].qs[j] >> 4]);
    }
  }
}

void Q2_K(const BlockQ2_K* x, float* y, int64_t nb) {
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

// Q3_K packs 16 six-bit scales into 12 bytes: the low 4 bits of scale j in byte j % 8 (low
// nibble for j < 8, high nibble after), the top 2 bits in bytes 8..11.
void UnpackQ3Scales(const uint8_t* packed, int8_t* out) {
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? packed[j] & 0x0f : packed[j - 8] >> 4;
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    out[j] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

void Q3_K(const BlockQ3_K* x, float* y, int64_t nb) {
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

// Q4_K/Q5_K: scale and minimum j (six bits each) of the 8 sub-blocks.
void ScaleMinK4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

void Q4_K(const BlockQ4_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = Fp16ToFp32(x[i].d), dmin = Fp16ToFp32(x[i].dmin);
    const uint8_t* q = x[i].qs;
    for (int j = 0; j < 8; j += 2, q += 32, y += 64) {
      uint8_t sc, m;
      ScaleMinK4(j, x[i].scales, &sc, &m);
      const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
      ScaleMinK4(j + 1, x[i].scales, &sc, &m);
      const float d2 = d * static_cast<float>(sc), m2 = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) y[l] = d1 * static_cast<float>(q[l] & 0x0f) - m1;
      for (int l = 0; l < 32; ++l) y[l + 32] = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

void Q5_K(const BlockQ5_K* x, float* y, int64_t nb) {
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
        const int h = ((x[i].qh[l] >> j) & 1) << 4;
        y[l] = d1 * static_cast<float>((q[l] & 0x0f) | h) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        const int h = ((x[i].qh[l] >> (j + 1)) & 1) << 4;
        y[l + 32] = d2 * static_cast<float>((q[l] >> 4) | h) - m2;
      }
    }
  }
}

void Q6_K(const BlockQ6_K* x, float* y, int64_t nb) {
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

}  // namespace

void DequantizeBlocks(WeightType type, const void* src, float* dst, int64_t n) {
  const int64_t nb = n / GetWeightTypeInfo(type).block_elems;
  switch (type) {
    case WeightType::kQ4_0: return Q4_0(static_cast<const BlockQ4_0*>(src), dst, nb);
    case WeightType::kQ4_1: return Q4_1(static_cast<const BlockQ4_1*>(src), dst, nb);
    case WeightType::kQ5_0: return Q5_0(static_cast<const BlockQ5_0*>(src), dst, nb);
    case WeightType::kQ5_1: return Q5_1(static_cast<const BlockQ5_1*>(src), dst, nb);
    case WeightType::kQ8_0: return DequantizeRowQ8_0(static_cast<const BlockQ8_0*>(src), dst, n);
    case WeightType::kIQ4_NL: return IQ4_NL(static_cast<const BlockIQ4_NL*>(src), dst, nb);
    case WeightType::kQ2_K: return Q2_K(static_cast<const BlockQ2_K*>(src), dst, nb);
    case WeightType::kQ3_K: return Q3_K(static_cast<const BlockQ3_K*>(src), dst, nb);
    case WeightType::kQ4_K: return Q4_K(static_cast<const BlockQ4_K*>(src), dst, nb);
    case WeightType::kQ5_K: return Q5_K(static_cast<const BlockQ5_K*>(src), dst, nb);
    case WeightType::kQ6_K: return Q6_K(static_cast<const BlockQ6_K*>(src), dst, nb);
    case WeightType::kF32:
    case WeightType::kF16:
    case WeightType::kBF16: break;  // convert.h
  }
}

RS_KERNELS_END
}  // namespace radixserve::kernels
