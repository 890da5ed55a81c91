#include "kernels/cpu/gemm_float.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/simd.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace {

#if RS_HAVE_AVX512
// BF16 weights multiply in BF16 pairs where the set is compiled for AVX-512 BF16; elsewhere they
// are converted to F32 in the panel (exact) like F16.
#if defined(__AVX512BF16__)
constexpr bool kPairsForBf16 = true;
#else
constexpr bool kPairsForBf16 = false;
#endif

constexpr int kRows = 32;  // a panel's rows: two vectors
constexpr int kTok = static_cast<int>(kGemmFloatTokens);
constexpr int64_t kPanelSteps = 256;  // columns (F32 layout) or column pairs (BF16 pairs) per panel
static_assert(kRows * kPanelSteps * 4 == kGemmFloatPanelBytes);

bool Pairs(WeightType type) { return kPairsForBf16 && type == WeightType::kBF16; }
// A packed token's values per block: columns, or column pairs.
int64_t Steps(bool pairs, int64_t cols) { return pairs ? (cols + 1) / 2 : cols; }

const uint8_t* RowPtr(const WeightView& w, int64_t r) {
  return static_cast<const uint8_t*>(w.data) + r * w.row_bytes();
}

// Step s of one row as the panel holds it: an F32 value's bits, or a BF16 pair (column 2s in
// the low half; a missing last column is zero).
template <bool kPairs>
uint32_t Element(const WeightView& w, const uint8_t* row, int64_t s) {
  float f;
  if constexpr (kPairs) {
    const auto* h = reinterpret_cast<const uint16_t*>(row);
    const uint32_t hi = 2 * s + 1 < w.cols ? h[2 * s + 1] : 0;
    return h[2 * s] | hi << 16;
  } else if (w.type == WeightType::kF32) {
    f = reinterpret_cast<const float*>(row)[s];
  } else if (w.type == WeightType::kF16) {
    f = Fp16ToFp32(reinterpret_cast<const uint16_t*>(row)[s]);
  } else {
    f = Bf16ToFp32(reinterpret_cast<const uint16_t*>(row)[s]);
  }
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

// Steps [s, s + 16) of one row as 16 panel elements (all within the row).
template <bool kPairs>
__m512i Load16(const WeightView& w, const uint8_t* row, int64_t s) {
  if constexpr (kPairs) return _mm512_loadu_si512(row + 4 * s);
  if (w.type == WeightType::kF32) return _mm512_loadu_si512(row + 4 * s);
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * s));
  if (w.type == WeightType::kF16) return _mm512_castps_si512(_mm512_cvtph_ps(h));
  return _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
}

// a[r] lane c -> a[c] lane r, for 16 x 16 32-bit values.
inline void Transpose16(__m512i a[16]) {
  __m512i b[16], c[16];
  for (int i = 0; i < 16; i += 2) {
    b[i] = _mm512_unpacklo_epi32(a[i], a[i + 1]);
    b[i + 1] = _mm512_unpackhi_epi32(a[i], a[i + 1]);
  }
  // c[4g + j], 128-bit lane L: column 4L + j of rows 4g .. 4g + 3.
  for (int g = 0; g < 16; g += 4) {
    c[g] = _mm512_unpacklo_epi64(b[g], b[g + 2]);
    c[g + 1] = _mm512_unpackhi_epi64(b[g], b[g + 2]);
    c[g + 2] = _mm512_unpacklo_epi64(b[g + 1], b[g + 3]);
    c[g + 3] = _mm512_unpackhi_epi64(b[g + 1], b[g + 3]);
  }
  // Column 4L + j gathers lane L of c[j], c[4 + j], c[8 + j], c[12 + j].
  for (int j = 0; j < 4; ++j) {
    const __m512i d0 = _mm512_shuffle_i32x4(c[j], c[4 + j], 0x44), d1 = _mm512_shuffle_i32x4(c[j], c[4 + j], 0xee);
    const __m512i d2 = _mm512_shuffle_i32x4(c[8 + j], c[12 + j], 0x44),
                  d3 = _mm512_shuffle_i32x4(c[8 + j], c[12 + j], 0xee);
    a[j] = _mm512_shuffle_i32x4(d0, d2, 0x88);
    a[4 + j] = _mm512_shuffle_i32x4(d0, d2, 0xdd);
    a[8 + j] = _mm512_shuffle_i32x4(d1, d3, 0x88);
    a[12 + j] = _mm512_shuffle_i32x4(d1, d3, 0xdd);
  }
}

