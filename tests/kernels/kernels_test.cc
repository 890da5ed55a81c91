// CPU kernels: each SIMD kernel against its scalar reference, conversions,
// Q8_0 round trips and dots, MatMul (both paths, every weight type) against
// a double-precision reference, attention over scattered slots, thread pool.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/gemm_float.h"
#include "kernels/cpu/gemm_int8.h"
#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/vec_ops.h"

namespace radixserve::kernels {
namespace {

std::vector<float> Random(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = nd(rng);
  return v;
}

// Lengths that exercise SIMD bodies and scalar tails.
const int kLengths[] = {1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 768, 1000};

// ctest runs this program once per kernel set (RADIXSERVE_KERNELS): the set asked for must be the
// one under test, not a silent fall-back to another.
TEST(KernelSet, IsTheOneAskedFor) {
  const char* want = std::getenv("RADIXSERVE_KERNELS");
  if (want != nullptr && *want) {
    EXPECT_STREQ(ActiveKernelSet(), want);
  }
}

TEST(Convert, F16RoundTripAndSpecialValues) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = Fp16ToFp32Portable(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(Fp16ToFp32(static_cast<uint16_t>(h))));
      continue;
    }
    EXPECT_EQ(Fp32ToFp16(f), h) << h;                      // every half survives the round trip
    EXPECT_EQ(Fp16ToFp32(static_cast<uint16_t>(h)), f) << h;  // hardware path == portable path
  }
  EXPECT_EQ(Fp32ToFp16(1.0f), 0x3c00);
  EXPECT_EQ(Fp32ToFp16(65504.0f), 0x7bff);
  EXPECT_EQ(Fp32ToFp16(1e6f), 0x7c00);          // overflow to inf
  EXPECT_EQ(Fp32ToFp16(-0.0f), 0x8000);
  EXPECT_EQ(Fp32ToFp16(1.0f + 1.0f / 2048), 0x3c00);  // tie rounds to even
  EXPECT_EQ(Fp32ToFp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
}

TEST(Convert, RowConversionsMatchScalar) {
  for (int n : kLengths) {
    std::vector<float> x = Random(n, n, 3.0f);
    std::vector<uint16_t> h(n), b(n);
    ConvertF32ToF16(x.data(), h.data(), n);
    ConvertF32ToBf16(x.data(), b.data(), n);
    std::vector<float> y(n), ry(n);
    ConvertF16ToF32(h.data(), y.data(), n);
    ref::ConvertF16ToF32(h.data(), ry.data(), n);
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(h[i], Fp32ToFp16(x[i]));
      EXPECT_EQ(y[i], ry[i]);
      // F16 keeps 11 significant bits: round-to-nearest is within 2^-11 ~ 4.9e-4 relative; 1e-7 for
      // subnormal halves (their step is 2^-24 ~ 6e-8).
      EXPECT_NEAR(y[i], x[i], std::abs(x[i]) * 1e-3f + 1e-7f);
    }
    ConvertBf16ToF32(b.data(), y.data(), n);
    ref::ConvertBf16ToF32(b.data(), ry.data(), n);
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(y[i], ry[i]);
      EXPECT_NEAR(y[i], x[i], std::abs(x[i]) * 8e-3f);
    }
  }
  EXPECT_EQ(Fp32ToBf16(1.0f), 0x3f80);
  EXPECT_TRUE(std::isnan(Bf16ToFp32(Fp32ToBf16(NAN))));
}

TEST(VecOps, DotsMatchReference) {
  for (int n : kLengths) {
    std::vector<float> a = Random(n, 1 + n), b = Random(n, 2 + n);
    std::vector<uint16_t> h(n), bf(n);
    ConvertF32ToF16(a.data(), h.data(), n);
    ConvertF32ToBf16(a.data(), bf.data(), n);
    // F32 dot products of length n summed in another order (SIMD lanes vs one accumulator): the
    // rounding errors of the two orders grow like sqrt(n) * u * sum|a*b| for random signs (u = 2^-24,
    // |a*b| <= 1 here); 1e-4 * sqrt(n) is far above that, and the 1e-5 covers n = 1.
    const float tol = 1e-4f * std::sqrt(static_cast<float>(n)) + 1e-5f;
    EXPECT_NEAR(DotF32(a.data(), b.data(), n), ref::DotF32(a.data(), b.data(), n), tol) << n;
    EXPECT_NEAR(DotF16F32(h.data(), b.data(), n), ref::DotF16F32(h.data(), b.data(), n), tol) << n;
    EXPECT_NEAR(DotBf16F32(bf.data(), b.data(), n), ref::DotBf16F32(bf.data(), b.data(), n), tol) << n;
  }
}

