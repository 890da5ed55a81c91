// The block layouts of GGUF's quantised weight types (ggml's definitions, byte for byte) and
// their dequantisation to F32. Q8_0 has its own header (q8_0.h) because activations use it too.
// Dequantisation is plain float arithmetic without fused multiply-adds, so that every kernel set
// gives the same bits as ggml's own to_float. Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/weight.h"

namespace radixserve::kernels {

inline constexpr int kQK = 32;    // elements of a legacy block
inline constexpr int kQK_K = 256; // elements of a K-quant super-block

struct BlockQ4_0 {
  uint16_t d;          // fp16 scale
  uint8_t qs[kQK / 2]; // element j: low nibble of qs[j], element j+16: high nibble
};
struct BlockQ4_1 {
  uint16_t d, m;  // fp16 scale and minimum
  uint8_t qs[kQK / 2];
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];  // fifth bits, element j at bit j (little-endian u32)
  uint8_t qs[kQK / 2];
};
struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[kQK / 2];  // 4-bit indices into a fixed non-linear table
};
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];  // per 16 elements: low nibble scale, high nibble minimum
  uint8_t qs[kQK_K / 4];
  uint16_t d, dmin;
};
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];  // high bits
  uint8_t qs[kQK_K / 4];     // low 2 bits
  uint8_t scales[12];        // 16 six-bit scales
  uint16_t d;
};
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];  // 8 six-bit scales and 8 six-bit minimums
  uint8_t qs[kQK_K / 2];
};
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];  // low 4 bits
  uint8_t qh[kQK_K / 4];  // high 2 bits
  int8_t scales[kQK_K / 16];
  uint16_t d;
};

#define RS_CHECK_BLOCK(T, type)                                                                       \
  static_assert(sizeof(T) == GetWeightTypeInfo(WeightType::type).block_bytes, #T " size");            \
  static_assert(alignof(T) <= 2, #T " must pack like ggml's")
RS_CHECK_BLOCK(BlockQ4_0, kQ4_0);
RS_CHECK_BLOCK(BlockQ4_1, kQ4_1);
RS_CHECK_BLOCK(BlockQ5_0, kQ5_0);
RS_CHECK_BLOCK(BlockQ5_1, kQ5_1);
RS_CHECK_BLOCK(BlockIQ4_NL, kIQ4_NL);
RS_CHECK_BLOCK(BlockQ2_K, kQ2_K);
RS_CHECK_BLOCK(BlockQ3_K, kQ3_K);
RS_CHECK_BLOCK(BlockQ4_K, kQ4_K);
RS_CHECK_BLOCK(BlockQ5_K, kQ5_K);
RS_CHECK_BLOCK(BlockQ6_K, kQ6_K);
#undef RS_CHECK_BLOCK

// IQ4_NL's 16 levels (the values a 4-bit index stands for, before the block scale).
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

RS_KERNELS_BEGIN
// n elements of a row of type `type` (not F32/F16/BF16: convert.h has those; n a multiple of the
// type's block size) to F32.
void DequantizeBlocks(WeightType type, const void* src, float* dst, int64_t n);
RS_KERNELS_END

}  // namespace radixserve::kernels
