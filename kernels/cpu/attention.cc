#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/vec_ops.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN




#if RS_HAVE_AVX512
namespace {

// head_dim = 16 * V, group = G: q and the outputs stay in registers; each key
// and value row is loaded once for all G heads.
template <bool kF16>
inline __m512 Load16(const void* base, int64_t i) {
  if constexpr (kF16) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(base) + i)));
  } else {
    return _mm512_loadu_ps(static_cast<const float*>(base) + i);
  }
}

template <bool kF16>
inline const char* RowAddr(const void* base, int64_t i) {
  return static_cast<const char*>(base) + i * (kF16 ? 2 : 4);
}

template <bool kF16, int V, int G>
void AttendSlotsTiled(const float* q, const KvLayerView& kv, int kv_head, const int32_t* slots, int64_t n_keys,
                      float scale, float* scores, float* out) {
  constexpr int kHd = 16 * V;
  const int64_t head_off = static_cast<int64_t>(kv_head) * kHd;
  __m512 qv[G][V];
  for (int g = 0; g < G; ++g)
    for (int c = 0; c < V; ++c) qv[g][c] = _mm512_mul_ps(_mm512_loadu_ps(q + g * kHd + 16 * c), _mm512_set1_ps(scale));
  constexpr int kLines = kF16 ? (V + 1) / 2 : V;  // cache lines per row
  for (int64_t j = 0; j < n_keys; ++j) {
    const int64_t k = slots[j] * kv.slot_stride + head_off;
    if (j + 4 < n_keys) {
      const char* p = RowAddr<kF16>(kv.k, slots[j + 4] * kv.slot_stride + head_off);
      for (int c = 0; c < kLines; ++c) _mm_prefetch(p + 64 * c, _MM_HINT_T0);
    }
    __m512 kr[V];
    for (int c = 0; c < V; ++c) kr[c] = Load16<kF16>(kv.k, k + 16 * c);
    for (int g = 0; g < G; ++g) {
      __m512 acc = _mm512_mul_ps(qv[g][0], kr[0]);
      for (int c = 1; c < V; ++c) acc = _mm512_fmadd_ps(qv[g][c], kr[c], acc);
      scores[g * n_keys + j] = simd::HorizontalSum(acc);
    }
  }
  for (int g = 0; g < G; ++g) Softmax(scores + g * n_keys, n_keys);
  __m512 acc[G][V];
  for (int g = 0; g < G; ++g)
    for (int c = 0; c < V; ++c) acc[g][c] = _mm512_setzero_ps();
  for (int64_t j = 0; j < n_keys; ++j) {
    const int64_t v = slots[j] * kv.slot_stride + head_off;
    if (j + 4 < n_keys) {
      const char* p = RowAddr<kF16>(kv.v, slots[j + 4] * kv.slot_stride + head_off);
      for (int c = 0; c < kLines; ++c) _mm_prefetch(p + 64 * c, _MM_HINT_T0);
    }
    __m512 vr[V];
    for (int c = 0; c < V; ++c) vr[c] = Load16<kF16>(kv.v, v + 16 * c);
    for (int g = 0; g < G; ++g) {
      const __m512 p = _mm512_set1_ps(scores[g * n_keys + j]);
      for (int c = 0; c < V; ++c) acc[g][c] = _mm512_fmadd_ps(p, vr[c], acc[g][c]);
    }
  }
  for (int g = 0; g < G; ++g)
    for (int c = 0; c < V; ++c) _mm512_storeu_ps(out + g * kHd + 16 * c, acc[g][c]);
}

using TiledFn = void (*)(const float*, const KvLayerView&, int, const int32_t*, int64_t, float, float*, float*);

template <bool kF16>
TiledFn PickTiled(int head_dim, int group) {
#define RS_TILED_FOR(V)                                  \
  switch (group) {                                       \
    case 1: return AttendSlotsTiled<kF16, V, 1>;         \
    case 2: return AttendSlotsTiled<kF16, V, 2>;         \
    case 3: return AttendSlotsTiled<kF16, V, 3>;         \
    case 4: return AttendSlotsTiled<kF16, V, 4>;         \
    default: return nullptr;                             \
  }
  if (head_dim == 64) RS_TILED_FOR(4)
  if (head_dim == 128) RS_TILED_FOR(8)
#undef RS_TILED_FOR
  return nullptr;
}

}  // namespace
#endif

namespace {
// Rows widened from F16 one at a time for the generic path: up to this head_dim on the stack.
constexpr int kMaxWidenedHeadDim = 512;

// Key or value row `slot` of kv_head as F32: the row itself, or widened into buf.
inline const float* RowF32(const void* base, const KvLayerView& kv, int64_t head_off, int32_t slot, int head_dim,
                           float* buf) {
  const int64_t at = slot * kv.slot_stride + head_off;
  if (!kv.f16) return static_cast<const float*>(base) + at;
  ConvertF16ToF32(static_cast<const uint16_t*>(base) + at, buf, head_dim);
  return buf;
}
}  // namespace

void AttendSlots(const float* q, int group, const KvLayerView& kv, int kv_head, const int32_t* slots,
                 int64_t n_keys, int head_dim, float scale, float* scores, float* out) {
#if RS_HAVE_AVX512
  // Register tiles hold up to 4 heads: a wider group runs as chunks of 4 (each reads the rows again,
  // from cache), so that groups of 6 to 8 (Qwen2.5, TinyLlama) keep the tiled kernel.
  constexpr int kMaxTileGroup = 4;
  auto pick = [&](int g) { return kv.f16 ? PickTiled<true>(head_dim, g) : PickTiled<false>(head_dim, g); };
  if (pick(std::min(group, kMaxTileGroup)) != nullptr) {
    for (int g0 = 0; g0 < group; g0 += kMaxTileGroup) {
      const int gn = std::min(kMaxTileGroup, group - g0);
      pick(gn)(q + g0 * head_dim, kv, kv_head, slots, n_keys, scale, scores + g0 * n_keys, out + g0 * head_dim);
    }
    return;
  }
#endif
  if (kv.f16 && head_dim > kMaxWidenedHeadDim)
    return ref::AttendSlots(q, group, kv, kv_head, slots, n_keys, head_dim, scale, scores, out);
  const int64_t head_off = static_cast<int64_t>(kv_head) * head_dim;
  float row[kMaxWidenedHeadDim];
  // Scores: each key row is read (and widened from F16) once for all heads of the group.
  for (int64_t j = 0; j < n_keys; ++j) {
    const float* k = RowF32(kv.k, kv, head_off, slots[j], head_dim, row);
    for (int g = 0; g < group; ++g) scores[g * n_keys + j] = DotF32(q + g * head_dim, k, head_dim) * scale;
  }
  for (int g = 0; g < group; ++g) Softmax(scores + g * n_keys, n_keys);
  std::fill(out, out + static_cast<int64_t>(group) * head_dim, 0.0f);
  for (int64_t j = 0; j < n_keys; ++j) {
    const float* v = RowF32(kv.v, kv, head_off, slots[j], head_dim, row);
    for (int g = 0; g < group; ++g) Axpy(scores[g * n_keys + j], v, out + g * head_dim, head_dim);
  }
}

RS_KERNELS_END
}  // namespace radixserve::kernels
