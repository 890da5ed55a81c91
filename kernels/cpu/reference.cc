// Scalar references of the SIMD kernels (float64 accumulation where it matters): what the tests
// compare every kernel set with, and the slow paths some kernels fall back to.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/vec_ops.h"

namespace radixserve::kernels {

namespace {
// Element `off` (within the slot's row of every head) of a K or V row, whatever the storage type.
inline float KvAt(const void* base, const KvLayerView& kv, int64_t slot, int64_t off) {
  const int64_t i = slot * kv.slot_stride + off;
  switch (kv.type) {
    case WeightType::kF32: return static_cast<const float*>(base)[i];
    case WeightType::kF16: return Fp16ToFp32(static_cast<const uint16_t*>(base)[i]);
    case WeightType::kQ8_0: {
      const BlockQ8_0& b = static_cast<const BlockQ8_0*>(base)[i / kQ8BlockSize];
      return Fp16ToFp32(b.d) * static_cast<float>(b.qs[i % kQ8BlockSize]);
    }
    case WeightType::kQ4_0: {
      const BlockQ4_0& b = static_cast<const BlockQ4_0*>(base)[i / kQK];
      const int j = static_cast<int>(i % kQK);
      const int nibble = j < kQK / 2 ? b.qs[j] & 15 : b.qs[j - kQK / 2] >> 4;
      return Fp16ToFp32(b.d) * static_cast<float>(nibble - 8);
    }
    default: return std::nanf("");  // not a KV type (IsKvType)
  }
}
}  // namespace

namespace ref {
float DotF32(const float* a, const float* b, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(s);
}
float DotF16F32(const uint16_t* w, const float* x, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(Fp16ToFp32Portable(w[i])) * x[i];
  return static_cast<float>(s);
}
float DotBf16F32(const uint16_t* w, const float* x, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(Bf16ToFp32(w[i])) * x[i];
  return static_cast<float>(s);
}
void RmsNorm(const float* x, const float* w, float eps, float* y, int64_t n) {
  double ss = 0.0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(ss / n + eps));
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale * w[i];
}
void SiluMul(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}
void SoftCap(float* x, int64_t n, float cap) {
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(cap * std::tanh(static_cast<double>(x[i]) / cap));
}
void Softmax(float* x, int64_t n) {
  float mx = -INFINITY;
  for (int64_t i = 0; i < n; ++i) mx = std::fmax(mx, x[i]);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}
void RopeNorm(float* x, int num_heads, int head_dim, int rot_dim, const float* cos_sin) {
  for (int h = 0; h < num_heads; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    for (int i = 0; i < rot_dim / 2; ++i) {
      const float c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
      const float a = v[2 * i], b = v[2 * i + 1];
      v[2 * i] = a * c - b * s;
      v[2 * i + 1] = a * s + b * c;
    }
  }
}
void RopeNeox(float* x, int num_heads, int head_dim, int rot_dim, const float* cos_sin) {
  const int half = rot_dim / 2;
  for (int h = 0; h < num_heads; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    for (int i = 0; i < half; ++i) {
      const float c = cos_sin[2 * i], s = cos_sin[2 * i + 1];
      const float a = v[i], b = v[i + half];
      v[i] = a * c - b * s;
      v[i + half] = a * s + b * c;
    }
  }
}
void GeluMul(const float* gate, const float* up, float* out, int64_t n) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = 0.5f * g * (1.0f + std::tanh(kSqrt2OverPi * g * (1.0f + 0.044715f * g * g))) * up[i];
  }
}
}  // namespace ref

namespace ref {
void QuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQ8BlockSize; ++b) {
    const float* xb = x + b * kQ8BlockSize;
    float amax = 0.0f;
    for (int i = 0; i < kQ8BlockSize; ++i) amax = std::fmax(amax, std::fabs(xb[i]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = Fp32ToFp16(d);
    for (int i = 0; i < kQ8BlockSize; ++i) y[b].qs[i] = static_cast<int8_t>(std::nearbyint(xb[i] * id));
  }
}

float DotQ8_0(const BlockQ8_0* a, const BlockQ8_0* b, int64_t n) {
  float sum = 0.0f;
  for (int64_t k = 0; k < n / kQ8BlockSize; ++k) {
    int32_t acc = 0;
    for (int i = 0; i < kQ8BlockSize; ++i) acc += int32_t{a[k].qs[i]} * int32_t{b[k].qs[i]};
    sum += Fp16ToFp32(a[k].d) * Fp16ToFp32(b[k].d) * static_cast<float>(acc);
  }
  return sum;
}
}  // namespace ref

namespace ref {
void AttendSlots(const float* q, int group, const KvLayerView& kv, int kv_head, const int32_t* slots,
                 int64_t n_keys, int head_dim, float scale, float* scores, float* out, float softcap) {
  const int64_t head_off = static_cast<int64_t>(kv_head) * head_dim;
  for (int g = 0; g < group; ++g) {
    float* s = scores + g * n_keys;
    for (int64_t j = 0; j < n_keys; ++j) {
      double dot = 0.0;
      for (int d = 0; d < head_dim; ++d) dot += double(q[g * head_dim + d]) * KvAt(kv.k, kv, slots[j], head_off + d);
      s[j] = static_cast<float>(dot) * scale;
    }
    if (softcap > 0.0f) ref::SoftCap(s, n_keys, softcap);
    ref::Softmax(s, n_keys);
    float* o = out + g * head_dim;
    std::fill(o, o + head_dim, 0.0f);
    for (int64_t j = 0; j < n_keys; ++j)
      for (int d = 0; d < head_dim; ++d) o[d] += s[j] * KvAt(kv.v, kv, slots[j], head_off + d);
  }
}
}  // namespace ref

namespace ref {
void ConvertF16ToF32(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = Fp16ToFp32Portable(src[i]);
}
void ConvertBf16ToF32(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = Bf16ToFp32(src[i]);
}
}  // namespace ref

}  // namespace radixserve::kernels
