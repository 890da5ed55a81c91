// The CUDA kernels against the CPU references (kernels/cpu, namespace ref) on random inputs.
// Each tolerance is stated where it is checked, from the arithmetic that differs between the two.
// Registered with ctest only where the build machine has a GPU (tests/CMakeLists.txt); elsewhere
// it is compiled, and tools/gpu-check.sh runs it on a GPU machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/sampling/row_sampler.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/vec_ops.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/sampling.h"
#include "tests/cuda/device_vector.h"

namespace radixserve::cuda {
namespace {

using testing::DeviceVector;

std::vector<float> Random(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = nd(rng);
  return v;
}

std::vector<uint16_t> ToF16(const std::vector<float>& v) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = kernels::Fp32ToFp16(v[i]);
  return h;
}

class CudaKernels : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GT(DeviceCount(), 0) << "no CUDA device: " << NoDeviceReason(); }
};

// Where the two sides round the same values in a different order or through different libm
// implementations (CUDA's expf/cosf/tanhf are within 2 ulp), a few ulp of the result's size.
void ExpectNear(const std::vector<float>& want, const std::vector<float>& got, float rel, float abs_floor,
                const char* what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_LE(std::fabs(want[i] - got[i]), rel * std::fabs(want[i]) + abs_floor)
        << what << " element " << i << ": cpu " << want[i] << ", gpu " << got[i];
}

TEST_F(CudaKernels, EmbedRowsGatherF16RowsExactly) {
  const int64_t vocab = 50, dim = 300;
  const std::vector<float> table = Random(vocab * dim, 1);
  const std::vector<uint16_t> table16 = ToF16(table);
  const std::vector<int32_t> ids = {3, 0, 49, 3, 17};
  DeviceVector<uint16_t> d_table(table16);
  DeviceVector<int32_t> d_ids(ids);
  DeviceVector<float> d_out(ids.size() * dim);
  ASSERT_TRUE(EmbedRowsF16(d_table.get(), d_ids.get(), ids.size(), dim, 2.5f, d_out.get(), nullptr).ok());
  const std::vector<float> out = d_out.ToHost();
  for (size_t t = 0; t < ids.size(); ++t)
    for (int64_t j = 0; j < dim; ++j)  // one exact conversion and one rounded product on both sides
      ASSERT_EQ(out[t * dim + j], kernels::Fp16ToFp32(table16[ids[t] * dim + j]) * 2.5f) << t << "," << j;
}

TEST_F(CudaKernels, RmsNormMatchesTheReference) {
  for (int64_t n : {1, 7, 64, 300, 4096}) {
    const int64_t rows = 5;
    const std::vector<float> x = Random(rows * n, 2, 3.0f), w = Random(n, 3);
    DeviceVector<float> d_x(x), d_w(w), d_y(rows * n);
    ASSERT_TRUE(RmsNorm(d_x.get(), d_w.get(), 1e-5f, d_y.get(), rows, n, nullptr).ok());
    std::vector<float> want(rows * n);
    for (int64_t r = 0; r < rows; ++r) kernels::ref::RmsNorm(&x[r * n], w.data(), 1e-5f, &want[r * n], n);
    // Both sum squares in double; the scale may differ in its last float bit, then two products.
    ExpectNear(want, d_y.ToHost(), 4e-7f, 0.0f, "RmsNorm");
  }
}