TEST(VecOps, RmsNormSiluSoftmaxMatchReference) {
  for (int n : kLengths) {
    std::vector<float> x = Random(n, 3 + n, 2.0f), w = Random(n, 4 + n), y(n), ry(n);
    RmsNorm(x.data(), w.data(), 1e-5f, y.data(), n);
    ref::RmsNorm(x.data(), w.data(), 1e-5f, ry.data(), n);
    // The sum of squares is accumulated in another order. Its rounding errors have random signs, so
    // the scale differs by about sqrt(n)*u relative (u = 2^-24; 4e-6 at n = 4096; n*u only if every
    // error had the same sign): 1e-5 relative, plus 1e-5 absolute near zero.
    for (int i = 0; i < n; ++i) EXPECT_NEAR(y[i], ry[i], 1e-5f * (1 + std::abs(ry[i])));
    std::vector<float> g = Random(n, 5 + n, 4.0f), u = Random(n, 6 + n);
    SiluMul(g.data(), u.data(), y.data(), n);
    ref::SiluMul(g.data(), u.data(), ry.data(), n);
    // Elementwise: the SIMD exp() polynomial is a few ulp from std::exp, and one division and
    // multiply add an ulp each: 1e-5 relative is ~80 ulp, plus 1e-5 absolute near zero.
    for (int i = 0; i < n; ++i) EXPECT_NEAR(y[i], ry[i], 1e-5f * (1 + std::abs(ry[i])));
    std::vector<float> s = Random(n, 7 + n, 5.0f), rs = s;
    Softmax(s.data(), n);
    ref::Softmax(rs.data(), n);
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      // exp() in SIMD (a polynomial, a few ulp) against std::exp, and the normalising sum in
      // another order: 1e-5 relative; 1e-6 absolute for the smallest probabilities.
      EXPECT_NEAR(s[i], rs[i], 1e-6f + 1e-5f * rs[i]);
      sum += s[i];
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);  // n values each within their own rounding of the normalisation
  }
  // SiLU saturates cleanly at large magnitudes.
  std::vector<float> g = {-100.0f, 100.0f, 0.0f, -88.0f, 89.0f, 0.0f, 0.0f, 0.0f}, u(8, 1.0f), y(8);
  SiluMul(g.data(), u.data(), y.data(), 8);
  EXPECT_NEAR(y[0], 0.0f, 1e-30f);  // silu(-100) = -100 / (1 + e^100) ~ -3.7e-42: below F32's normal range
  EXPECT_FLOAT_EQ(y[1], 100.0f);
  EXPECT_FLOAT_EQ(y[2], 0.0f);
  EXPECT_TRUE(std::isfinite(y[3]) && std::isfinite(y[4]));
}

// gemma2's soft-capping: cap * tanh(x / cap) within a few ulp of the cap (the SIMD tanh is
// 1 - 2 / (exp(2|x|) + 1)), odd, saturating at +-cap, over scores from tiny to far past the cap.
TEST(VecOps, SoftCapMatchesReference) {
  for (float cap : {4.0f, 50.0f}) {
    std::vector<float> x;
    for (int i = -300; i <= 300; ++i) x.push_back(cap * 0.02f * static_cast<float>(i) * std::abs(static_cast<float>(i)) / 300);
    for (float tiny : {1e-6f, -3e-5f, 0.0f}) x.push_back(tiny);
    std::vector<float> got = x, want = x;
    SoftCap(got.data(), static_cast<int64_t>(got.size()), cap);
    ref::SoftCap(want.data(), static_cast<int64_t>(want.size()), cap);
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], cap * 1e-6f) << "x " << x[i] << " cap " << cap;
      EXPECT_LE(std::abs(got[i]), cap);
    }
  }
}

