#include "kernels/cuda/attention.h"

#include <cuda_fp16.h>

#include <cmath>

#include "kernels/cuda/cuda_check.h"

namespace radixserve::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kPerLane = kMaxAttentionHeadDim / 32;  // head elements each lane holds

__device__ inline float Load(const float* p) { return *p; }
__device__ inline float Load(const __half* p) { return __half2float(*p); }

__device__ inline float WarpSum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// One block per (token, query head). Each warp walks every kWarps-th key with an online softmax;
// lane l holds head elements l, l + 32, ...; the warps' partial results are merged at the end.
template <typename T>
__global__ void PagedAttentionKernel(const float* q, const T* k_cache, const T* v_cache, int64_t slot_stride,
                                     AttentionShape shape, const int32_t* req_to_token, int64_t row_stride,
                                     const int32_t* token_row, const int32_t* token_pos, float* out) {
  const int64_t t = blockIdx.x;
  const int h = blockIdx.y;
  const int hd = shape.head_dim;
  const int kv_h = h / (shape.q_heads / shape.kv_heads);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int32_t* row = req_to_token + static_cast<int64_t>(token_row[t]) * row_stride;
  const int n_keys = token_pos[t] + 1;
  const int first = shape.sliding_window > 0 ? max(0, n_keys - shape.sliding_window) : 0;
  const float* qh = q + (t * shape.q_heads + h) * hd;

  float qr[kPerLane], acc[kPerLane];
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int d = lane + 32 * i;
    qr[i] = d < hd ? qh[d] * shape.scale : 0.0f;
    acc[i] = 0.0f;
  }
  float m = -INFINITY, l = 0.0f;
  for (int j = first + warp; j < n_keys; j += kWarps) {
    const int64_t base = static_cast<int64_t>(row[j]) * slot_stride + static_cast<int64_t>(kv_h) * hd;
    float dot = 0.0f;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int d = lane + 32 * i;
      if (d < hd) dot += qr[i] * Load(k_cache + base + d);
    }
    const float s = WarpSum(dot);
    const float m_new = fmaxf(m, s);
    const float corr = expf(m - m_new), p = expf(s - m_new);
    l = l * corr + p;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int d = lane + 32 * i;
      acc[i] = acc[i] * corr + (d < hd ? p * Load(v_cache + base + d) : 0.0f);
    }
    m = m_new;
  }

  __shared__ float s_m[kWarps], s_l[kWarps];
  __shared__ float s_acc[kWarps][kMaxAttentionHeadDim];
  if (lane == 0) {
    s_m[warp] = m;
    s_l[warp] = l;
  }
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int d = lane + 32 * i;
    if (d < hd) s_acc[warp][d] = acc[i];
  }
  __syncthreads();
  float m_all = -INFINITY;
  for (int w = 0; w < kWarps; ++w) m_all = fmaxf(m_all, s_m[w]);
  float weight[kWarps], l_all = 0.0f;
  for (int w = 0; w < kWarps; ++w) {
    weight[w] = s_l[w] > 0.0f ? expf(s_m[w] - m_all) : 0.0f;  // a warp without keys adds nothing
    l_all += s_l[w] * weight[w];
  }
  float* oh = out + (t * shape.q_heads + h) * hd;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float o = 0.0f;
    for (int w = 0; w < kWarps; ++w) o += s_acc[w][d] * weight[w];
    oh[d] = o / l_all;
  }
}

}  // namespace

Status PagedAttention(const float* q, int64_t n, const PagedKvLayer& kv, const AttentionShape& shape,
                      const int32_t* req_to_token, int64_t row_stride, const int32_t* token_row,
                      const int32_t* token_pos, float* out, Stream stream) {
  if (shape.head_dim <= 0 || shape.head_dim > kMaxAttentionHeadDim)
    return Status::Unsupported("PagedAttention: head size " + std::to_string(shape.head_dim) + " is outside [1, " +
                               std::to_string(kMaxAttentionHeadDim) + "]");
  if (shape.kv_heads <= 0 || shape.q_heads % shape.kv_heads != 0)
    return Status::InvalidArgument("PagedAttention: " + std::to_string(shape.q_heads) +
                                   " query heads do not divide into " + std::to_string(shape.kv_heads) + " KV heads");
  if (n == 0) return Status::Ok();
  const dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>(shape.q_heads));
  if (kv.f16) {
    PagedAttentionKernel<__half><<<grid, kWarps * 32, 0, stream>>>(
        q, static_cast<const __half*>(kv.k), static_cast<const __half*>(kv.v), kv.slot_stride, shape, req_to_token,
        row_stride, token_row, token_pos, out);
  } else {
    PagedAttentionKernel<float><<<grid, kWarps * 32, 0, stream>>>(
        q, static_cast<const float*>(kv.k), static_cast<const float*>(kv.v), kv.slot_stride, shape, req_to_token,
        row_stride, token_row, token_pos, out);
  }
  return LaunchStatus("PagedAttention");
}

}  // namespace radixserve::cuda