TEST_F(CudaKernels, RopeMatchesTheReferenceInBothPairings) {
  const int64_t n = 6;
  const int heads = 4, head_dim = 64;
  for (int rot_dim : {64, 32}) {
    for (bool neox : {false, true}) {
      const int half = rot_dim / 2;
      std::vector<int32_t> pos = {0, 1, 7, 100, 4095, 30000};
      std::vector<float> inv_freq(half);
      for (int i = 0; i < half; ++i) inv_freq[i] = static_cast<float>(std::pow(10000.0, -2.0 * i / rot_dim));
      const std::vector<float> x = Random(n * heads * head_dim, 4);
      DeviceVector<int32_t> d_pos(pos);
      DeviceVector<float> d_inv(inv_freq), d_cs(n * rot_dim), d_x(x);
      ASSERT_TRUE(RopeAngles(d_pos.get(), n, d_inv.get(), half, 1.0f, d_cs.get(), nullptr).ok());
      ASSERT_TRUE(Rope(d_x.get(), n, heads, head_dim, rot_dim, d_cs.get(), neox, nullptr).ok());
      std::vector<float> want = x;
      for (int64_t t = 0; t < n; ++t) {
        std::vector<float> cs(rot_dim);
        for (int i = 0; i < half; ++i) {
          const float theta = static_cast<float>(pos[t]) * inv_freq[i];
          cs[2 * i] = std::cos(theta);
          cs[2 * i + 1] = std::sin(theta);
        }
        (neox ? kernels::ref::RopeNeox : kernels::ref::RopeNorm)(&want[t * heads * head_dim], heads, head_dim,
                                                                  rot_dim, cs.data());
      }
      // cos/sin within 2 ulp of glibc's at the same float angle: an error of ~2^-23 times |x| per term.
      ExpectNear(want, d_x.ToHost(), 0.0f, 1e-5f, neox ? "RopeNeox" : "RopeNorm");
    }
  }
}

TEST_F(CudaKernels, GatedActivationsMatchTheReference) {
  const int64_t n = 10000;
  const std::vector<float> gate = Random(n, 5, 4.0f), up = Random(n, 6);
  DeviceVector<float> d_gate(gate), d_up(up), d_out(n);
  std::vector<float> want(n);
  ASSERT_TRUE(SiluMul(d_gate.get(), d_up.get(), d_out.get(), n, nullptr).ok());
  kernels::ref::SiluMul(gate.data(), up.data(), want.data(), n);
  ExpectNear(want, d_out.ToHost(), 2e-6f, 1e-30f, "SiluMul");  // expf within 2 ulp, then 3 roundings
  ASSERT_TRUE(GeluMul(d_gate.get(), d_up.get(), d_out.get(), n, nullptr).ok());
  kernels::ref::GeluMul(gate.data(), up.data(), want.data(), n);
  // tanhf within 2 ulp of a value near 1 where 1 + tanh cancels: absolute, not relative, error.
  ExpectNear(want, d_out.ToHost(), 2e-6f, 2e-6f, "GeluMul");
}

TEST_F(CudaKernels, AddAndBiasAreExact) {
  const int64_t rows = 7, cols = 33;
  const std::vector<float> x = Random(rows * cols, 7), y = Random(rows * cols, 8), b = Random(cols, 9);
  DeviceVector<float> d_x(x), d_y(y), d_b(b);
  ASSERT_TRUE(Add(d_x.get(), d_y.get(), rows * cols, nullptr).ok());
  ASSERT_TRUE(AddBias(d_y.get(), d_b.get(), rows, cols, nullptr).ok());
  const std::vector<float> got = d_y.ToHost();
  for (int64_t i = 0; i < rows * cols; ++i) ASSERT_EQ(got[i], (y[i] + x[i]) + b[i % cols]) << i;
}

TEST_F(CudaKernels, ConvertAndKvScatterRoundAsTheCpu) {
  const int64_t n = 5, kv_dim = 96, slots = 40;
  const std::vector<float> k = Random(n * kv_dim, 10, 30.0f), v = Random(n * kv_dim, 11);
  const std::vector<int32_t> where = {39, 0, 12, 13, 5};
  DeviceVector<float> d_k(k), d_v(v);
  DeviceVector<int32_t> d_where(where);
  DeviceVector<uint16_t> k16(slots * kv_dim), v16(slots * kv_dim), conv(n * kv_dim);
  DeviceVector<float> k32(slots * kv_dim), v32(slots * kv_dim);
  ASSERT_TRUE(KvScatter(d_k.get(), d_v.get(), d_where.get(), n, kv_dim, k16.get(), v16.get(), true, nullptr).ok());
  ASSERT_TRUE(KvScatter(d_k.get(), d_v.get(), d_where.get(), n, kv_dim, k32.get(), v32.get(), false, nullptr).ok());
  ASSERT_TRUE(ConvertF32ToF16(d_k.get(), conv.get(), n * kv_dim, nullptr).ok());
  const auto hk16 = k16.ToHost(), hv16 = v16.ToHost(), hconv = conv.ToHost();
  const auto hk32 = k32.ToHost(), hv32 = v32.ToHost();
  for (int64_t t = 0; t < n; ++t)
    for (int64_t j = 0; j < kv_dim; ++j) {
      const int64_t dst = where[t] * kv_dim + j, src = t * kv_dim + j;
      ASSERT_EQ(hk16[dst], kernels::Fp32ToFp16(k[src])) << t << "," << j;  // both round to nearest even
      ASSERT_EQ(hv16[dst], kernels::Fp32ToFp16(v[src])) << t << "," << j;
      ASSERT_EQ(hconv[src], kernels::Fp32ToFp16(k[src])) << t << "," << j;
      ASSERT_EQ(hk32[dst], k[src]);
      ASSERT_EQ(hv32[dst], v[src]);
    }
}

