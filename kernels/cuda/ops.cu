#include "kernels/cuda/ops.h"

#include <cuda_fp16.h>

#include "kernels/cuda/cuda_check.h"

namespace radixserve::cuda {
namespace {

constexpr int kThreads = 256;

inline unsigned Blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__global__ void EmbedRowsF16Kernel(const __half* table, const int32_t* ids, int64_t dim, float scale, float* out) {
  const int64_t t = blockIdx.x;
  const __half* row = table + static_cast<int64_t>(ids[t]) * dim;
  for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) out[t * dim + j] = __half2float(row[j]) * scale;
}

__global__ void GatherRowsKernel(const float* x, const int32_t* rows, int64_t dim, float* out) {
  const int64_t i = blockIdx.x;
  const float* src = x + static_cast<int64_t>(rows[i]) * dim;
  for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) out[i * dim + j] = src[j];
}

// One block per row; the sum of squares in double, as the CPU reference.
__global__ void RmsNormKernel(const float* x, const float* w, float eps, float* y, int64_t n) {
  __shared__ double partial[kThreads];
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  double ss = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) ss += static_cast<double>(xr[i]) * xr[i];
  partial[threadIdx.x] = ss;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float scale = static_cast<float>(1.0 / sqrt(partial[0] / n + eps));
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = xr[i] * scale * w[i];
}

__global__ void RopeAnglesKernel(const int32_t* positions, int64_t n, const float* inv_freq, int half_rot,
                                 float linear_scale, float* cos_sin) {
  const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (idx >= n * half_rot) return;
  const int64_t t = idx / half_rot;
  const int i = static_cast<int>(idx % half_rot);
  const float p = static_cast<float>(positions[t]) / linear_scale;
  const float theta = p * inv_freq[i];
  cos_sin[t * 2 * half_rot + 2 * i] = cosf(theta);
  cos_sin[t * 2 * half_rot + 2 * i + 1] = sinf(theta);
}

__global__ void RopeKernel(float* x, int64_t n, int heads, int head_dim, int half_rot, const float* cos_sin,
                           bool neox) {
  const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (idx >= n * heads * half_rot) return;
  const int i = static_cast<int>(idx % half_rot);
  const int64_t th = idx / half_rot;  // token * heads + head
  const int64_t t = th / heads;
  float* v = x + th * head_dim;
  const float c = cos_sin[t * 2 * half_rot + 2 * i], s = cos_sin[t * 2 * half_rot + 2 * i + 1];
  const int ia = neox ? i : 2 * i, ib = neox ? i + half_rot : 2 * i + 1;
  const float a = v[ia], b = v[ib];
  v[ia] = a * c - b * s;
  v[ib] = a * s + b * c;
}

__global__ void SiluMulKernel(const float* gate, const float* up, float* out, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}

__global__ void GeluMulKernel(const float* gate, const float* up, float* out, int64_t n) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float g = gate[i];
  out[i] = 0.5f * g * (1.0f + tanhf(kSqrt2OverPi * g * (1.0f + 0.044715f * g * g))) * up[i];
}

__global__ void AddKernel(const float* x, float* y, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] += x[i];
}

__global__ void AddBiasKernel(float* x, const float* bias, int64_t n, int64_t cols) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) x[i] += bias[i % cols];
}

__global__ void ConvertF32ToF16Kernel(const float* x, __half* y, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = __float2half_rn(x[i]);
}

template <typename T>
__device__ T FromFloat(float f);
template <>
__device__ float FromFloat<float>(float f) { return f; }
template <>
__device__ __half FromFloat<__half>(float f) { return __float2half_rn(f); }

template <typename T>
__global__ void KvScatterKernel(const float* k, const float* v, const int32_t* slots, int64_t kv_dim, T* k_cache,
                                T* v_cache) {
  const int64_t t = blockIdx.x;
  const int64_t base = static_cast<int64_t>(slots[t]) * kv_dim;
  for (int64_t j = threadIdx.x; j < kv_dim; j += blockDim.x) {
    k_cache[base + j] = FromFloat<T>(k[t * kv_dim + j]);
    v_cache[base + j] = FromFloat<T>(v[t * kv_dim + j]);
  }
}

}  // namespace

