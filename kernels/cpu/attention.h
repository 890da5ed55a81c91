// Attention of query heads over keys/values gathered from a slot-indexed KV
// buffer (layout [slot][kv_heads][head_dim] per layer, F32, F16, Q8_0 or Q4_0).
// Pure function over caller buffers; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/weight.h"

namespace radixserve::kernels {

// The element types a KV cache can hold. The block types quantise each head's row on its own
// (head_dim a multiple of 32), so a head's row is whole blocks and is read in place.
inline constexpr bool IsKvType(WeightType t) {
  return t == WeightType::kF32 || t == WeightType::kF16 || t == WeightType::kQ8_0 || t == WeightType::kQ4_0;
}

// Bytes that `elems` values of a KV row take (a multiple of the type's block size).
inline constexpr int64_t KvBytes(WeightType t, int64_t elems) {
  const WeightTypeInfo info = GetWeightTypeInfo(t);
  return elems / info.block_elems * info.block_bytes;
}

struct KvLayerView {
  const void* k = nullptr;    // [slots][kv_heads][head_dim]
  const void* v = nullptr;
  int64_t slot_stride = 0;    // elements between consecutive slots (kv_heads * head_dim)
  WeightType type = WeightType::kF32;  // one of IsKvType

  // The first byte of kv head `kv_head`'s row of `slot` (head_dim elements) in `base` (k or v).
  const uint8_t* Row(const void* base, int32_t slot, int kv_head, int head_dim) const {
    return static_cast<const uint8_t*>(base) +
           KvBytes(type, static_cast<int64_t>(slot) * slot_stride + static_cast<int64_t>(kv_head) * head_dim);
  }
};


RS_KERNELS_BEGIN
// Kv head `kv_head`'s row of `slot` in `base` (kv.k or kv.v) as head_dim floats: the row itself
// when the cache is F32, else widened or dequantised into buf (head_dim floats).
const float* KvRowF32(const void* base, const KvLayerView& kv, int kv_head, int32_t slot, int head_dim, float* buf);

// For `group` query heads that share kv head `kv_head`: q is [group][head_dim]
// (heads contiguous), keys are slots[0..n_keys). Writes out[group][head_dim].
// scores must hold group * n_keys floats. softcap > 0: each scaled score s becomes
// softcap * tanh(s / softcap) before the softmax (gemma2's attention-logit soft-capping, in
// llama.cpp's order of operations).
void AttendSlots(const float* q, int group, const KvLayerView& kv, int kv_head, const int32_t* slots,
                 int64_t n_keys, int head_dim, float scale, float* scores, float* out, float softcap = 0.0f);

RS_KERNELS_END

namespace ref {
void AttendSlots(const float* q, int group, const KvLayerView& kv, int kv_head, const int32_t* slots,
                 int64_t n_keys, int head_dim, float scale, float* scores, float* out, float softcap = 0.0f);
}  // namespace ref

}  // namespace radixserve::kernels
