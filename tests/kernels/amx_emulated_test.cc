// The AMX int8 GEMM (kernels/cpu/gemm_int8_amx.cc) with its tiles emulated (amx_tiles.h), on a
// CPU without AMX: its tile shapes, strides and operand layout against the VNNI GEMM. Both sum
// each block's (or half-block's) integer products exactly and apply the scales in the same float
// steps, in the same order, so they must give the same bits. On a CPU with AMX, ctest also runs
// every kernel test with the avx512-amx set, whose GEMM issues the real instructions.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/gemm_int8.h"
#include "kernels/cpu/gemm_int8_amx.h"
#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/weight.h"

namespace radixserve::kernels {
namespace {

std::vector<float> Random(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = nd(rng);
  return v;
}

TEST(AmxGemm, EmulatedTilesGiveTheVnniGemmsBits) {
  ASSERT_TRUE(UseKernelSet("avx512-vnni").ok());
  // 512 columns: two K-quant super-blocks, and an even number of units per tile step; 87 rows
  // with the range starting at row 5: a partial last row tile and an offset first one.
  const int64_t rows = 87, cols = 512, r0 = 5;
  std::vector<uint8_t> pack(GemmInt8PackBytes(cols));
  int checked = 0;
  for (WeightType type : kAllWeightTypes) {
    if (IsFloatWeight(type)) continue;
    WeightView w{type, nullptr, rows, cols};
    std::vector<uint8_t> bytes(w.row_bytes() * rows);
    const std::vector<float> wf = Random(rows * cols, 61, 0.1f);
    for (int64_t r = 0; r < rows; ++r) QuantizeBlocks(type, wf.data() + r * cols, bytes.data() + r * w.row_bytes(), cols);
    w.data = bytes.data();
    // Token counts: one partial AMX tile, one whole, whole + 1, and several with a remainder.
    for (int64_t n : {9, 16, 17, 43}) {
      const std::vector<float> x = Random(n * cols, 62 + static_cast<uint32_t>(n), 1.0f);
      std::vector<uint8_t> xbuf(QuantizedBatchBytes(n, cols));
      const QuantizedBatch xb = QuantizeBatch(x.data(), n, cols, xbuf.data(), 0, n);
      std::vector<float> vnni(n * rows, -1.0f), amx(n * rows, -2.0f);
      GemmInt8Rows(w, xb, r0, rows, vnni.data(), rows, pack.data());
      radixserve_gemm_int8_rows_amx_emulated(w, xb, r0, rows, amx.data(), rows, pack.data());
      for (int64_t t = 0; t < n; ++t)
        for (int64_t r = 0; r < rows; ++r) {
          const float want = r < r0 ? -1.0f : vnni[t * rows + r];  // rows before r0 stay untouched
          const float got = r < r0 ? amx[t * rows + r] + 1.0f : amx[t * rows + r];
          ASSERT_EQ(std::memcmp(&got, &want, sizeof(float)), 0)
              << GetWeightTypeInfo(type).name << " n=" << n << " token " << t << " row " << r << ": AMX " << got
              << ", VNNI " << want;
        }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 11 * 4);  // every block type at every token count
}

}  // namespace
}  // namespace radixserve::kernels
