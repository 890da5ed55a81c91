#include "kernels/cpu/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/quant_blocks.h"

namespace radixserve::kernels {
namespace {

int Nearest(float v) { return static_cast<int>(std::nearbyint(v)); }
int Clamp(int v, int lo, int hi) { return std::min(hi, std::max(lo, v)); }
// The scale as stored (fp16), so that the values are quantised against what a reader will use.
float StoredFp16(float v, uint16_t* out) {
  *out = Fp32ToFp16(v);
  return Fp16ToFp32(*out);
}

// The value of largest magnitude, with its sign.
float SignedMaxAbs(const float* x, int n) {
  float m = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(m)) m = x[i];
  return m;
}

// Symmetric block: value = d * (q - offset), q in [0, 2 * offset - 1], d from the extreme value.
template <int kOffset>
float SymmetricQuants(const float* x, int n, uint16_t* d_out, int* q) {
  const float d = StoredFp16(SignedMaxAbs(x, n) / -kOffset, d_out);
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int i = 0; i < n; ++i) q[i] = Clamp(Nearest(x[i] * id) + kOffset, 0, 2 * kOffset - 1);
  return d;
}

// Block with a minimum: value = d * q + m, q in [0, kLevels - 1].
template <int kLevels>
void AffineQuants(const float* x, int n, uint16_t* d_out, uint16_t* m_out, int* q) {
  const float mn = *std::min_element(x, x + n), mx = *std::max_element(x, x + n);
  const float d = StoredFp16((mx - mn) / (kLevels - 1), d_out);
  const float m = StoredFp16(mn, m_out);
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int i = 0; i < n; ++i) q[i] = Clamp(Nearest((x[i] - m) * id), 0, kLevels - 1);
}

void PackNibbles(const int* q, uint8_t* qs) {
  for (int j = 0; j < kQK / 2; ++j) qs[j] = static_cast<uint8_t>((q[j] & 15) | ((q[j + 16] & 15) << 4));
}

void PackFifthBits(const int* q, uint8_t* qh) {
  uint32_t bits = 0;
  for (int j = 0; j < kQK; ++j) bits |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
  std::memcpy(qh, &bits, 4);
}

void Q4_0(const float* x, BlockQ4_0* b) {
  int q[kQK];
  SymmetricQuants<8>(x, kQK, &b->d, q);
  PackNibbles(q, b->qs);
}
void Q5_0(const float* x, BlockQ5_0* b) {
  int q[kQK];
  SymmetricQuants<16>(x, kQK, &b->d, q);
  PackNibbles(q, b->qs);
  PackFifthBits(q, b->qh);
}
void Q4_1(const float* x, BlockQ4_1* b) {
  int q[kQK];
  AffineQuants<16>(x, kQK, &b->d, &b->m, q);
  PackNibbles(q, b->qs);
}
void Q5_1(const float* x, BlockQ5_1* b) {
  int q[kQK];
  AffineQuants<32>(x, kQK, &b->d, &b->m, q);
  PackNibbles(q, b->qs);
  PackFifthBits(q, b->qh);
}

int NearestLevel(float v) {
  int best = 0;
  for (int k = 1; k < 16; ++k)
    if (std::fabs(v - kIQ4NLValues[k]) < std::fabs(v - kIQ4NLValues[best])) best = k;
  return best;
}

void IQ4_NL(const float* x, BlockIQ4_NL* b) {
  int q[kQK];
  float d = SignedMaxAbs(x, kQK) / kIQ4NLValues[0];
  float id = d != 0 ? 1.0f / d : 0.0f;
  for (int i = 0; i < kQK; ++i) q[i] = NearestLevel(x[i] * id);
  // One least-squares step for the scale of the chosen levels, then the levels again.
  double xv = 0, vv = 0;
  for (int i = 0; i < kQK; ++i) xv += x[i] * kIQ4NLValues[q[i]], vv += kIQ4NLValues[q[i]] * kIQ4NLValues[q[i]];
  if (vv > 0) d = static_cast<float>(xv / vv);
  d = StoredFp16(d, &b->d);
  id = d != 0 ? 1.0f / d : 0.0f;
  for (int i = 0; i < kQK; ++i) q[i] = NearestLevel(x[i] * id);
  PackNibbles(q, b->qs);
}

// A K-quant sub-block with a minimum: value = scale * q - min, min >= 0 (so 0 is representable).
struct ScaleMin {
  float scale, min;
};
ScaleMin SubBlockScaleMin(const float* x, int n, int levels) {
  const float mn = std::min(0.0f, *std::min_element(x, x + n)), mx = *std::max_element(x, x + n);
  return {(mx - mn) / (levels - 1), -mn};
}

