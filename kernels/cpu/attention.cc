#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/vec_ops.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN

#if RS_HAVE_AVX512
namespace {

// Values [16c, 16c + 16) of a head's row (row: its first byte) as floats. The block types hold a
// 32-value block per two chunks: Q8_0 an fp16 scale and 32 int8; Q4_0 an fp16 scale and 16 bytes
// whose low nibbles are values 0..15 and high nibbles 16..31, each minus 8.
template <WeightType kT>
inline __m512 Load16(const uint8_t* row, int c) {
  if constexpr (kT == WeightType::kF32) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + 16 * c);
  } else if constexpr (kT == WeightType::kF16) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 32 * c)));
  } else if constexpr (kT == WeightType::kQ8_0) {
    const uint8_t* block = row + (c / 2) * 34;
    uint16_t d;
    std::memcpy(&d, block, 2);
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2 + 16 * (c % 2)));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)), _mm512_set1_ps(Fp16ToFp32(d)));
  } else {
    static_assert(kT == WeightType::kQ4_0);
    const uint8_t* block = row + (c / 2) * 18;
    uint16_t d;
    std::memcpy(&d, block, 2);
    __m512i q = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2)));
    if (c % 2) q = _mm512_srli_epi32(q, 4);
    q = _mm512_sub_epi32(_mm512_and_si512(q, _mm512_set1_epi32(15)), _mm512_set1_epi32(8));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(q), _mm512_set1_ps(Fp16ToFp32(d)));
  }
}

// head_dim = 16 * V, group = G: q and the outputs stay in registers; each key
// and value row is loaded once for all G heads.
template <WeightType kT, int V, int G>
void AttendSlotsTiled(const float* q, const KvLayerView& kv, int kv_head, const int32_t* slots, int64_t n_keys,
                      float scale, float softcap, float* scores, float* out) {
  constexpr int kHd = 16 * V;
  constexpr int kLines = static_cast<int>((KvBytes(kT, kHd) + 63) / 64);  // cache lines per row
  // Row addresses as one multiply-add: slot_stride and head offsets are whole blocks.
  const int64_t slot_bytes = KvBytes(kT, kv.slot_stride), head_bytes = KvBytes(kT, int64_t{kv_head} * kHd);
  auto row_of = [&](const void* base, int32_t slot) {
    return static_cast<const uint8_t*>(base) + slot * slot_bytes + head_bytes;
  };
  __m512 qv[G][V];
  for (int g = 0; g < G; ++g)
    for (int c = 0; c < V; ++c) qv[g][c] = _mm512_mul_ps(_mm512_loadu_ps(q + g * kHd + 16 * c), _mm512_set1_ps(scale));
  for (int64_t j = 0; j < n_keys; ++j) {
    if (j + 4 < n_keys) {
      const char* p = reinterpret_cast<const char*>(row_of(kv.k, slots[j + 4]));
      for (int c = 0; c < kLines; ++c) _mm_prefetch(p + 64 * c, _MM_HINT_T0);
    }
    const uint8_t* row = row_of(kv.k, slots[j]);
    __m512 kr[V];
    for (int c = 0; c < V; ++c) kr[c] = Load16<kT>(row, c);
    for (int g = 0; g < G; ++g) {
      __m512 acc = _mm512_mul_ps(qv[g][0], kr[0]);
      for (int c = 1; c < V; ++c) acc = _mm512_fmadd_ps(qv[g][c], kr[c], acc);
      scores[g * n_keys + j] = simd::HorizontalSum(acc);
    }
  }
  if (softcap > 0.0f)
    for (int g = 0; g < G; ++g) SoftCap(scores + g * n_keys, n_keys, softcap);
  for (int g = 0; g < G; ++g) Softmax(scores + g * n_keys, n_keys);
  __m512 acc[G][V];
  for (int g = 0; g < G; ++g)
    for (int c = 0; c < V; ++c) acc[g][c] = _mm512_setzero_ps();
  for (int64_t j = 0; j < n_keys; ++j) {
    if (j + 4 < n_keys) {
      const char* p = reinterpret_cast<const char*>(row_of(kv.v, slots[j + 4]));
      for (int c = 0; c < kLines; ++c) _mm_prefetch(p + 64 * c, _MM_HINT_T0);
    }
    const uint8_t* row = row_of(kv.v, slots[j]);
    __m512 vr[V];
    for (int c = 0; c < V; ++c) vr[c] = Load16<kT>(row, c);
    for (int g = 0; g < G; ++g) {
      const __m512 p = _mm512_set1_ps(scores[g * n_keys + j]);
      for (int c = 0; c < V; ++c) acc[g][c] = _mm512_fmadd_ps(p, vr[c], acc[g][c]);
    }
  }
  for (int g = 0; g < G; ++g)
    for (int c = 0; c < V; ++c) _mm512_storeu_ps(out + g * kHd + 16 * c, acc[g][c]);
}

