// What the int8 GEMM kernels share (gemm_int8.cc: VNNI and AVX2; gemm_int8_amx.cc: AMX tiles):
// the packed 16-row weight tile, its packing from any block type, and the view of one block of
// the quantised batch. Internal to kernels/cpu; compiled into each kernel set. Thread-safety: pure
// functions over caller buffers.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/block_decoders.h"
#include "kernels/cpu/gemm_int8.h"
#include "kernels/cpu/simd.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace gemm_int8_pack {
#if RS_HAVE_AVX2
using namespace block_decoders;

constexpr int kTileRows = 16;
// One block of 32 values of a 16-row tile: bytes [8 groups of 4 values][16 rows][4] (the operand
// order of vpdpbusd, and an AMX B tile of 8 rows of 64 bytes), then per half-block (16 values)
// the 16 rows' scales and effective minimums (m - kOffset * s).
struct PackedBlock {
  uint8_t q[8][kTileRows][4];
  float scale[2][kTileRows];
  float min[2][kTileRows];
};
static_assert(sizeof(PackedBlock) == kGemmInt8PackedBlockBytes, "packed block layout");

// Types with a scale per 16 values (Q2_K, Q3_K, Q6_K): a block's two halves are scaled apart;
// the others have one scale (and minimum) per 32 values.
template <class D>
constexpr bool kSplitBlocks =
    std::is_same_v<D, DecodeQ2_K> || std::is_same_v<D, DecodeQ3_K> || std::is_same_v<D, DecodeQ6_K>;

// Rows [r0, r0 + rows) of w (rows <= 16) as packed blocks out[0, cols / 32); missing rows are zero.
template <class D>
void PackTile(const WeightView& w, int64_t r0, int64_t rows, PackedBlock* out) {
  const int64_t nb = w.cols / 32;
  alignas(32) uint8_t q[32];
  alignas(32) float scale[8], min[8];
  for (int r = 0; r < kTileRows; ++r) {
    if (r >= rows) {  // padding rows: zero weights
      for (int64_t b = 0; b < nb; ++b) {
        for (int g = 0; g < 8; ++g) std::memset(out[b].q[g][r], 0, 4);
        for (int h = 0; h < 2; ++h) out[b].scale[h][r] = out[b].min[h][r] = 0.0f;
      }
      continue;
    }
    const uint8_t* row = static_cast<const uint8_t*>(w.data) + (r0 + r) * w.row_bytes();
    typename D::Unit unit;
    for (int64_t b = 0; b < nb; ++b) {
      const int j = static_cast<int>(b % D::kBlocks);
      if (j == 0) D::Prepare(row, b / D::kBlocks, &unit);
      const Int8Block k = D::Load(unit, j);
      __m256i v = k.q;
      if constexpr (D::kOffset != 0) v = _mm256_add_epi8(v, _mm256_set1_epi8(static_cast<char>(D::kOffset)));
      _mm256_store_si256(reinterpret_cast<__m256i*>(q), v);
      _mm256_store_ps(scale, k.scale);
      _mm256_store_ps(min, D::kAffine ? k.min : _mm256_setzero_ps());
      for (int g = 0; g < 8; ++g) std::memcpy(out[b].q[g][r], q + 4 * g, 4);
      for (int h = 0; h < 2; ++h) {
        out[b].scale[h][r] = scale[4 * h];
        out[b].min[h][r] = min[4 * h] - static_cast<float>(D::kOffset) * scale[4 * h];
      }
    }
  }
}

// Block b of x from token t0 on (block-major, so token t0 + t is t rows further).
struct BatchBlock {
  const int8_t* q;      // [t][32]
  const float* d;       // [t]
  const float* d_sum;   // [t][2]: per half-block
  BatchBlock(const QuantizedBatch& x, int64_t b, int64_t t0)
      : q(x.q + (b * x.n + t0) * 32), d(x.d + b * x.n + t0), d_sum(x.d_sum + (b * x.n + t0) * 2) {}
  // What token t's minimum term multiplies: its half-block's sum (kSplit), else the block's.
  template <bool kSplit>
  float Sum(int t, int half) const {
    return kSplit ? d_sum[2 * t + half] : d_sum[2 * t] + d_sum[2 * t + 1];
  }
};
// The groups of 4 values under one scale: a half-block's (kSplit), else all 8 of the block.
template <bool kSplit>
constexpr int GroupBegin(int half) { return kSplit ? 4 * half : 0; }
template <bool kSplit>
constexpr int GroupEnd(int half) { return kSplit ? 4 * half + 4 : 8; }
#endif  // RS_HAVE_AVX2
}  // namespace gemm_int8_pack
RS_KERNELS_END
}  // namespace radixserve::kernels
