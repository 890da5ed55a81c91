// Attention of query heads over keys/values gathered from a slot-indexed KV
// buffer (layout [slot][kv_heads][head_dim] per layer, F32 or F16).
// Pure function over caller buffers; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/cpu/kernel_set.h"

namespace radixserve::kernels {

struct KvLayerView {
  const void* k = nullptr;    // [slots][kv_heads][head_dim]
  const void* v = nullptr;
  int64_t slot_stride = 0;    // elements between consecutive slots (kv_heads * head_dim)
  bool f16 = false;           // elements are F16 (else F32)
};

RS_KERNELS_BEGIN
// For `group` query heads that share kv head `kv_head`: q is [group][head_dim]
// (heads contiguous), keys are slots[0..n_keys). Writes out[group][head_dim].
// scores must hold group * n_keys floats.
void AttendSlots(const float* q, int group, const KvLayerView& kv, int kv_head, const int32_t* slots,
                 int64_t n_keys, int head_dim, float scale, float* scores, float* out);

RS_KERNELS_END

namespace ref {
void AttendSlots(const float* q, int group, const KvLayerView& kv, int kv_head, const int32_t* slots,
                 int64_t n_keys, int head_dim, float scale, float* scores, float* out);
}  // namespace ref

}  // namespace radixserve::kernels