Status EmbedRowsF16(const uint16_t* table, const int32_t* ids, int64_t n, int64_t dim, float scale, float* out,
                    Stream stream) {
  if (n == 0) return Status::Ok();
  EmbedRowsF16Kernel<<<static_cast<unsigned>(n), kThreads, 0, stream>>>(reinterpret_cast<const __half*>(table), ids,
                                                                          dim, scale, out);
  return LaunchStatus("EmbedRowsF16");
}

Status GatherRows(const float* x, const int32_t* rows, int64_t n, int64_t dim, float* out, Stream stream) {
  if (n == 0) return Status::Ok();
  GatherRowsKernel<<<static_cast<unsigned>(n), kThreads, 0, stream>>>(x, rows, dim, out);
  return LaunchStatus("GatherRows");
}

Status RmsNorm(const float* x, const float* w, float eps, float* y, int64_t rows, int64_t n, Stream stream) {
  if (rows == 0) return Status::Ok();
  RmsNormKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(x, w, eps, y, n);
  return LaunchStatus("RmsNorm");
}

Status RopeAngles(const int32_t* positions, int64_t n, const float* inv_freq, int half_rot, float linear_scale,
                  float* cos_sin, Stream stream) {
  if (n == 0 || half_rot == 0) return Status::Ok();
  RopeAnglesKernel<<<Blocks(n * half_rot), kThreads, 0, stream>>>(positions, n, inv_freq, half_rot, linear_scale,
                                                                   cos_sin);
  return LaunchStatus("RopeAngles");
}

Status Rope(float* x, int64_t n, int heads, int head_dim, int rot_dim, const float* cos_sin, bool neox,
            Stream stream) {
  const int half_rot = rot_dim / 2;
  if (n == 0 || half_rot == 0) return Status::Ok();
  RopeKernel<<<Blocks(n * heads * half_rot), kThreads, 0, stream>>>(x, n, heads, head_dim, half_rot, cos_sin, neox);
  return LaunchStatus("Rope");
}

Status SiluMul(const float* gate, const float* up, float* out, int64_t n, Stream stream) {
  if (n == 0) return Status::Ok();
  SiluMulKernel<<<Blocks(n), kThreads, 0, stream>>>(gate, up, out, n);
  return LaunchStatus("SiluMul");
}

Status GeluMul(const float* gate, const float* up, float* out, int64_t n, Stream stream) {
  if (n == 0) return Status::Ok();
  GeluMulKernel<<<Blocks(n), kThreads, 0, stream>>>(gate, up, out, n);
  return LaunchStatus("GeluMul");
}

Status Add(const float* x, float* y, int64_t n, Stream stream) {
  if (n == 0) return Status::Ok();
  AddKernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, n);
  return LaunchStatus("Add");
}

Status AddBias(float* x, const float* bias, int64_t rows, int64_t cols, Stream stream) {
  if (rows == 0 || cols == 0) return Status::Ok();
  AddBiasKernel<<<Blocks(rows * cols), kThreads, 0, stream>>>(x, bias, rows * cols, cols);
  return LaunchStatus("AddBias");
}

Status ConvertF32ToF16(const float* x, uint16_t* y, int64_t n, Stream stream) {
  if (n == 0) return Status::Ok();
  ConvertF32ToF16Kernel<<<Blocks(n), kThreads, 0, stream>>>(x, reinterpret_cast<__half*>(y), n);
  return LaunchStatus("ConvertF32ToF16");
}

Status KvScatter(const float* k, const float* v, const int32_t* slots, int64_t n, int64_t kv_dim, void* k_cache,
                 void* v_cache, bool f16, Stream stream) {
  if (n == 0) return Status::Ok();
  const unsigned blocks = static_cast<unsigned>(n);
  if (f16) {
    KvScatterKernel<__half><<<blocks, kThreads, 0, stream>>>(k, v, slots, kv_dim, static_cast<__half*>(k_cache),
                                                            static_cast<__half*>(v_cache));
  } else {
    KvScatterKernel<float><<<blocks, kThreads, 0, stream>>>(k, v, slots, kv_dim, static_cast<float*>(k_cache),
                                                           static_cast<float*>(v_cache));
  }
  return LaunchStatus("KvScatter");
}

}  // namespace radixserve::cuda
