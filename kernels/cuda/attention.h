// Paged attention on a CUDA device: each new token's query heads attend over the KV slots of its
// sequence, read through that sequence's req-to-token row (row[j] = the slot of position j).
// One kernel serves decode (one new token per sequence) and prefill/extend (many, causal after a
// cached prefix): token t sees positions [first, pos_t], first = max(0, pos_t + 1 - window) with
// a sliding window, else 0. The GPU counterpart of kernels::AttendSlots (kernels/cpu/attention.h).
// Pointers are device memory; thread-safety: as the stream's.
#pragma once

#include <cstdint>

#include "kernels/cuda/device.h"

namespace radixserve::cuda {

// The largest head size the kernel holds in registers.
inline constexpr int kMaxAttentionHeadDim = 256;

struct PagedKvLayer {
  const void* k = nullptr;  // [slots][kv_heads][head_dim]
  const void* v = nullptr;
  int64_t slot_stride = 0;  // elements between consecutive slots (kv_heads * head_dim)
  bool f16 = false;         // F16 elements (else F32)
};

struct AttentionShape {
  int q_heads = 0, kv_heads = 0, head_dim = 0;
  int sliding_window = 0;  // 0: none
  float scale = 0.0f;      // 1 / sqrt(head_dim) for the llama family
};

// q: [n][q_heads][head_dim]; out likewise. For token t: its sequence's row is
// req_to_token + token_row[t] * row_stride and its position token_pos[t].
Status PagedAttention(const float* q, int64_t n, const PagedKvLayer& kv, const AttentionShape& shape,
                      const int32_t* req_to_token, int64_t row_stride, const int32_t* token_row,
                      const int32_t* token_pos, float* out, Stream stream);

}  // namespace radixserve::cuda