using TiledFn = void (*)(const float*, const KvLayerView&, int, const int32_t*, int64_t, float, float, float*, float*);

template <WeightType kT>
TiledFn PickTiledOf(int head_dim, int group) {
#define RS_TILED_FOR(V)                                  \
  switch (group) {                                       \
    case 1: return AttendSlotsTiled<kT, V, 1>;           \
    case 2: return AttendSlotsTiled<kT, V, 2>;           \
    case 3: return AttendSlotsTiled<kT, V, 3>;           \
    case 4: return AttendSlotsTiled<kT, V, 4>;           \
    default: return nullptr;                             \
  }
  if (head_dim == 64) RS_TILED_FOR(4)
  if (head_dim == 128) RS_TILED_FOR(8)
#undef RS_TILED_FOR
  return nullptr;
}

TiledFn PickTiled(WeightType type, int head_dim, int group) {
  switch (type) {
    case WeightType::kF32: return PickTiledOf<WeightType::kF32>(head_dim, group);
    case WeightType::kF16: return PickTiledOf<WeightType::kF16>(head_dim, group);
    case WeightType::kQ8_0: return PickTiledOf<WeightType::kQ8_0>(head_dim, group);
    case WeightType::kQ4_0: return PickTiledOf<WeightType::kQ4_0>(head_dim, group);
    default: return nullptr;
  }
}

}  // namespace
#endif

namespace {
// Rows widened or dequantised one at a time for the generic path: up to this head_dim on the stack.
constexpr int kMaxWidenedHeadDim = 512;
}  // namespace

const float* KvRowF32(const void* base, const KvLayerView& kv, int kv_head, int32_t slot, int head_dim, float* buf) {
  const uint8_t* row = kv.Row(base, slot, kv_head, head_dim);
  switch (kv.type) {
    case WeightType::kF32: return reinterpret_cast<const float*>(row);
    case WeightType::kF16: ConvertF16ToF32(reinterpret_cast<const uint16_t*>(row), buf, head_dim); return buf;
    default: DequantizeBlocks(kv.type, row, buf, head_dim); return buf;
  }
}

void AttendSlots(const float* q, int group, const KvLayerView& kv, int kv_head, const int32_t* slots,
                 int64_t n_keys, int head_dim, float scale, float* scores, float* out, float softcap) {
#if RS_HAVE_AVX512
  // Register tiles hold up to 4 heads: a wider group runs as chunks of 4 (each reads the rows again,
  // from cache), so that groups of 6 to 8 (Qwen2.5, TinyLlama) keep the tiled kernel.
  constexpr int kMaxTileGroup = 4;
  if (PickTiled(kv.type, head_dim, std::min(group, kMaxTileGroup)) != nullptr) {
    for (int g0 = 0; g0 < group; g0 += kMaxTileGroup) {
      const int gn = std::min(kMaxTileGroup, group - g0);
      PickTiled(kv.type, head_dim, gn)(q + g0 * head_dim, kv, kv_head, slots, n_keys, scale, softcap,
                                       scores + g0 * n_keys, out + g0 * head_dim);
    }
    return;
  }
#endif
  if (kv.type != WeightType::kF32 && head_dim > kMaxWidenedHeadDim)
    return ref::AttendSlots(q, group, kv, kv_head, slots, n_keys, head_dim, scale, scores, out, softcap);
  float row[kMaxWidenedHeadDim];
  // Scores: each key row is read (and widened or dequantised) once for all heads of the group.
  for (int64_t j = 0; j < n_keys; ++j) {
    const float* k = KvRowF32(kv.k, kv, kv_head, slots[j], head_dim, row);
    for (int g = 0; g < group; ++g) scores[g * n_keys + j] = DotF32(q + g * head_dim, k, head_dim) * scale;
  }
  if (softcap > 0.0f)
    for (int g = 0; g < group; ++g) SoftCap(scores + g * n_keys, n_keys, softcap);
  for (int g = 0; g < group; ++g) Softmax(scores + g * n_keys, n_keys);
  std::fill(out, out + static_cast<int64_t>(group) * head_dim, 0.0f);
  for (int64_t j = 0; j < n_keys; ++j) {
    const float* v = KvRowF32(kv.v, kv, kv_head, slots[j], head_dim, row);
    for (int g = 0; g < group; ++g) Axpy(scores[g * n_keys + j], v, out + g * head_dim, head_dim);
  }
}

RS_KERNELS_END
}  // namespace radixserve::kernels