TEST(VecOps, RopeRotatesAdjacentPairsOnly) {
  const int heads = 2, hd = 8, rot = 4;
  std::vector<float> x = Random(heads * hd, 9), orig = x;
  const float cs[4] = {std::cos(0.3f), std::sin(0.3f), std::cos(0.01f), std::sin(0.01f)};
  RopeNorm(x.data(), heads, hd, rot, cs);
  for (int h = 0; h < heads; ++h) {
    const float* o = orig.data() + h * hd;
    const float* v = x.data() + h * hd;
    // One multiply-add of values below 1: at most a couple of ulp (2^-23 ~ 1.2e-7) apart with FMA.
    EXPECT_NEAR(v[0], o[0] * cs[0] - o[1] * cs[1], 1e-6f);
    EXPECT_NEAR(v[1], o[0] * cs[1] + o[1] * cs[0], 1e-6f);
    EXPECT_NEAR(v[2], o[2] * cs[2] - o[3] * cs[3], 1e-6f);
    for (int d = rot; d < hd; ++d) EXPECT_EQ(v[d], o[d]);  // past rot_dim: untouched
  }
}

TEST(Q8_0, QuantizeMatchesReferenceAndRoundTrips) {
  for (int blocks : {1, 2, 3, 24}) {
    const int n = blocks * 32;
    std::vector<float> x = Random(n, blocks, 2.0f);
    x[5] = 0.0f;
    std::vector<BlockQ8_0> q(blocks), rq(blocks);
    QuantizeRowQ8_0(x.data(), q.data(), n);
    ref::QuantizeRowQ8_0(x.data(), rq.data(), n);
    EXPECT_EQ(std::memcmp(q.data(), rq.data(), blocks * sizeof(BlockQ8_0)), 0);
    std::vector<float> y(n);
    DequantizeRowQ8_0(q.data(), y.data(), n);
    for (int b = 0; b < blocks; ++b) {
      float amax = 0;
      for (int i = 0; i < 32; ++i) amax = std::max(amax, std::abs(x[b * 32 + i]));
      // Q8_0 steps are amax/127: rounding is within half a step (0.51 for the scale's own F16
      // rounding), and the F16 scale is off by up to 2^-11 relative (1e-3 * amax covers it).
      for (int i = 0; i < 32; ++i) EXPECT_NEAR(y[b * 32 + i], x[b * 32 + i], amax / 127 * 0.51f + 1e-3f * amax);
    }
  }
  std::vector<float> zeros(32, 0.0f), y(32, 1.0f);
  BlockQ8_0 z;
  QuantizeRowQ8_0(zeros.data(), &z, 32);
  DequantizeRowQ8_0(&z, y.data(), 32);
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

TEST(Q8_0, DotMatchesReferenceExactlyUpToFloatOrder) {
  for (int blocks : {1, 2, 3, 24, 64}) {
    const int n = blocks * 32;
    std::vector<float> a = Random(n, 10 + blocks), b = Random(n, 20 + blocks);
    a[0] = -1000.0f;  // a block with a -127 value
    std::vector<BlockQ8_0> qa(blocks), qb(blocks);
    QuantizeRowQ8_0(a.data(), qa.data(), n);
    QuantizeRowQ8_0(b.data(), qb.data(), n);
    const float want = ref::DotQ8_0(qa.data(), qb.data(), n);
    // Both sum exact int8 products per block; only the F32 sum of the per-block scaled sums differs in
    // order (blocks <= a few hundred, u = 2^-24): 1e-4 relative.
    EXPECT_NEAR(DotQ8_0(qa.data(), qb.data(), n), want, 1e-4f * (1 + std::abs(want))) << blocks;
    // And it approximates the float dot.
    EXPECT_NEAR(want, ref::DotF32(a.data(), b.data(), n), 0.05f * std::sqrt(float(n)) + 0.02f * std::abs(want));
  }
}

struct MatMulCase {
  WeightType type;
  int64_t n;
};

class MatMulTest : public ::testing::TestWithParam<MatMulCase> {};

// A weight matrix of N(0, 0.1) values in `type`, with its dequantised values.
struct TestWeight {
  std::vector<uint8_t> bytes;
  std::vector<float> deq;
  WeightView view;
};
TestWeight MakeWeight(WeightType type, int64_t rows, int64_t cols, uint32_t seed) {
  const std::vector<float> wf = Random(rows * cols, seed, 0.1f);
  TestWeight t{{}, std::vector<float>(rows * cols), WeightView{type, nullptr, rows, cols}};
  t.bytes.resize(t.view.row_bytes() * rows);
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* dst = t.bytes.data() + r * t.view.row_bytes();
    const float* src = wf.data() + r * cols;
    if (type == WeightType::kQ8_0) QuantizeRowQ8_0(src, reinterpret_cast<BlockQ8_0*>(dst), cols);
    else QuantizeBlocks(type, src, dst, cols);
  }
  t.view.data = t.bytes.data();
  DequantizeRows(t.view, 0, rows, t.deq.data());
  return t;
}

