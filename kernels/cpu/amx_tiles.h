// AMX tile operations as the int8 GEMM uses them (gemm_int8_amx.cc), in two forms with one
// interface: HardwareTiles issues the instructions; EmulatedTiles computes what they are defined
// to compute, in plain code, so that the kernel's tile shapes, strides and operand layout are
// checked on CPUs without AMX. Two slots s = 0, 1 hold one product each: C_s (tile 3s) = A_s (tile
// 3s + 1, signed bytes) x B_s (tile 3s + 2, unsigned bytes in groups of 4), as TDPBSUD.
// Tile state is per thread (the CPU's, or a thread_local copy): each thread configures its own.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/simd.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace amx_tiles {

constexpr int kTileCount = 8, kMaxRows = 16, kMaxRowBytes = 64;

// The 64-byte operand of LDTILECFG (palette 1).
struct TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};  // bytes per row of each tile
  uint8_t rows[16] = {};
};
static_assert(sizeof(TileConfig) == 64, "LDTILECFG reads 64 bytes");

// Both slots: C tokens x 16 int32, A tokens x k_bytes, B k_bytes / 4 rows x 64 bytes.
inline TileConfig ProductConfig(int tokens, int k_bytes) {
  TileConfig c;
  for (int s = 0; s < 2; ++s) {
    c.rows[3 * s] = static_cast<uint8_t>(tokens), c.colsb[3 * s] = kMaxRowBytes;
    c.rows[3 * s + 1] = static_cast<uint8_t>(tokens), c.colsb[3 * s + 1] = static_cast<uint16_t>(k_bytes);
    c.rows[3 * s + 2] = static_cast<uint8_t>(k_bytes / 4), c.colsb[3 * s + 2] = kMaxRowBytes;
  }
  return c;
}

#if RS_HAVE_AMX_INT8
// The instructions take tile numbers as immediates, hence one branch per slot. GCC's tile-load
// and LDTILECFG intrinsics do not tell the compiler which memory they read (only TILESTORED
// clobbers memory): a compiler barrier first makes every store before them happen first.
struct HardwareTiles {
  static void Configure(const TileConfig& c) {
    __asm__ volatile("" : : "r"(&c) : "memory");
    _tile_loadconfig(&c);
  }
  static void Release() { _tile_release(); }
  // C_s = A_s x B_s: a's rows are a_stride bytes apart, b's 64.
  template <int kSlot>
  static void Multiply(const int8_t* a, int64_t a_stride, const uint8_t* b) {
    __asm__ volatile("" : : : "memory");
    if constexpr (kSlot == 0) {
      _tile_zero(0);
      _tile_loadd(1, a, a_stride);
      _tile_loadd(2, b, kMaxRowBytes);
      _tile_dpbsud(0, 1, 2);
    } else {
      _tile_zero(3);
      _tile_loadd(4, a, a_stride);
      _tile_loadd(5, b, kMaxRowBytes);
      _tile_dpbsud(3, 4, 5);
    }
  }
  // C_s's rows to c, 64 bytes apart.
  template <int kSlot>
  static void Store(int32_t* c) {
    if constexpr (kSlot == 0) {
      _tile_stored(0, c, kMaxRowBytes);
    } else {
      _tile_stored(3, c, kMaxRowBytes);
    }
  }
};
#endif  // RS_HAVE_AMX_INT8

// The same operations on a thread's copy of the tile registers. Shapes the hardware refuses
// (#UD: no configuration, or tiles that do not multiply) abort with a message.
struct EmulatedTiles {
  struct State {
    TileConfig config;
    bool configured = false;
    uint8_t tile[kTileCount][kMaxRows][kMaxRowBytes];
  };
  static State& Tiles() {
    thread_local State state;
    return state;
  }
  [[noreturn]] static void Fault(const char* what) {
    std::fprintf(stderr, "AMX emulation: %s (the instruction would fault)\n", what);
    std::abort();
  }
  static void Configure(const TileConfig& c) {
    if (c.palette != 1) Fault("palette other than 1");
    for (int i = 0; i < kTileCount; ++i)
      if (c.rows[i] > kMaxRows || c.colsb[i] > kMaxRowBytes) Fault("tile larger than 16 x 64 bytes");
    State& s = Tiles();
    s.config = c;
    s.configured = true;
    std::memset(s.tile, 0, sizeof(s.tile));  // LDTILECFG zeroes the tiles
  }
  static void Release() { Tiles().configured = false; }
  static void Load(int t, const void* src, int64_t stride) {
    State& s = Tiles();
    if (!s.configured) Fault("tile load without a configuration");
    std::memset(s.tile[t], 0, sizeof(s.tile[t]));  // bytes beyond the configured shape read as zero
    for (int r = 0; r < s.config.rows[t]; ++r)
      std::memcpy(s.tile[t][r], static_cast<const uint8_t*>(src) + r * stride, s.config.colsb[t]);
  }
  // TDPBSUD: C[m][n] += sum over k of signed A[m][4k + i] * unsigned B[k][4n + i], i < 4.
  static void DotSignedUnsigned(int c, int a, int b) {
    State& s = Tiles();
    const TileConfig& k = s.config;
    if (!s.configured) Fault("tile multiply without a configuration");
    if (k.rows[c] != k.rows[a] || k.colsb[c] != k.colsb[b] || k.colsb[a] != 4 * k.rows[b] || k.colsb[c] % 4 != 0)
      Fault("tile shapes that do not multiply");
    for (int m = 0; m < k.rows[c]; ++m)
      for (int n = 0; n < k.colsb[c] / 4; ++n) {
        int32_t sum;
        std::memcpy(&sum, &s.tile[c][m][4 * n], 4);
        for (int kk = 0; kk < k.rows[b]; ++kk)
          for (int i = 0; i < 4; ++i)
            sum += static_cast<int32_t>(static_cast<int8_t>(s.tile[a][m][4 * kk + i])) *
                   static_cast<int32_t>(s.tile[b][kk][4 * n + i]);
        std::memcpy(&s.tile[c][m][4 * n], &sum, 4);
      }
  }
  template <int kSlot>
  static void Multiply(const int8_t* a, int64_t a_stride, const uint8_t* b) {
    constexpr int c = 3 * kSlot;
    std::memset(Tiles().tile[c], 0, sizeof(Tiles().tile[c]));
    Load(c + 1, a, a_stride);
    Load(c + 2, b, kMaxRowBytes);
    DotSignedUnsigned(c, c + 1, c + 2);
  }
  template <int kSlot>
  static void Store(int32_t* c) {
    State& s = Tiles();
    if (!s.configured) Fault("tile store without a configuration");
    constexpr int t = 3 * kSlot;
    for (int r = 0; r < s.config.rows[t]; ++r)
      std::memcpy(reinterpret_cast<uint8_t*>(c) + r * kMaxRowBytes, s.tile[t][r], s.config.colsb[t]);
  }
};

}  // namespace amx_tiles
RS_KERNELS_END
}  // namespace radixserve::kernels
