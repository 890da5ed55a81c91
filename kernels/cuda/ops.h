// The element-wise and per-row kernels of the transformer forward pass on a CUDA device:
// the GPU counterparts of kernels/cpu/vec_ops.h, with the same formulas (tests compare them).
// Every pointer is device memory; F16 values are passed as their bit patterns (uint16_t).
// Each function enqueues work on `stream` and returns the launch's status (a fault inside a
// kernel shows at the next synchronisation). Thread-safety: as the stream's.
#pragma once

#include <cstdint>

#include "kernels/cuda/device.h"

namespace radixserve::cuda {

// out[t][:] = table[ids[t]][:] * scale, t < n; the table holds F16 rows of `dim` values.
Status EmbedRowsF16(const uint16_t* table, const int32_t* ids, int64_t n, int64_t dim, float scale, float* out,
                    Stream stream);
// out[i][:] = x[rows[i]][:], i < n, for rows of `dim` floats.
Status GatherRows(const float* x, const int32_t* rows, int64_t n, int64_t dim, float* out, Stream stream);
// y[r] = x[r] * w / sqrt(mean(x[r]^2) + eps) for `rows` rows of n values; y may alias x.
Status RmsNorm(const float* x, const float* w, float eps, float* y, int64_t rows, int64_t n, Stream stream);
// cos_sin[t][2i], [2i+1] = cos, sin of (positions[t] / linear_scale) * inv_freq[i], i < half_rot.
Status RopeAngles(const int32_t* positions, int64_t n, const float* inv_freq, int half_rot, float linear_scale,
                  float* cos_sin, Stream stream);
// In place on x[t][heads][head_dim] with cos_sin[t][2 * half_rot] (kernels::RopeNorm / RopeNeox):
// neox=false rotates pairs (2i, 2i+1), neox=true pairs (i, i + half_rot).
Status Rope(float* x, int64_t n, int heads, int head_dim, int rot_dim, const float* cos_sin, bool neox,
            Stream stream);
// out = silu(gate) * up, or gelu_tanh(gate) * up; out may alias gate or up.
Status SiluMul(const float* gate, const float* up, float* out, int64_t n, Stream stream);
Status GeluMul(const float* gate, const float* up, float* out, int64_t n, Stream stream);
// y += x over n values.
Status Add(const float* x, float* y, int64_t n, Stream stream);
// x[r][:] += bias[:] for `rows` rows of `cols` values.
Status AddBias(float* x, const float* bias, int64_t rows, int64_t cols, Stream stream);
// y = x rounded to F16 (round to nearest even).
Status ConvertF32ToF16(const float* x, uint16_t* y, int64_t n, Stream stream);
// The KV cache write: for t < n, k_cache[slots[t]][:] = k[t][:] (and v), kv_dim values per slot,
// stored as F16 (f16 = true) or F32.
Status KvScatter(const float* k, const float* v, const int32_t* slots, int64_t n, int64_t kv_dim, void* k_cache,
                 void* v_cache, bool f16, Stream stream);

}  // namespace radixserve::cuda