// MatMul of n tokens by an [87 x cols] `type` weight against a float64 product of the dequantised
// weights. 87 rows: odd, not a multiple of any row tile, and the last GEMM task's rows end in a
// partly filled 32-row tile.
void ExpectMatMulMatchesDoubleReference(WeightType type, int64_t n, int64_t cols) {
  const int64_t rows = 87;
  const TestWeight tw = MakeWeight(type, rows, cols, 31);
  const WeightView& w = tw.view;
  const std::vector<float>& deq = tw.deq;
  std::vector<float> x = Random(n * cols, 32);
  ThreadPool pool(2);
  MatMulScratch scratch(2);
  std::vector<float> y(n * rows);
  MatMul(w, x.data(), n, y.data(), scratch, pool);
  // Block types quantise the activations (Q8_0) at every batch size, for the streamed int8 dot
  // products or the int8 GEMM: allow for that error.
  const bool quantized_x = !IsFloatWeight(type);
  // Activations share one scale per 32 values, or per super-block of 256 for the K-quants.
  const int64_t group = GetWeightTypeInfo(type).block_elems == 256 ? 256 : 32;
  for (int64_t t = 0; t < n; ++t)
    for (int64_t r = 0; r < rows; ++r) {
      double want = 0, mag = 0, x_err = 0;
      for (int64_t k = 0; k < cols; ++k) {
        want += double(deq[r * cols + k]) * x[t * cols + k];
        mag += std::abs(double(deq[r * cols + k]) * x[t * cols + k]);
      }
      // Quantised x: each value is d * round(x / d) with d = amax / 127 of its group rounded to F16,
      // so it moves by at most d / 2 + 127 * |d - F16(d)| <= (0.5 + 127 * 2^-11) * amax / 127.
      for (int64_t g = 0; quantized_x && g < cols; g += group) {
        float amax = 0;
        for (int64_t k = g; k < g + group; ++k) amax = std::max(amax, std::abs(x[t * cols + k]));
        for (int64_t k = g; k < g + group; ++k) x_err += std::abs(double(deq[r * cols + k])) * 0.563 * amax / 127;
      }
      // BF16 weights in the BF16 sets' GEMM multiply x rounded to BF16 (8 significant bits: each
      // product moves by at most 2^-8 of its magnitude).
      if (type == WeightType::kBF16 && n > kMatMulStreamMaxBatch && GemmFloatRoundsActivationsToBf16()) x_err = mag / 256;
      // F32 accumulation in any order is within cols * u * mag (cols <= 768: 4.6e-5 worst case,
      // sqrt(cols) * u ~ 1.7e-6 typical) of a float64 sum: 1e-5 * mag.
      const double tol = x_err + 1e-5 * mag + 1e-6;
      ASSERT_NEAR(y[t * rows + r], want, tol) << "token " << t << " row " << r << " of " << cols << " columns";
    }
}

TEST_P(MatMulTest, MatchesDoubleReferenceOnDequantizedWeights) {
  const auto [type, n] = GetParam();
  // 512 columns: two K-quant super-blocks (a kernel's step from one to the next is checked).
  ExpectMatMulMatchesDoubleReference(type, n, 512);
}

// Rows whose block count is not a multiple of 8: 320 columns (10 blocks: the streamed tiles take 8
// blocks at a time, then a pair) and 352 (11 blocks: odd, the tiles that go block by block).
TEST(MatMul, BlockCountsOutsideTheTilesStepsMatchTheDoubleReference) {
  for (WeightType type : kAllWeightTypes) {
    if (IsFloatWeight(type) || GetWeightTypeInfo(type).block_elems != 32) continue;
    for (int64_t cols : {320, 352})
      for (int64_t n : {1, 3}) {
        SCOPED_TRACE(std::string(GetWeightTypeInfo(type).name) + " n=" + std::to_string(n));
        ExpectMatMulMatchesDoubleReference(type, n, cols);
      }
  }
}

