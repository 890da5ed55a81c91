// The mixture-of-experts FFN (core/model/moe.h) against a dense reference on random inputs: every
// expert computed in double, then masked to each token's top-k and weighted. Routing is forced by
// crafted router weights: tokens that pick disjoint experts, and a batch where all pick the same
// two (a group large enough for the GEMM path). The experts no token picks are filled with NaN,
// so any read of them would show in the output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/model/moe.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/thread_pool.h"

namespace radixserve::model {
namespace {

using kernels::WeightType;
using kernels::WeightView;

constexpr int kE = 8, kK = 2, kDim = 64, kFe = 32;

struct Experts {
  std::vector<float> router, gate, up, down;  // [E][dim], [E*fe][dim], [E*fe][dim], [E*dim][fe]
  MoeWeights View() const {
    return {WeightView{WeightType::kF32, router.data(), kE, kDim}, WeightView{WeightType::kF32, gate.data(), kE * kFe, kDim},
            WeightView{WeightType::kF32, up.data(), kE * kFe, kDim}, WeightView{WeightType::kF32, down.data(), kE * kDim, kFe},
            kE, kK, kFe};
  }
};

Experts RandomExperts(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  Experts x;
  x.router.resize(kE * kDim);
  x.gate.resize(kE * kFe * kDim);
  x.up.resize(kE * kFe * kDim);
  x.down.resize(kE * kDim * kFe);
  for (float& v : x.router) v = 0.01f * n(rng);
  for (float& v : x.gate) v = n(rng) / std::sqrt(float{kDim});
  for (float& v : x.up) v = n(rng) / std::sqrt(float{kDim});
  for (float& v : x.down) v = n(rng) / std::sqrt(float{kFe});
  return x;
}

// NaN in every weight of expert e (its gate/up/down slabs).
void Poison(Experts& x, int e) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::fill(x.gate.begin() + e * kFe * kDim, x.gate.begin() + (e + 1) * kFe * kDim, nan);
  std::fill(x.up.begin() + e * kFe * kDim, x.up.begin() + (e + 1) * kFe * kDim, nan);
  std::fill(x.down.begin() + e * kDim * kFe, x.down.begin() + (e + 1) * kDim * kFe, nan);
}

// Dense reference: all experts' outputs, then each token's top-k of softmax(router x), weights renormalised.
std::vector<double> Dense(const Experts& w, const std::vector<float>& x, int64_t T, std::vector<int>* picked) {
  std::vector<double> out(T * kDim, 0.0);
  for (int64_t t = 0; t < T; ++t) {
    const float* xt = x.data() + t * kDim;
    std::vector<double> p(kE), y(kE * kDim);
    double mx = -1e300, sum = 0;
    for (int e = 0; e < kE; ++e) {
      double l = 0;
      for (int j = 0; j < kDim; ++j) l += double{w.router[e * kDim + j]} * xt[j];
      p[e] = l;
      mx = std::max(mx, l);
      std::vector<double> h(kFe);
      for (int r = 0; r < kFe; ++r) {
        double g = 0, u = 0;
        for (int j = 0; j < kDim; ++j) {
          g += double{w.gate[(e * kFe + r) * kDim + j]} * xt[j];
          u += double{w.up[(e * kFe + r) * kDim + j]} * xt[j];
        }
        h[r] = g / (1.0 + std::exp(-g)) * u;
      }
      for (int r = 0; r < kDim; ++r) {
        double d = 0;
        for (int j = 0; j < kFe; ++j) d += double{w.down[(e * kDim + r) * kFe + j]} * h[j];
        y[e * kDim + r] = d;
      }
    }
    for (double& v : p) sum += (v = std::exp(v - mx));
    for (double& v : p) v /= sum;
    std::vector<int> idx(kE);
    for (int e = 0; e < kE; ++e) idx[e] = e;
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return p[a] > p[b]; });
    double chosen = 0;
    for (int j = 0; j < kK; ++j) chosen += p[idx[j]];
    for (int e = 0; e < kE; ++e) {  // the mask: only the top-k contribute
      const bool top = std::find(idx.begin(), idx.begin() + kK, e) != idx.begin() + kK;
      if (!top) continue;
      if (picked) picked->push_back(e);
      for (int r = 0; r < kDim; ++r) out[t * kDim + r] += p[e] / chosen * y[e * kDim + r];
    }
  }
  return out;
}

double MaxRelErr(const std::vector<float>& got, const std::vector<double>& want) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(got[i])) return std::numeric_limits<double>::infinity();
    err = std::max(err, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return err / scale;
}

void RunMoe(const Experts& w, const std::vector<float>& x, int64_t T, std::vector<float>* out, int threads = 2) {
  kernels::ThreadPool pool(threads);
  kernels::MatMulScratch mm(threads);
  MoeScratch s;
  out->assign(T * kDim, 0.0f);
  MoeFfn(w.View(), x.data(), T, kDim, out->data(), s, mm, pool);
}

