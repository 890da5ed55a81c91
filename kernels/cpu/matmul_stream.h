// Streaming (GEMV-like) kernels behind MatMul for small batches: each weight
// row block is read once and multiplied with up to 4 activation rows held in
// registers. F32/F16/BF16: AVX-512 FMA tiles; block types: int8 products
// against Q8_0 activations (AVX2 maddubs, or two blocks per step with AVX-512
// VNNI); the scalar set dequantises a row at a time and dots it in F32.
// Internal to kernels/cpu. Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/cpu/matmul.h"
#include "kernels/cpu/q8_0.h"

namespace radixserve::kernels {

// Activations quantised once per MatMul for the int8 paths (block-type weights, small batches):
// x as Q8_0 blocks, and per block of 32 the offset sums of the affine weight types in the 8 lanes
// of a dot product (4 values each): lanes 0-3 hold d * sum(q[0..16)) / 4, lanes 4-7
// d * sum(q[16..32)) / 4 (a weight w = s * q + m then adds m times the sum of its lanes).
// `values` and `lane_scales` repeat the blocks' bytes and scales (d in all 8 lanes of a block) for
// kernels that read two blocks in one 512-bit load. With group_blocks 8 (the weights are K-quants)
// a super-block's 8 blocks share one scale, and sums16 holds the integer sums of each 16 values,
// so that the K-quant kernels can take minimums and offsets back in integers. neg_quad_sums holds
// minus the sum of each 4 values (a dot product's lane), from which the VNNI kernels take a
// symmetric type's offset back by one shift instead of a dot product per token.
struct QuantizedActivations {
  const BlockQ8_0* blocks = nullptr;    // [n][cols / 32]
  const float* quarter_sums = nullptr;  // [n][cols / 32][8]
  const int8_t* values = nullptr;       // [n][cols]
  const float* lane_scales = nullptr;   // [n][cols / 32][8]
  const float* block_scales = nullptr;  // [n][cols / 32]: each block's d as a float
  const int16_t* sums16 = nullptr;      // [n][cols / 16]
  const int32_t* neg_quad_sums = nullptr;  // [n][cols / 4]
  int group_blocks = 1;                 // blocks of 32 under one scale: 1, or 8
  // The same activations from token t on.
  QuantizedActivations From(int64_t t, int64_t cols) const {
    const int64_t nb = cols / 32;
    return {blocks + t * nb, quarter_sums + t * nb * 8, values + t * cols, lane_scales + t * nb * 8,
            block_scales + t * nb, sums16 + t * (cols / 16), neg_quad_sums + t * (cols / 4), group_blocks};
  }
};
// The activations' scale grouping (QuantizedActivations::group_blocks) that weights of `type` with
// `cols` columns are streamed against: 8 for K-quants (their kernels sum a super-block of 256 in
// integers), 1 for the other block types; float weights read x and take either.
inline int ActivationGroupBlocks(WeightType type, int64_t cols) {
  if (IsFloatWeight(type)) return 8;
  return GetWeightTypeInfo(type).block_elems == 256 && cols % 256 == 0 ? 8 : 1;
}
// Bytes of the buffer QuantizeActivations needs for n rows of cols values.
int64_t QuantizedActivationsBytes(int64_t n, int64_t cols);
// Quantises x [n][cols] into `buffer` (QuantizedActivationsBytes; kernels load it unaligned), with
// one scale per group_blocks blocks of 32 (1, or 8 where cols is a multiple of 256).
QuantizedActivations QuantizeActivations(const float* x, int64_t n, int64_t cols, void* buffer, int group_blocks = 1);

RS_KERNELS_BEGIN
namespace internal {

// y[t * rows + r] = dot(W[r], x[t]) for r in [r0, r1), t in [0, n).
// For block-type weights xq holds x quantised (QuantizeActivations); F32/F16/BF16 read x.
void StreamRows(const WeightView& w, const float* x, const QuantizedActivations& xq, int64_t n, int64_t r0, int64_t r1,
                float* y);

}  // namespace internal
RS_KERNELS_END
}  // namespace radixserve::kernels