// Decode and extend batches over scattered slots, grouped-query heads, head sizes up to the
// largest, F32 and F16 caches, with and without a sliding window.
TEST_F(CudaKernels, PagedAttentionMatchesAttendSlots) {
  struct Case {
    int head_dim, q_heads, kv_heads, window;
    bool f16;
  };
  const Case cases[] = {{64, 8, 2, 0, false}, {64, 8, 2, 0, true}, {128, 4, 4, 0, true}, {8, 8, 8, 0, false},
                        {256, 2, 1, 0, false}, {80, 6, 3, 5, true}, {64, 8, 2, 37, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "head_dim " << c.head_dim << " heads " << c.q_heads << "/" << c.kv_heads
                                      << " window " << c.window << (c.f16 ? " f16" : " f32"));
    const int64_t num_slots = 3000, kv_dim = int64_t{c.kv_heads} * c.head_dim, row_stride = 1200;
    // Three sequences: a decode at position 700, an extend of 5 tokens after 90 cached, a prefill of 3.
    struct Seq {
      int cached, fresh;
    };
    const Seq seqs[] = {{700, 1}, {90, 5}, {0, 3}};
    std::mt19937 rng(12);
    std::vector<int32_t> all_slots(num_slots);
    for (int i = 0; i < num_slots; ++i) all_slots[i] = i;
    std::shuffle(all_slots.begin(), all_slots.end(), rng);
    std::vector<int32_t> rows(3 * row_stride, 0), token_row, token_pos;
    int next = 0;
    for (int s = 0; s < 3; ++s) {
      for (int p = 0; p < seqs[s].cached + seqs[s].fresh; ++p) rows[s * row_stride + p] = all_slots[next++];
      for (int i = 0; i < seqs[s].fresh; ++i) {
        token_row.push_back(s);
        token_pos.push_back(seqs[s].cached + i);
      }
    }
    const int64_t n = static_cast<int64_t>(token_row.size());
    const std::vector<float> k = Random(num_slots * kv_dim, 13), v = Random(num_slots * kv_dim, 14);
    const std::vector<float> q = Random(n * c.q_heads * c.head_dim, 15);
    // The CPU reads the same rounded values the GPU does.
    std::vector<uint16_t> k16 = ToF16(k), v16 = ToF16(v);
    DeviceVector<float> dk(k), dv(v), dq(q), dout(n * c.q_heads * c.head_dim);
    DeviceVector<uint16_t> dk16(k16), dv16(v16);
    DeviceVector<int32_t> drows(rows), dtok_row(token_row), dtok_pos(token_pos);
    PagedKvLayer layer{c.f16 ? static_cast<const void*>(dk16.get()) : dk.get(),
                       c.f16 ? static_cast<const void*>(dv16.get()) : dv.get(), kv_dim, c.f16};
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    const AttentionShape shape{c.q_heads, c.kv_heads, c.head_dim, c.window, scale};
    ASSERT_TRUE(PagedAttention(dq.get(), n, layer, shape, drows.get(), row_stride, dtok_row.get(), dtok_pos.get(),
                               dout.get(), nullptr)
                    .ok());
    const kernels::KvLayerView view{c.f16 ? static_cast<const void*>(k16.data()) : k.data(),
                                    c.f16 ? static_cast<const void*>(v16.data()) : v.data(), kv_dim,
                                    c.f16 ? kernels::WeightType::kF16 : kernels::WeightType::kF32};
    const int group = c.q_heads / c.kv_heads;
    std::vector<float> want(n * c.q_heads * c.head_dim), scores(group * 1200);
    for (int64_t t = 0; t < n; ++t) {
      const int n_keys = token_pos[t] + 1;
      const int first = c.window > 0 ? std::max(0, n_keys - c.window) : 0;
      for (int h = 0; h < c.kv_heads; ++h) {
        const int64_t off = (t * c.q_heads + int64_t{h} * group) * c.head_dim;
        kernels::ref::AttendSlots(&q[off], group, view, h, &rows[token_row[t] * row_stride + first], n_keys - first,
                                  c.head_dim, scale, scores.data(), &want[off]);
      }
    }
    // Outputs are convex combinations of values of size ~1; the two sides sum up to 701 terms in a
    // different order (online softmax in 4 partial sums): relative error ~ 701 * 2^-24 at worst.
    ExpectNear(want, dout.ToHost(), 0.0f, 5e-5f, "PagedAttention");
  }
}

