#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/vec_ops.h"

namespace radixserve::kernels {

namespace ref {
void AttendSlots(const float* q, int group, const KvLayerView& kv, int kv_head, const int32_t* slots,
                 int64_t n_keys, int head_dim, float scale, float* scores, float* out) {
  for (int g = 0; g < group; ++g) {
    float* s = scores + g * n_keys;
    for (int64_t j = 0; j < n_keys; ++j) {
      const float* k = kv.k + slots[j] * kv.slot_stride + static_cast<int64_t>(kv_head) * head_dim;
      s[j] = ref::DotF32(q + g * head_dim, k, head_dim) * scale;
    }
    ref::Softmax(s, n_keys);
    float* o = out + g * head_dim;
    std::fill(o, o + head_dim, 0.0f);
    for (int64_t j = 0; j < n_keys; ++j) {
      const float* v = kv.v + slots[j] * kv.slot_stride + static_cast<int64_t>(kv_head) * head_dim;
      for (int d = 0; d < head_dim; ++d) o[d] += s[j] * v[d];
    }
  }
}
}  // namespace ref

void AttendSlots(const float* q, int group, const KvLayerView& kv, int kv_head, const int32_t* slots,
                 int64_t n_keys, int head_dim, float scale, float* scores, float* out) {
  const int64_t head_off = static_cast<int64_t>(kv_head) * head_dim;
  // Scores: each key row is read once for all heads of the group.
  for (int64_t j = 0; j < n_keys; ++j) {
    const float* k = kv.k + slots[j] * kv.slot_stride + head_off;
    if (j + 4 < n_keys) __builtin_prefetch(kv.k + slots[j + 4] * kv.slot_stride + head_off);
    for (int g = 0; g < group; ++g) scores[g * n_keys + j] = DotF32(q + g * head_dim, k, head_dim) * scale;
  }
  for (int g = 0; g < group; ++g) Softmax(scores + g * n_keys, n_keys);
  std::fill(out, out + static_cast<int64_t>(group) * head_dim, 0.0f);
  for (int64_t j = 0; j < n_keys; ++j) {
    const float* v = kv.v + slots[j] * kv.slot_stride + head_off;
    if (j + 4 < n_keys) __builtin_prefetch(kv.v + slots[j + 4] * kv.slot_stride + head_off);
    for (int g = 0; g < group; ++g) Axpy(scores[g * n_keys + j], v, out + g * head_dim, head_dim);
  }
}

}  // namespace radixserve::kernels