// The int8 GEMM (large batches) and the streamed int8 dot products (one token) see the same
// 8-bit activations (one scale per 32 values, or per 256 for the K-quants) and sum exact integer
// products per block (the streamed K-quant kernels per super-block, scales applied in integers);
// only the F32 sums of the scaled terms differ in order. A term is at most about (|w| + 4 max|w| of its block) * |x| summed
// over the block (the offset form scales q + kOffset, the minimums carry the offset back), and 8
// blocks in F32 err by under 2 * 10 * 2^-24 of their magnitude: bound 1e-5 of it. A saturating
// int16 pair (maddubs on bytes over 128) would miss by a whole product pair, far outside it.
TEST(MatMul, Int8GemmMatchesTheStreamedDotsUpToFloatOrder) {
  const int64_t rows = 87, cols = 256, n = 43;  // 43: remainders after every kernel's token group
  const std::vector<float> x = Random(n * cols, 52);
  ThreadPool pool(2);
  MatMulScratch scratch(2);
  int block_types = 0, checked = 0;
  for (WeightType type : kAllWeightTypes) {
    if (IsFloatWeight(type)) continue;
    ++block_types;
    if (!GemmInt8Supports(type)) continue;
    const TestWeight tw = MakeWeight(type, rows, cols, 51);
    std::vector<float> gemm(n * rows), one(rows);
    MatMul(tw.view, x.data(), n, gemm.data(), scratch, pool);
    for (int64_t t = 0; t < n; ++t) {
      MatMul(tw.view, x.data() + t * cols, 1, one.data(), scratch, pool);
      for (int64_t r = 0; r < rows; ++r) {
        double mag = 0;
        for (int64_t b = 0; b < cols / 32; ++b) {
          const float* wb = tw.deq.data() + r * cols + b * 32;
          float block_max = 0;
          for (int k = 0; k < 32; ++k) block_max = std::max(block_max, std::abs(wb[k]));
          for (int k = 0; k < 32; ++k) mag += (std::abs(wb[k]) + 4 * block_max) * std::abs(x[t * cols + b * 32 + k]);
        }
        ASSERT_NEAR(gemm[t * rows + r], one[r], 1e-5 * mag)
            << GetWeightTypeInfo(type).name << " token " << t << " row " << r;
      }
    }
    ++checked;
  }
  // Every kernel set but the scalar one has the GEMM for every block type.
  EXPECT_EQ(checked, std::string(ActiveKernelSet()) == "scalar" ? 0 : block_types);
}

// Float weights in small (streamed) batches: every (row, token) product is summed in the same order
// whatever the batch size, so a token's output is the same alone and in any batch, bit for bit.
// 87 rows and 250 columns leave partial row tiles and a masked column tail.
TEST(MatMul, FloatWeightsGiveATokenTheSameBitsAtEveryStreamedBatchSize) {
  const int64_t rows = 87, cols = 250, max_n = kMatMulStreamMaxBatch;
  const std::vector<float> x = Random(max_n * cols, 42);
  ThreadPool pool(2);
  MatMulScratch scratch(2);
  for (WeightType type : {WeightType::kF32, WeightType::kF16, WeightType::kBF16}) {
    const TestWeight tw = MakeWeight(type, rows, cols, 41);
    const WeightView& w = tw.view;
    std::vector<float> all(max_n * rows);
    MatMul(w, x.data(), max_n, all.data(), scratch, pool);
    for (int64_t n = 1; n < max_n; ++n) {
      std::vector<float> y(n * rows);
      MatMul(w, x.data(), n, y.data(), scratch, pool);
      for (int64_t i = 0; i < n * rows; ++i)
        ASSERT_EQ(y[i], all[i]) << GetWeightTypeInfo(type).name << " batch " << n << " token " << i / rows
                                << " row " << i % rows;
    }
  }
}