TEST_F(CudaKernels, PagedAttentionRefusesHeadSizesItCannotHold) {
  const PagedKvLayer layer{};
  const AttentionShape shape{2, 1, kMaxAttentionHeadDim + 1, 0, 1.0f};
  EXPECT_EQ(PagedAttention(nullptr, 1, layer, shape, nullptr, 0, nullptr, nullptr, nullptr, nullptr).code(),
            StatusCode::kUnsupported);
}

TEST_F(CudaKernels, GemmF16MatchesADoubleProduct) {
  auto gemm = Gemm::Create(nullptr);
  ASSERT_TRUE(gemm.ok()) << gemm.status().ToString();
  for (int64_t tokens : {1, 3, 64}) {
    const int64_t rows = 300, cols = 1024;
    const std::vector<uint16_t> w = ToF16(Random(rows * cols, 16)), x = ToF16(Random(tokens * cols, 17));
    DeviceVector<uint16_t> dw(w), dx(x);
    DeviceVector<float> dy(tokens * rows);
    ASSERT_TRUE((*gemm)->F16(dw.get(), rows, cols, dx.get(), tokens, dy.get()).ok());
    const std::vector<float> y = dy.ToHost();
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t r = 0; r < rows; ++r) {
        double exact = 0.0, magnitude = 0.0;
        for (int64_t j = 0; j < cols; ++j) {
          const double p = double{kernels::Fp16ToFp32(w[r * cols + j])} * kernels::Fp16ToFp32(x[t * cols + j]);
          exact += p;
          magnitude += std::fabs(p);
        }
        // F16 products are exact in F32; F32 accumulation of `cols` terms: |error| <= cols * 2^-24 * sum |p|.
        ASSERT_LE(std::fabs(y[t * rows + r] - exact), cols * std::ldexp(1.0, -24) * magnitude)
            << "token " << t << " row " << r;
      }
  }
}