// Quantises the sub-block scales and minimums to `bits` bits against two fp16 super-scales.
void QuantizeScales(const ScaleMin* sm, int n, int bits, uint16_t* d_out, uint16_t* dmin_out, int* sc, int* mq) {
  const int top = (1 << bits) - 1;
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < n; ++j) max_scale = std::max(max_scale, sm[j].scale), max_min = std::max(max_min, sm[j].min);
  const float d = StoredFp16(max_scale / top, d_out), dmin = StoredFp16(max_min / top, dmin_out);
  for (int j = 0; j < n; ++j) {
    sc[j] = d > 0 ? Clamp(Nearest(sm[j].scale / d), 0, top) : 0;
    mq[j] = dmin > 0 ? Clamp(Nearest(sm[j].min / dmin), 0, top) : 0;
  }
}

void Q2_K(const float* x, BlockQ2_K* b) {
  ScaleMin sm[16];
  for (int j = 0; j < 16; ++j) sm[j] = SubBlockScaleMin(x + 16 * j, 16, 4);
  int sc[16], mq[16];
  QuantizeScales(sm, 16, 4, &b->d, &b->dmin, sc, mq);
  const float d = Fp16ToFp32(b->d), dmin = Fp16ToFp32(b->dmin);
  std::memset(b->qs, 0, sizeof(b->qs));
  for (int j = 0; j < 16; ++j) b->scales[j] = static_cast<uint8_t>(sc[j] | (mq[j] << 4));
  for (int e = 0; e < kQK_K; ++e) {
    const int j = e / 16;
    const float step = d * sc[j];
    const int q = step > 0 ? Clamp(Nearest((x[e] + dmin * mq[j]) / step), 0, 3) : 0;
    const int r = e % 128;
    b->qs[(e / 128) * 32 + r % 32] |= static_cast<uint8_t>(q << (2 * (r / 32)));
  }
}

void Q3_K(const float* x, BlockQ3_K* b) {
  float s[16];
  for (int j = 0; j < 16; ++j) s[j] = SignedMaxAbs(x + 16 * j, 16) / -4.0f;
  const float d = StoredFp16(SignedMaxAbs(s, 16) / -32.0f, &b->d);
  int sc[16];
  for (int j = 0; j < 16; ++j) sc[j] = d != 0 ? Clamp(Nearest(s[j] / d), -32, 31) : 0;
  std::memset(b->scales, 0, sizeof(b->scales));
  for (int j = 0; j < 16; ++j) {
    const int u = sc[j] + 32;
    if (j < 8) b->scales[j] |= static_cast<uint8_t>(u & 15);
    else b->scales[j - 8] |= static_cast<uint8_t>((u & 15) << 4);
    b->scales[8 + j % 4] |= static_cast<uint8_t>((u >> 4) << (2 * (j / 4)));
  }
  std::memset(b->qs, 0, sizeof(b->qs));
  std::memset(b->hmask, 0, sizeof(b->hmask));
  for (int e = 0; e < kQK_K; ++e) {
    const float step = d * sc[e / 16];
    const int u = (step != 0 ? Clamp(Nearest(x[e] / step), -4, 3) : 0) + 4;
    const int r = e % 128, half = e / 128;
    b->qs[half * 32 + r % 32] |= static_cast<uint8_t>((u & 3) << (2 * (r / 32)));
    b->hmask[r % 32] |= static_cast<uint8_t>((u >> 2) << (half * 4 + r / 32));
  }
}

