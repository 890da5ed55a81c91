// Vector kernels of the transformer forward pass: dot products against
// F32/F16/BF16 rows, RMSNorm, rotary embedding, SiLU-gating, softmax.
// Pure functions over caller buffers; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/cpu/kernel_set.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN

float DotF32(const float* a, const float* b, int64_t n);
// w holds n F16 (or BF16) values, x n floats.
float DotF16F32(const uint16_t* w, const float* x, int64_t n);
float DotBf16F32(const uint16_t* w, const float* x, int64_t n);

// y += a * x
void Axpy(float a, const float* x, float* y, int64_t n);
// y = x * w / sqrt(mean(x^2) + eps); y may alias x.
void RmsNorm(const float* x, const float* w, float eps, float* y, int64_t n);
// out = silu(gate) * up; out may alias gate or up.
void SiluMul(const float* gate, const float* up, float* out, int64_t n);
// In-place softmax over n values.
void Softmax(float* x, int64_t n);
// In-place soft-capping (gemma2's attention logits): x = cap * tanh(x / cap), as llama.cpp (scale
// by 1/cap, tanh, scale by cap); within a few ulp of cap of std::tanh's.
void SoftCap(float* x, int64_t n, float cap);
// llama "NORM" rotary embedding, in place: for each head, pairs (x[2i], x[2i+1]),
// i < rot_dim/2, are rotated by angle with cos_sin[2i] = cos, cos_sin[2i+1] = sin.
// Dimensions past rot_dim are left as they are.
void RopeNorm(float* x, int num_heads, int head_dim, int rot_dim, const float* cos_sin);
// NEOX rotary embedding (qwen2, phi3, gemma): the pairs are (x[i], x[i + rot_dim/2]).
void RopeNeox(float* x, int num_heads, int head_dim, int rot_dim, const float* cos_sin);
// out = gelu_tanh(gate) * up (gemma's FFN); out may alias gate or up.
void GeluMul(const float* gate, const float* up, float* out, int64_t n);

RS_KERNELS_END

namespace ref {
float DotF32(const float* a, const float* b, int64_t n);
float DotF16F32(const uint16_t* w, const float* x, int64_t n);
float DotBf16F32(const uint16_t* w, const float* x, int64_t n);
void RmsNorm(const float* x, const float* w, float eps, float* y, int64_t n);
void SiluMul(const float* gate, const float* up, float* out, int64_t n);
void Softmax(float* x, int64_t n);
void SoftCap(float* x, int64_t n, float cap);
void RopeNorm(float* x, int num_heads, int head_dim, int rot_dim, const float* cos_sin);
void RopeNeox(float* x, int num_heads, int head_dim, int rot_dim, const float* cos_sin);
void GeluMul(const float* gate, const float* up, float* out, int64_t n);
}  // namespace ref

}  // namespace radixserve::kernels