// Rows [p, p + nr) and steps [s0, s0 + ns) of w into panel[s][kRows] (rows past nr are zeros):
// whole 16 x 16 tiles through registers, the edges one value at a time.
template <bool kPairs>
void PackPanel(const WeightView& w, int64_t p, int nr, int64_t s0, int64_t ns, void* panel) {
  auto* dst = static_cast<uint32_t*>(panel);
  // Steps whose 16-wide loads stay inside every row (a pair needs its second column).
  const int64_t whole = kPairs ? std::min(ns, w.cols / 2 - s0) / 16 * 16 : ns / 16 * 16;
  for (int h = 0; h < kRows; h += 16) {
    if (nr - h >= 16) {
      const uint8_t* rows[16];
      for (int r = 0; r < 16; ++r) rows[r] = RowPtr(w, p + h + r);
      for (int64_t s = 0; s < whole; s += 16) {
        __m512i a[16];
        for (int r = 0; r < 16; ++r) a[r] = Load16<kPairs>(w, rows[r], s0 + s);
        Transpose16(a);
        for (int j = 0; j < 16; ++j) _mm512_store_si512(dst + (s + j) * kRows + h, a[j]);
      }
    }
    for (int r = h; r < h + 16; ++r) {
      const int64_t from = nr - h >= 16 ? whole : 0;
      if (r >= nr) {
        for (int64_t s = from; s < ns; ++s) dst[s * kRows + r] = 0;
        continue;
      }
      const uint8_t* row = RowPtr(w, p + r);
      for (int64_t s = from; s < ns; ++s) dst[s * kRows + r] = Element<kPairs>(w, row, s0 + s);
    }
  }
}

// One panel (kRows rows, m0/m1 the valid ones) times one token block (nt valid tokens) over ns
// steps, added to y (or written, on the first steps) at token t: y[t * ldy + row].
template <bool kPairs>
void Tile(const void* panel, const void* xp, int64_t ns, float* y, int64_t ldy, int nt, __mmask16 m0, __mmask16 m1,
          bool first) {
  __m512 acc[kTok][2];
#pragma GCC unroll 12
  for (int t = 0; t < kTok; ++t) {
    if (first || t >= nt) {
      acc[t][0] = acc[t][1] = _mm512_setzero_ps();
    } else {
      acc[t][0] = _mm512_maskz_loadu_ps(m0, y + t * ldy);
      acc[t][1] = _mm512_maskz_loadu_ps(m1, y + t * ldy + 16);
    }
  }
  if constexpr (kPairs) {
#if defined(__AVX512BF16__)
    const auto* w = static_cast<const uint32_t*>(panel);
    const auto* x = static_cast<const uint32_t*>(xp);
    for (int64_t s = 0; s < ns; ++s, w += kRows, x += kTok) {
      const __m512bh w0 = (__m512bh)_mm512_load_si512(w), w1 = (__m512bh)_mm512_load_si512(w + 16);
#pragma GCC unroll 12
      for (int t = 0; t < kTok; ++t) {
        const __m512bh xb = (__m512bh)_mm512_set1_epi32(static_cast<int>(x[t]));
        acc[t][0] = _mm512_dpbf16_ps(acc[t][0], w0, xb);
        acc[t][1] = _mm512_dpbf16_ps(acc[t][1], w1, xb);
      }
    }
#endif
  } else {
    const auto* w = static_cast<const float*>(panel);
    const auto* x = static_cast<const float*>(xp);
    for (int64_t s = 0; s < ns; ++s, w += kRows, x += kTok) {
      const __m512 w0 = _mm512_load_ps(w), w1 = _mm512_load_ps(w + 16);
#pragma GCC unroll 12
      for (int t = 0; t < kTok; ++t) {
        const __m512 xb = _mm512_set1_ps(x[t]);
        acc[t][0] = _mm512_fmadd_ps(w0, xb, acc[t][0]);
        acc[t][1] = _mm512_fmadd_ps(w1, xb, acc[t][1]);
      }
    }
  }
#pragma GCC unroll 12
  for (int t = 0; t < kTok; ++t) {
    if (t >= nt) break;
    _mm512_mask_storeu_ps(y + t * ldy, m0, acc[t][0]);
    _mm512_mask_storeu_ps(y + t * ldy + 16, m1, acc[t][1]);
  }
}