// Q4_K/Q5_K: 8 scales and 8 minimums of 6 bits in 12 bytes (the inverse of ScaleMinK4).
void PackScalesK4(const int* sc, const int* mq, uint8_t* q) {
  std::memset(q, 0, 12);
  for (int j = 0; j < 4; ++j) {
    q[j] = static_cast<uint8_t>(sc[j]);
    q[j + 4] = static_cast<uint8_t>(mq[j]);
  }
  for (int j = 4; j < 8; ++j) {
    q[j + 4] = static_cast<uint8_t>((sc[j] & 15) | ((mq[j] & 15) << 4));
    q[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
    q[j] |= static_cast<uint8_t>((mq[j] >> 4) << 6);
  }
}

// Q4_K (kBits 4) and Q5_K (kBits 5): the sub-block quants for 8 sub-blocks of 32.
template <int kBits, typename Block>
void QuantsK(const float* x, Block* b, int* q) {
  ScaleMin sm[8];
  for (int j = 0; j < 8; ++j) sm[j] = SubBlockScaleMin(x + 32 * j, 32, 1 << kBits);
  int sc[8], mq[8];
  QuantizeScales(sm, 8, 6, &b->d, &b->dmin, sc, mq);
  PackScalesK4(sc, mq, b->scales);
  const float d = Fp16ToFp32(b->d), dmin = Fp16ToFp32(b->dmin);
  for (int e = 0; e < kQK_K; ++e) {
    const int j = e / 32;
    const float step = d * sc[j];
    q[e] = step > 0 ? Clamp(Nearest((x[e] + dmin * mq[j]) / step), 0, (1 << kBits) - 1) : 0;
  }
  for (int e = 0; e < kQK_K; ++e) {
    const int p = e / 64, r = e % 64;
    if (r < 32) b->qs[32 * p + r] = static_cast<uint8_t>(q[e] & 15);
    else b->qs[32 * p + r - 32] |= static_cast<uint8_t>((q[e] & 15) << 4);
  }
}

void Q4_K(const float* x, BlockQ4_K* b) {
  int q[kQK_K];
  QuantsK<4>(x, b, q);
}

void Q5_K(const float* x, BlockQ5_K* b) {
  int q[kQK_K];
  QuantsK<5>(x, b, q);
  std::memset(b->qh, 0, sizeof(b->qh));
  for (int e = 0; e < kQK_K; ++e) b->qh[e % 32] |= static_cast<uint8_t>(((q[e] >> 4) & 1) << (e / 32));
}

void Q6_K(const float* x, BlockQ6_K* b) {
  float s[16];
  for (int j = 0; j < 16; ++j) s[j] = SignedMaxAbs(x + 16 * j, 16) / -32.0f;
  const float d = StoredFp16(SignedMaxAbs(s, 16) / -128.0f, &b->d);
  for (int j = 0; j < 16; ++j) b->scales[j] = static_cast<int8_t>(d != 0 ? Clamp(Nearest(s[j] / d), -128, 127) : 0);
  std::memset(b->ql, 0, sizeof(b->ql));
  std::memset(b->qh, 0, sizeof(b->qh));
  for (int e = 0; e < kQK_K; ++e) {
    const float step = d * b->scales[e / 16];
    const int u = (step != 0 ? Clamp(Nearest(x[e] / step), -32, 31) : 0) + 32;
    const int h = e / 128, r = e % 128, k = r / 32, l = r % 32;
    b->ql[64 * h + (k % 2) * 32 + l] |= static_cast<uint8_t>((u & 15) << (k < 2 ? 0 : 4));
    b->qh[32 * h + l] |= static_cast<uint8_t>((u >> 4) << (2 * k));
  }
}

template <typename Block, typename Fn>
void EachBlock(const float* x, void* dst, int64_t n, int block_elems, Fn fn) {
  Block* b = static_cast<Block*>(dst);
  for (int64_t i = 0; i < n / block_elems; ++i) fn(x + i * block_elems, b + i);
}

}  // namespace

void QuantizeBlocks(WeightType type, const float* x, void* dst, int64_t n) {
  switch (type) {
    case WeightType::kF32: std::memcpy(dst, x, n * 4); return;
    case WeightType::kF16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = Fp32ToFp16(x[i]);
      return;
    case WeightType::kBF16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = Fp32ToBf16(x[i]);
      return;
    case WeightType::kQ8_0: return ref::QuantizeRowQ8_0(x, static_cast<BlockQ8_0*>(dst), n);
    case WeightType::kQ4_0: return EachBlock<BlockQ4_0>(x, dst, n, kQK, Q4_0);
    case WeightType::kQ4_1: return EachBlock<BlockQ4_1>(x, dst, n, kQK, Q4_1);
    case WeightType::kQ5_0: return EachBlock<BlockQ5_0>(x, dst, n, kQK, Q5_0);
    case WeightType::kQ5_1: return EachBlock<BlockQ5_1>(x, dst, n, kQK, Q5_1);
    case WeightType::kIQ4_NL: return EachBlock<BlockIQ4_NL>(x, dst, n, kQK, IQ4_NL);
    case WeightType::kQ2_K: return EachBlock<BlockQ2_K>(x, dst, n, kQK_K, Q2_K);
    case WeightType::kQ3_K: return EachBlock<BlockQ3_K>(x, dst, n, kQK_K, Q3_K);
    case WeightType::kQ4_K: return EachBlock<BlockQ4_K>(x, dst, n, kQK_K, Q4_K);
    case WeightType::kQ5_K: return EachBlock<BlockQ5_K>(x, dst, n, kQK_K, Q5_K);
    case WeightType::kQ6_K: return EachBlock<BlockQ6_K>(x, dst, n, kQK_K, Q6_K);
  }
}

}  // namespace radixserve::kernels