std::vector<float> RandomInputs(int64_t T, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, scale);
  std::vector<float> x(T * kDim);
  for (float& v : x) v = n(rng);
  return x;
}

TEST(MoeFfn, TokensPickingDisjointExpertsMatchTheDenseReference) {
  // Token t (t < 3) picks experts 2t and 2t + 1: router rows 2t and 2t+1 read input column t, where
  // token t alone carries a large value. Experts 6 and 7 are never picked and hold NaN.
  Experts w = RandomExperts(1);
  for (int e = 0; e < 6; ++e) w.router[e * kDim + e / 2] = e % 2 ? 5.0f : 6.0f;
  const int64_t T = 3;
  std::vector<float> x = RandomInputs(T, 0.1f, 2);
  for (int t = 0; t < T; ++t) x[t * kDim + t] = 3.0f;
  std::vector<int> picked;
  const std::vector<double> want = Dense(w, x, T, &picked);
  EXPECT_EQ(picked, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  Poison(w, 6);
  Poison(w, 7);
  std::vector<float> got;
  RunMoe(w, x, T, &got);
  const double err = MaxRelErr(got, want);
  std::printf("disjoint experts: max|d| / max|ref| = %.3g\n", err);
  EXPECT_LE(err, 1e-5);
}

TEST(MoeFfn, AllTokensPickingTheSameExpertsMatchTheDenseReference) {
  // Every token picks experts 5 then 3 (column 0 carries 1 in every token); the other six hold NaN.
  // 40 tokens in one group: above the streaming batch, so the GEMM path computes the experts.
  Experts w = RandomExperts(3);
  w.router[5 * kDim] = 10.0f;
  w.router[3 * kDim] = 9.0f;
  const int64_t T = 40;
  ASSERT_GT(T, kernels::kMatMulStreamMaxBatch);
  std::vector<float> x = RandomInputs(T, 0.1f, 4);
  for (int t = 0; t < T; ++t) x[t * kDim] = 1.0f;
  std::vector<int> picked;
  const std::vector<double> want = Dense(w, x, T, &picked);
  for (size_t i = 0; i < picked.size(); ++i) EXPECT_EQ(picked[i], i % 2 ? 5 : 3);  // ascending within a token
  for (int e : {0, 1, 2, 4, 6, 7}) Poison(w, e);
  std::vector<float> got;
  RunMoe(w, x, T, &got);
  const double err = MaxRelErr(got, want);
  std::printf("one shared pair of experts, 40 tokens: max|d| / max|ref| = %.3g\n", err);
  EXPECT_LE(err, 1e-5);
  // The same rows one token at a time (the decode path) give the same outputs.
  for (int64_t t = 0; t < T; t += 13) {
    std::vector<float> one(x.begin() + t * kDim, x.begin() + (t + 1) * kDim), got1;
    RunMoe(w, one, 1, &got1, 1);
    for (int r = 0; r < kDim; ++r) EXPECT_NEAR(got1[r], got[t * kDim + r], 1e-5 * (1 + std::abs(got[t * kDim + r])));
  }
}

TEST(MoeFfn, RandomRoutingMatchesTheDenseReference) {
  Experts w = RandomExperts(5);
  for (float& v : w.router) v *= 100.0f;  // router std ~1: routing spread over all experts
  for (int64_t T : {1, 5, 33}) {
    const std::vector<float> x = RandomInputs(T, 1.0f, 6 + static_cast<uint32_t>(T));
    const std::vector<double> want = Dense(w, x, T, nullptr);
    std::vector<float> got;
    RunMoe(w, x, T, &got);
    EXPECT_LE(MaxRelErr(got, want), 1e-5) << "T = " << T;
  }
}

TEST(MoeRoute, PicksTheLargestAndRenormalisesTheirWeights) {
  const float logits[kE] = {0.0f, 2.0f, -1.0f, 1.0f, 0.5f, 0.0f, -3.0f, 0.2f};
  int32_t experts[kK];
  float weights[kK];
  MoeRoute(logits, 1, kE, kK, experts, weights);
  EXPECT_EQ(experts[0], 1);
  EXPECT_EQ(experts[1], 3);
  EXPECT_NEAR(weights[0], std::exp(2.0) / (std::exp(2.0) + std::exp(1.0)), 1e-6);
  EXPECT_NEAR(weights[0] + weights[1], 1.0f, 1e-6);
}

TEST(MoeBytes, CountsTheActiveExpertsSlabs) {
  const Experts w = RandomExperts(7);
  const MoeBytes b = MoeWeightBytes(w.View());
  EXPECT_EQ(b.all, int64_t{kE} * (2 * kFe * kDim + kDim * kFe) * 4);
  EXPECT_EQ(b.active, int64_t{kK} * (2 * kFe * kDim + kDim * kFe) * 4);
}

}  // namespace
}  // namespace radixserve::model