template <bool kPairs>
void Rows(const WeightView& w, const void* packed, int64_t n, int64_t r0, int64_t r1, float* y, int64_t ldy,
          void* panel) {
  const int64_t steps = Steps(kPairs, w.cols);
  const int64_t blocks = (n + kTok - 1) / kTok;
  // Steps outermost: one step range of every token block (at most 12 KB each) stays in L2 while
  // each panel of it is packed once and runs over all the blocks.
  for (int64_t s0 = 0; s0 < steps; s0 += kPanelSteps) {
    const int64_t ns = std::min(kPanelSteps, steps - s0);
    for (int64_t p = r0; p < r1; p += kRows) {
      const int nr = static_cast<int>(std::min<int64_t>(kRows, r1 - p));
      PackPanel<kPairs>(w, p, nr, s0, ns, panel);
      const __mmask16 m0 = nr >= 16 ? 0xffff : static_cast<__mmask16>((1u << nr) - 1);
      const __mmask16 m1 = nr >= 32 ? 0xffff : nr > 16 ? static_cast<__mmask16>((1u << (nr - 16)) - 1) : 0;
      for (int64_t b = 0; b < blocks; ++b) {
        const auto* xp = static_cast<const uint8_t*>(packed) + (b * steps + s0) * kTok * 4;
        Tile<kPairs>(panel, xp, ns, y + b * kTok * ldy + p, ldy, static_cast<int>(std::min<int64_t>(kTok, n - b * kTok)),
                     m0, m1, s0 == 0);
      }
    }
  }
}
#endif  // RS_HAVE_AVX512

}  // namespace

bool GemmFloatSupports(WeightType type) {
#if RS_HAVE_AVX512
  return type == WeightType::kF32 || type == WeightType::kF16 || type == WeightType::kBF16;
#else
  (void)type;
  return false;
#endif
}

void GemmFloatPackX(WeightType type, const float* x, int64_t n, int64_t cols, void* packed, int64_t b0, int64_t b1) {
#if RS_HAVE_AVX512
  const bool pairs = Pairs(type);
  const int64_t steps = Steps(pairs, cols);
  for (int64_t b = b0; b < b1; ++b) {
    if (pairs) {
      auto* block = static_cast<uint32_t*>(packed) + b * steps * kTok;
      for (int t = 0; t < kTok; ++t) {
        const int64_t token = b * kTok + t;
        const float* row = x + (token < n ? token : 0) * cols;  // not read past n
        for (int64_t s = 0; s < steps; ++s) {
          const uint32_t hi = token < n && 2 * s + 1 < cols ? Fp32ToBf16(row[2 * s + 1]) : 0;
          block[s * kTok + t] = token < n ? Fp32ToBf16(row[2 * s]) | hi << 16 : 0;
        }
      }
      continue;
    }
    // 16 columns of the block's tokens at a time through a register transpose; the rest one by one.
    auto* block = static_cast<float*>(packed) + b * steps * kTok;
    const int64_t whole = steps / 16 * 16;
    for (int64_t s = 0; s < whole; s += 16) {
      __m512i a[16];
      for (int r = 0; r < 16; ++r)
        a[r] = r < kTok && b * kTok + r < n ? _mm512_loadu_si512(x + (b * kTok + r) * cols + s) : _mm512_setzero_si512();
      Transpose16(a);
      for (int j = 0; j < 16; ++j) _mm512_mask_storeu_epi32(block + (s + j) * kTok, (1u << kTok) - 1, a[j]);
    }
    for (int t = 0; t < kTok; ++t) {
      const int64_t token = b * kTok + t;
      for (int64_t s = whole; s < steps; ++s) block[s * kTok + t] = token < n ? x[token * cols + s] : 0.0f;
    }
  }
#else
  (void)type, (void)x, (void)n, (void)cols, (void)packed, (void)b0, (void)b1;
#endif
}

void GemmFloatRows(const WeightView& w, const void* packed, int64_t n, int64_t r0, int64_t r1, float* y, int64_t ldy,
                   void* panel) {
#if RS_HAVE_AVX512
  if (Pairs(w.type)) {
    Rows<true>(w, packed, n, r0, r1, y, ldy, panel);
  } else {
    Rows<false>(w, packed, n, r0, r1, y, ldy, panel);
  }
#else
  (void)w, (void)packed, (void)n, (void)r0, (void)r1, (void)y, (void)ldy, (void)panel;
#endif
}

RS_KERNELS_END
}  // namespace radixserve::kernels

#if defined(__AVX512BF16__) && RS_HAVE_AVX512
extern "C" __attribute__((visibility("default"))) bool radixserve_gemm_float_supports_bf16(
    radixserve::kernels::WeightType type) {
  return radixserve::kernels::RS_KERNEL_ISA::GemmFloatSupports(type);
}
extern "C" __attribute__((visibility("default"))) void radixserve_gemm_float_pack_x_bf16(
    radixserve::kernels::WeightType type, const float* x, int64_t n, int64_t cols, void* packed, int64_t b0,
    int64_t b1) {
  radixserve::kernels::RS_KERNEL_ISA::GemmFloatPackX(type, x, n, cols, packed, b0, b1);
}
extern "C" __attribute__((visibility("default"))) void radixserve_gemm_float_rows_bf16(
    const radixserve::kernels::WeightView& w, const void* packed, int64_t n, int64_t r0, int64_t r1, float* y,
    int64_t ldy, void* panel) {
  radixserve::kernels::RS_KERNEL_ISA::GemmFloatRows(w, packed, n, r0, r1, y, ldy, panel);
}
#endif
