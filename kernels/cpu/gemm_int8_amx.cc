#include "kernels/cpu/gemm_int8_amx.h"

#include <algorithm>

#include "kernels/cpu/amx_tiles.h"
#include "kernels/cpu/block_decoders.h"
#include "kernels/cpu/gemm_int8_pack.h"
#include "kernels/cpu/simd.h"

#if !RS_HAVE_AMX_INT8
#error "gemm_int8_amx.cc is compiled for AVX-512 VNNI with AMX-INT8 only"
#else
namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace {
using namespace amx_tiles;
using namespace block_decoders;
using namespace gemm_int8_pack;

constexpr int kTileTokens = kMaxRows;

// A scale unit is the run of values under one weight scale: a half-block (kSplit) or a block.
template <bool kSplit>
struct Units {
  static constexpr int kPerBlock = kSplit ? 2 : 1;
  static constexpr int kBytes = 32 / kPerBlock;  // A's row bytes, and 4 x B's rows
};

// 16 packed rows x `tokens` (<= 16) tokens from t0; y at (t0, r0). The tiles hold the shapes of
// ProductConfig(tokens, Units<kSplit>::kBytes). Two units are multiplied per step (slots 0 and
// 1), so that one product's store and scaling can overlap the other's multiply.
template <class Tiles, bool kSplit>
void TileKernel(const PackedBlock* pack, int64_t nb, const QuantizedBatch& x, int64_t t0, int tokens, float* y,
                int64_t ldy, __mmask16 rows) {
  using U = Units<kSplit>;
  alignas(64) int32_t c[2][kTileTokens][kTileRows];
  __m512 acc[kTileTokens];
#pragma GCC unroll 16
  for (int t = 0; t < kTileTokens; ++t) acc[t] = _mm512_setzero_ps();
  auto a = [&](int64_t u) { return BatchBlock(x, u / U::kPerBlock, t0).q + (u % U::kPerBlock) * U::kBytes; };
  auto b = [&](int64_t u) { return pack[u / U::kPerBlock].q[(u % U::kPerBlock) * U::kBytes / 4][0]; };
  // The VNNI kernel's float steps per unit and token: the integer dot times scale * d, then the
  // minimum times the sum.
  auto scale = [&](int64_t u, const int32_t (*dot)[kTileRows]) {
    const int half = static_cast<int>(u % U::kPerBlock);
    const PackedBlock& p = pack[u / U::kPerBlock];
    const BatchBlock xb(x, u / U::kPerBlock, t0);
    const __m512 s = _mm512_loadu_ps(p.scale[half]), m = _mm512_loadu_ps(p.min[half]);
#pragma GCC unroll 16
    for (int t = 0; t < kTileTokens; ++t) {
      if (t >= tokens) break;
      const __m512 dx = _mm512_set1_ps(xb.d[t]);
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(dot[t])), _mm512_mul_ps(s, dx), acc[t]);
      acc[t] = _mm512_fmadd_ps(m, _mm512_set1_ps(xb.Sum<kSplit>(t, half)), acc[t]);
    }
  };
  const int64_t units = nb * U::kPerBlock, a_stride = 32;  // block-major batch: tokens 32 bytes apart
  int64_t u = 0;
  for (; u + 1 < units; u += 2) {
    Tiles::template Multiply<0>(a(u), a_stride, b(u));
    Tiles::template Multiply<1>(a(u + 1), a_stride, b(u + 1));
    Tiles::template Store<0>(c[0][0]);
    Tiles::template Store<1>(c[1][0]);
    scale(u, c[0]);
    scale(u + 1, c[1]);
  }
  if (u < units) {
    Tiles::template Multiply<0>(a(u), a_stride, b(u));
    Tiles::template Store<0>(c[0][0]);
    scale(u, c[0]);
  }
#pragma GCC unroll 16
  for (int t = 0; t < kTileTokens; ++t) {
    if (t >= tokens) break;
    _mm512_mask_storeu_ps(y + t * ldy, rows, acc[t]);
  }
}

template <class Tiles, class D>
void Rows(const WeightView& w, const QuantizedBatch& x, int64_t r0, int64_t r1, float* y, int64_t ldy, void* pack) {
  constexpr bool kSplit = kSplitBlocks<D>;
  auto* tile = static_cast<PackedBlock*>(pack);
  const int64_t nb = w.cols / 32;
  int configured = 0;  // the token count the tiles are shaped for
  for (int64_t r = r0; r < r1; r += kTileRows) {
    const int64_t rows = std::min<int64_t>(kTileRows, r1 - r);
    PackTile<D>(w, r, rows, tile);
    const __mmask16 mask = static_cast<__mmask16>((1u << rows) - 1);
    for (int64_t t = 0; t < x.n; t += kTileTokens) {
      const int tokens = static_cast<int>(std::min<int64_t>(kTileTokens, x.n - t));
      if (tokens != configured) {
        Tiles::Configure(ProductConfig(tokens, Units<kSplit>::kBytes));
        configured = tokens;
      }
      TileKernel<Tiles, kSplit>(tile, nb, x, t, tokens, y + t * ldy + r, ldy, mask);
    }
  }
  if (configured != 0) Tiles::Release();
}

template <class Tiles>
void AmxRows(const WeightView& w, const QuantizedBatch& x, int64_t r0, int64_t r1, float* y, int64_t ldy,
             void* pack) {
  VisitDecoder(w.type, [&](auto d) { Rows<Tiles, decltype(d)>(w, x, r0, r1, y, ldy, pack); });
}

}  // namespace
RS_KERNELS_END
}  // namespace radixserve::kernels

extern "C" __attribute__((visibility("default"))) void radixserve_gemm_int8_rows_amx(
    const radixserve::kernels::WeightView& w, const radixserve::kernels::QuantizedBatch& x, int64_t r0, int64_t r1,
    float* y, int64_t ldy, void* pack) {
  using namespace radixserve::kernels::RS_KERNEL_ISA;
  AmxRows<amx_tiles::HardwareTiles>(w, x, r0, r1, y, ldy, pack);
}

extern "C" __attribute__((visibility("default"))) void radixserve_gemm_int8_rows_amx_emulated(
    const radixserve::kernels::WeightView& w, const radixserve::kernels::QuantizedBatch& x, int64_t r0, int64_t r1,
    float* y, int64_t ldy, void* pack) {
  using namespace radixserve::kernels::RS_KERNEL_ISA;
  AmxRows<amx_tiles::EmulatedTiles>(w, x, r0, r1, y, ldy, pack);
}
#endif  // RS_HAVE_AMX_INT8