// SampleRows against the host's RowSampler (the contract of kernels/row_sampling.h) on
// random logits: greedy rows (a tie at the maximum, penalties, a suppressed token, top logprobs),
// drawn rows with each cut alone and together, and a drawn row with no cut (not sorted). Tokens
// are equal: a draw could differ only if its target fell within rounding (~1e-7 of the mass) of a
// token's edge, which these fixed inputs do not. Log-probabilities within 1e-5: both sum the
// softmax in double from the same floats; they differ in the order of the sum and in the last bit
// of an exponential.
TEST_F(CudaKernels, SampleRowsGivesTheHostRowSamplersTokensAndLogProbabilities) {
  using sampling::RowSampling;
  const int64_t vocab = 32000;
  std::vector<RowSampling> rows(8);
  rows[1].top_logprobs = 20;
  rows[1].repetition_penalty = 1.3f;
  rows[1].frequency_penalty = 0.4f;
  rows[1].presence_penalty = 0.2f;
  rows[1].counts_size = 3;
  rows[1].suppressed_size = 1;
  rows[2].temperature = 0.7f;
  rows[2].top_k = 40;
  rows[3].temperature = 1.2f;
  rows[3].top_p = 0.8f;
  rows[4].temperature = 0.9f;
  rows[4].min_p = 0.05f;
  rows[5].temperature = 1.1f;
  rows[5].top_k = 200;
  rows[5].top_p = 0.95f;
  rows[5].min_p = 0.02f;
  rows[5].top_logprobs = 7;
  rows[5].counts_begin = 3;
  rows[5].counts_size = 2;
  rows[6].temperature = 1.0f;  // no cut: drawn from every token, unsorted
  rows[7].temperature = 0.6f;
  rows[7].top_p = 0.5f;
  rows[7].suppressed_begin = 1;
  rows[7].suppressed_size = 2;
  std::vector<float> logits = Random(rows.size() * vocab, 19, 3.0f);
  logits[500] = logits[20000] = 40.0f;  // row 0: a tie at the maximum, the lower id wins
  const std::vector<sampling::TokenCount> counts = {{7, 1, 0}, {8, 0, 3}, {9, 1, 1}, {100, 0, 2}, {101, 1, 0}};
  const std::vector<int32_t> suppressed = {12, 13, 14};
  for (int trial = 0; trial < 16; ++trial) {
    for (size_t r = 0; r < rows.size(); ++r) rows[r].uniform = std::fmod(0.061 * (trial * 8 + r) + 0.013, 1.0);
    DeviceVector<float> d_logits(logits);
    DeviceVector<RowSampling> d_rows(rows);
    DeviceVector<sampling::TokenCount> d_counts(counts);
    DeviceVector<int32_t> d_suppressed(suppressed);
    DeviceVector<sampling::RowSample> d_out(rows.size());
    SampleWorkspace ws;
    const SampleRowsInput in{rows.data(), int64_t(rows.size()), d_rows.get(), d_counts.get(), d_suppressed.get(), vocab};
    ASSERT_TRUE(SampleRows(d_logits.get(), in, ws, d_out.get(), nullptr).ok());
    const auto out = d_out.ToHost();
    sampling::RowSampler host(static_cast<int32_t>(vocab));
    for (size_t r = 0; r < rows.size(); ++r) {
      std::vector<float> row(logits.begin() + r * vocab, logits.begin() + (r + 1) * vocab);
      const sampling::RowSample want = host.Sample(rows[r], row, counts, suppressed);
      EXPECT_EQ(out[r].token, want.token) << "trial " << trial << " row " << r;
      EXPECT_NEAR(out[r].logprob, want.logprob, 1e-5) << "trial " << trial << " row " << r;
      for (int j = 0; j < rows[r].top_logprobs; ++j) {
        EXPECT_EQ(out[r].top_ids[j], want.top_ids[j]) << "row " << r << " top " << j;
        EXPECT_NEAR(out[r].top_logprobs[j], want.top_logprobs[j], 1e-5) << "row " << r << " top " << j;
      }
    }
    EXPECT_EQ(out[0].token, 500);
  }
}

// Logits of +0.0 and -0.0 are equal to the contract, so a cut among them keeps the lower ids and
// the top logprobs list them in ascending ids, though the radix sort tells the two zeros apart.
TEST_F(CudaKernels, SampleRowsHoldsBothZerosEqualAtACut) {
  const int64_t vocab = 64;
  std::vector<float> logits(2 * vocab, -5.0f);
  for (int64_t r = 0; r < 2; ++r) {
    logits[r * vocab + 10] = logits[r * vocab + 30] = -0.0f;
    logits[r * vocab + 20] = logits[r * vocab + 40] = 0.0f;
  }
  std::vector<sampling::RowSampling> rows(2);
  rows[0].temperature = 1.0f;
  rows[0].top_k = 3;  // keeps 10, 20 and 30
  rows[0].uniform = 0.9;
  rows[0].top_logprobs = 4;
  rows[1].top_logprobs = 4;  // greedy, sorted for its top logprobs
  DeviceVector<float> d_logits(logits);
  DeviceVector<sampling::RowSampling> d_rows(rows);
  DeviceVector<sampling::RowSample> d_out(rows.size());
  SampleWorkspace ws;
  ASSERT_TRUE(
      SampleRows(d_logits.get(), {rows.data(), 2, d_rows.get(), nullptr, nullptr, vocab}, ws, d_out.get(), nullptr).ok());
  const auto out = d_out.ToHost();
  sampling::RowSampler host(static_cast<int32_t>(vocab));
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<float> row(logits.begin() + r * vocab, logits.begin() + (r + 1) * vocab);
    const sampling::RowSample want = host.Sample(rows[r], row, {}, {});
    EXPECT_EQ(out[r].token, want.token) << "row " << r;
    for (int j = 0; j < 4; ++j) EXPECT_EQ(out[r].top_ids[j], want.top_ids[j]) << "row " << r << " top " << j;
  }
  EXPECT_EQ(out[0].token, 30);  // the draw's 0.9 of three equal tokens
  EXPECT_EQ(out[1].token, 10);
  EXPECT_EQ(out[1].top_ids[3], 40);
}