// Float weights in large batches, through the float GEMM where the kernel set has one: every
// output is summed in column order whatever the batch size and however the rows are split among
// tasks (the thread count changes the split), so a token's output has the same bits in every
// batch. 87 rows leave a partly filled 32-row panel; 300 columns a panel of 44 after 256; 40
// tokens and the smaller batches leave partly filled 12-token blocks.
TEST(MatMul, FloatGemmGivesATokenTheSameBitsAtEveryBatchSizeAndSplit) {
  const int64_t rows = 87, cols = 300, max_n = 40;
  const std::vector<float> x = Random(max_n * cols, 46);
  ThreadPool pool(2), one_thread(1);
  MatMulScratch scratch(2), one_scratch(1);
  int checked = 0;
  for (WeightType type : {WeightType::kF32, WeightType::kF16, WeightType::kBF16}) {
    if (!GemmFloatSupports(type)) continue;
    ++checked;
    const TestWeight tw = MakeWeight(type, rows, cols, 45);
    const WeightView& w = tw.view;
    std::vector<float> all(max_n * rows);
    MatMul(w, x.data(), max_n, all.data(), scratch, pool);
    for (int64_t n : {kMatMulStreamMaxBatch + 1, int64_t{12}, int64_t{13}, int64_t{25}}) {
      std::vector<float> y(n * rows), y1(n * rows);
      MatMul(w, x.data(), n, y.data(), scratch, pool);
      MatMul(w, x.data(), n, y1.data(), one_scratch, one_thread);
      for (int64_t i = 0; i < n * rows; ++i) {
        ASSERT_EQ(y[i], all[i]) << GetWeightTypeInfo(type).name << " batch " << n << " token " << i / rows
                                << " row " << i % rows;
        ASSERT_EQ(y1[i], all[i]) << GetWeightTypeInfo(type).name << " one thread, batch " << n;
      }
    }
  }
  // The AVX-512 sets have the GEMM for every float type; the others convert tiles for OpenBLAS.
  const std::string set = ActiveKernelSet();
  EXPECT_EQ(checked, set == "scalar" || set == "avx2" ? 0 : 3);
}

// Block types in small (streamed) batches: the same, through the int8 dot products (activations
// quantised per token; integer sums exact; the float steps in one order at every batch size).
// 512 columns: two super-blocks of the K-quants, which then sum each in integers.
TEST(MatMul, BlockWeightsGiveATokenTheSameBitsAtEveryStreamedBatchSize) {
  const int64_t rows = 87, cols = 512, max_n = kMatMulStreamMaxBatch;
  const std::vector<float> x = Random(max_n * cols, 44);
  ThreadPool pool(2);
  MatMulScratch scratch(2);
  for (WeightType type : kAllWeightTypes) {
    if (IsFloatWeight(type)) continue;
    const TestWeight tw = MakeWeight(type, rows, cols, 43);
    std::vector<float> all(max_n * rows);
    MatMul(tw.view, x.data(), max_n, all.data(), scratch, pool);
    for (int64_t n = 1; n < max_n; ++n) {
      std::vector<float> y(n * rows);
      MatMul(tw.view, x.data(), n, y.data(), scratch, pool);
      for (int64_t i = 0; i < n * rows; ++i)
        ASSERT_EQ(y[i], all[i]) << GetWeightTypeInfo(type).name << " batch " << n << " token " << i / rows
                                << " row " << i % rows;
    }
  }
}

std::vector<MatMulCase> AllTypesAndBatches() {
  std::vector<MatMulCase> cases;
  for (WeightType t : kAllWeightTypes)
    for (int64_t n : {1, 3, 5, 8, 40}) cases.push_back({t, n});  // streaming (<= 8) and GEMM
  return cases;
}
INSTANTIATE_TEST_SUITE_P(TypesAndBatches, MatMulTest, ::testing::ValuesIn(AllTypesAndBatches()),
                         [](const ::testing::TestParamInfo<MatMulCase>& info) {
                           return std::string(GetWeightTypeInfo(info.param.type).name) + "_n" +
                                  std::to_string(info.param.n);
                         });