// Every token suppressed: a drawn row takes token 0, as on the host; a sort too large is refused
// before anything runs.
TEST_F(CudaKernels, SampleRowsTakesTokenZeroWhenEveryTokenIsSuppressedAndRefusesAnOversizedSort) {
  const int64_t vocab = 8;
  std::vector<sampling::RowSampling> rows(1);
  rows[0].temperature = 1.0f;
  rows[0].top_k = 4;
  rows[0].uniform = 0.5;
  rows[0].suppressed_size = 8;
  const std::vector<int32_t> suppressed = {0, 1, 2, 3, 4, 5, 6, 7};
  DeviceVector<float> d_logits(Random(vocab, 20));
  DeviceVector<sampling::RowSampling> d_rows(rows);
  DeviceVector<int32_t> d_suppressed(suppressed);
  DeviceVector<sampling::RowSample> d_out(1);
  SampleWorkspace ws;
  ASSERT_TRUE(SampleRows(d_logits.get(), {rows.data(), 1, d_rows.get(), nullptr, d_suppressed.get(), vocab}, ws, d_out.get(),
                         nullptr)
                  .ok());
  EXPECT_EQ(d_out.ToHost()[0].token, 0);
  std::vector<sampling::RowSampling> many(70000);
  many[0].top_logprobs = 1;
  EXPECT_EQ(SampleRows(nullptr, {many.data(), int64_t(many.size()), nullptr, nullptr, nullptr, 32000}, ws, nullptr, nullptr).code(),
            StatusCode::kInvalidArgument);
}

// Structured output's mask on the device: masked-off logits become -inf, allowed ones are
// untouched, and tokens past the mask's words are masked too.
TEST_F(CudaKernels, ApplyTokenBitmaskLeavesOnlyTheAllowedLogits) {
  const int64_t rows = 3, vocab = 100, words = 3;  // 96 tokens covered by the mask
  std::vector<float> logits(rows * vocab);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = 0.01f * float(i % 97) - 0.3f;
  std::vector<uint32_t> masks(rows * words, 0);
  masks[0 * words + 0] = 0xFFFFFFFFu;           // row 0: tokens 0..31
  masks[1 * words + 1] = (1u << 5) | (1u << 31);  // row 1: tokens 37 and 63
  masks[2 * words + 2] = 0x80000001u;           // row 2: tokens 64 and 95
  DeviceVector<float> d_logits(logits);
  DeviceVector<uint32_t> d_masks(masks);
  ASSERT_TRUE(ApplyTokenBitmask(d_logits.get(), d_masks.get(), rows, vocab, words, nullptr).ok());
  const std::vector<float> out = d_logits.ToHost();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < vocab; ++i) {
      const bool allowed = i < words * 32 && ((masks[r * words + i / 32] >> (i % 32)) & 1u);
      if (allowed) {
        EXPECT_EQ(out[r * vocab + i], logits[r * vocab + i]) << r << " " << i;
      } else {
        EXPECT_EQ(out[r * vocab + i], -std::numeric_limits<float>::infinity()) << r << " " << i;
      }
    }
}

}  // namespace
}  // namespace radixserve::cuda