// The quantisers against the (ggml bit-exact) dequantisers: a wrong bit layout would scatter the
// values; a right one leaves the rounding error of the format. Bounds: a block's N(0, 1) values
// span about 4.4 (32 values) or 4 (16 values); a uniform rounding step s errs s / sqrt(12) RMS, so
// e.g. 4-bit (s ~ 0.29) ~0.085, 5-bit ~0.04, Q6_K (s ~ 0.0625 plus its 8-bit scales) ~0.02,
// Q3_K (s ~ 0.5) ~0.15, Q2_K (s ~ 1.2 over 16 values with a minimum) ~0.35; each bound is about
// 1.5 times that.
TEST(Quantize, RoundTripsThroughTheDequantiserWithinTheFormatsStep) {
  struct Bound {
    WeightType type;
    double rms;
  };
  const Bound bounds[] = {{WeightType::kQ8_0, 0.01}, {WeightType::kQ4_0, 0.13}, {WeightType::kQ4_1, 0.13},
                          {WeightType::kQ5_0, 0.065}, {WeightType::kQ5_1, 0.065}, {WeightType::kIQ4_NL, 0.13},
                          {WeightType::kQ2_K, 0.55}, {WeightType::kQ3_K, 0.25}, {WeightType::kQ4_K, 0.13},
                          {WeightType::kQ5_K, 0.065}, {WeightType::kQ6_K, 0.035}};
  const int64_t n = 4096;
  const std::vector<float> x = Random(n, 77);
  for (const Bound& b : bounds) {
    const WeightTypeInfo info = GetWeightTypeInfo(b.type);
    std::vector<uint8_t> q(n / info.block_elems * info.block_bytes);
    QuantizeBlocks(b.type, x.data(), q.data(), n);
    std::vector<float> y(n);
    DequantizeBlocks(b.type, q.data(), y.data(), n);
    double se = 0;
    for (int64_t i = 0; i < n; ++i) se += (x[i] - y[i]) * double(x[i] - y[i]);
    const double rms = std::sqrt(se / n);
    EXPECT_LT(rms, b.rms) << info.name;
    EXPECT_GT(rms, 0.0) << info.name << " is really quantised";
    // Zeros stay zeros (every format can represent 0 exactly).
    std::vector<float> zeros(n, 0.0f);
    QuantizeBlocks(b.type, zeros.data(), q.data(), n);
    DequantizeBlocks(b.type, q.data(), y.data(), n);
    EXPECT_EQ(*std::max_element(y.begin(), y.end()), 0.0f) << info.name;
    EXPECT_EQ(*std::min_element(y.begin(), y.end()), 0.0f) << info.name;
  }
}

class AttentionTest : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(AttentionTest, MatchesReferenceOverScatteredSlots) {
  const int kv_heads = 2, hd = GetParam().first, group = GetParam().second;
  const int64_t num_slots = 50, n_keys = 23;
  std::vector<float> k = Random(num_slots * kv_heads * hd, 41), v = Random(num_slots * kv_heads * hd, 42);
  std::vector<float> q = Random(group * hd, 43);
  std::vector<int32_t> slots(n_keys);
  for (int64_t i = 0; i < n_keys; ++i) slots[i] = static_cast<int32_t>((i * 17 + 3) % num_slots);
  for (WeightType type : {WeightType::kF32, WeightType::kF16, WeightType::kQ8_0, WeightType::kQ4_0}) {
    if (hd % GetWeightTypeInfo(type).block_elems != 0) continue;  // the block types need whole blocks per head
    SCOPED_TRACE(GetWeightTypeInfo(type).name);
    std::vector<uint8_t> kq(KvBytes(type, k.size())), vq(KvBytes(type, v.size()));
    QuantizeBlocks(type, k.data(), kq.data(), k.size());
    QuantizeBlocks(type, v.data(), vq.data(), v.size());
    KvLayerView view{kq.data(), vq.data(), kv_heads * hd, type};
    std::vector<float> scores(group * n_keys), out(group * hd), rout(group * hd);
    for (float softcap : {0.0f, 1.5f}) {  // gemma2's soft-capping, at a cap the scores reach
      AttendSlots(q.data(), group, view, 1, slots.data(), n_keys, hd, 0.25f, scores.data(), out.data(), softcap);
      ref::AttendSlots(q.data(), group, view, 1, slots.data(), n_keys, hd, 0.25f, scores.data(), rout.data(), softcap);
      // Same inputs (the stored keys/values are widened or dequantised exactly); scores, softmax and
      // the weighted sum in another order: within a few hundred ulp of the output, 1e-5 relative to
      // at least 1 (Q4_0's levels can reach past the values' range of 1).
      for (int i = 0; i < group * hd; ++i)
        EXPECT_NEAR(out[i], rout[i], 1e-5f * std::max(1.0f, std::abs(rout[i]))) << "softcap " << softcap;
    }
    // One key: the output is that key's stored value.
    AttendSlots(q.data(), group, view, 0, slots.data(), 1, hd, 0.25f, scores.data(), out.data());
    std::vector<float> stored(hd);
    const float* row = KvRowF32(view.v, view, 0, slots[0], hd, stored.data());
    for (int g = 0; g < group; ++g)
      for (int d = 0; d < hd; ++d) EXPECT_FLOAT_EQ(out[g * hd + d], row[d]);
  }
}

// A stored row read back is within the type's rounding of what was written: F16 half an ulp
// (2^-11 relative); Q8_0 half a step of its block (amax / 127 / 2, plus the fp16 rounding of the
// scale times 127); Q4_0 one step (amax / 8: the value opposite the block's extreme can be clamped
// from 8 to 7 steps), where a step uses the block's largest |x|.
TEST(KvRow, StoredRowsAreWithinTheirTypesRounding) {
  const int hd = 128;
  const std::vector<float> x = Random(hd, 77);
  for (WeightType type : {WeightType::kF16, WeightType::kQ8_0, WeightType::kQ4_0}) {
    SCOPED_TRACE(GetWeightTypeInfo(type).name);
    std::vector<uint8_t> stored(KvBytes(type, hd));
    QuantizeBlocks(type, x.data(), stored.data(), hd);
    const KvLayerView view{stored.data(), stored.data(), hd, type};
    std::vector<float> buf(hd);
    const float* back = KvRowF32(view.k, view, 0, 0, hd, buf.data());
    for (int b = 0; b < hd / 32; ++b) {
      float amax = 0;
      for (int i = 0; i < 32; ++i) amax = std::max(amax, std::abs(x[b * 32 + i]));
      for (int i = 0; i < 32; ++i) {
        const int at = b * 32 + i;
        const float bound = type == WeightType::kF16    ? std::abs(x[at]) * 0x1p-11f + 0x1p-25f
                            : type == WeightType::kQ8_0 ? amax / 127 * (0.5f + 127 * 0x1p-11f)
                                                        : amax / 8 * (1 + 8 * 0x1p-11f);
        EXPECT_LE(std::abs(back[at] - x[at]), bound) << "value " << at;
      }
    }
  }
}

// With AVX-512, head_dim 64 and 128 take the register-tiled kernel (groups over 4 in chunks of 4:
// 6, 7, 8); other head_dims (80, 96: Phi-3, 256: Gemma) and every shape without AVX-512 take the
// generic one, which widens F16 rows one at a time.
INSTANTIATE_TEST_SUITE_P(HeadDimsAndGroups, AttentionTest,
                         ::testing::Values(std::pair{16, 3}, std::pair{8, 2}, std::pair{64, 1}, std::pair{64, 2},
                                           std::pair{64, 3}, std::pair{64, 4}, std::pair{64, 6}, std::pair{64, 7},
                                           std::pair{64, 8}, std::pair{80, 2}, std::pair{96, 1}, std::pair{128, 1},
                                           std::pair{128, 4}, std::pair{128, 8}, std::pair{256, 8}));

TEST(ThreadPool, RunsEveryTaskOnceAcrossManyLoops) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int rep = 0; rep < 200; ++rep) {
      const int64_t n = rep % 37;
      std::vector<std::atomic<int>> hits(n);
      std::atomic<bool> bad_thread{false};
      pool.ParallelFor(n, [&](int64_t task, int thread) {
        hits[task].fetch_add(1);
        if (thread < 0 || thread >= threads) bad_thread = true;
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1);
      ASSERT_FALSE(bad_thread.load());
    }
  }
}

TEST(ThreadPool, LoopRightAfterConstructionCompletes) {
  // A loop issued before the workers have started must still complete.
  for (int i = 0; i < 50; ++i) {
    ThreadPool pool(2);
    std::atomic<int> count{0};
    pool.ParallelFor(64, [&](int64_t, int) { count.fetch_add(1); });
    EXPECT_EQ(count.load(), 64);
  }
}

}  // namespace
}  // namespace radixserve::kernels
