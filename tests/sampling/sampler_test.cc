// Sampler: greedy, seeds, truncation (top-k/top-p/min-p), penalties, logprobs.
// Statistical checks use fixed seeds, so they are deterministic, and bounds
// several standard deviations wide, so they stay valid for any seed.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "core/sampling/sampler.h"
#include "tests/sampling/validated_params.h"
#include "tests/model/alloc_counter.h"

namespace radixserve::sampling {
namespace {

std::vector<float> LogitsFromProbs(const std::vector<double>& probs) {
  std::vector<float> l;
  for (double p : probs) l.push_back(static_cast<float>(std::log(p)));
  return l;
}

std::map<int32_t, int> Draw(const SamplingParams& p, const std::vector<float>& logits, int n, uint64_t seed) {
  Sampler s(static_cast<int32_t>(logits.size()));
  SamplerState st(seed, {});
  std::map<int32_t, int> counts;
  std::vector<float> work;
  for (int i = 0; i < n; ++i) {
    work = logits;
    ++counts[s.Sample(p, work, st).token];
  }
  return counts;
}

TEST(Sampler, GreedyIsArgmaxWithLowestIdOnTies) {
  Sampler s(6);
  SamplerState st(1, {});
  std::vector<float> l = {0.1f, 3.0f, -2.0f, 3.0f, 1.0f, 0.0f};
  EXPECT_EQ(s.Sample(Params(0.0f), l, st).token, 1);
  std::vector<float> l2 = {0.1f, 3.0f, -2.0f, 3.5f, 1.0f, 0.0f};
  EXPECT_EQ(s.Sample(Params(0.7f, 1), l2, st).token, 3);  // top_k = 1 is greedy too
}

TEST(Sampler, SameSeedSameSequenceDifferentSeedDifferent) {
  std::vector<float> logits(50);
  for (int i = 0; i < 50; ++i) logits[i] = std::sin(i * 0.7f);
  auto run = [&](uint64_t seed) {
    Sampler s(50);
    SamplerState st(seed, {});
    std::vector<int32_t> out;
    for (int i = 0; i < 64; ++i) {
      std::vector<float> w = logits;
      int32_t t = s.Sample(Params(1.0f), w, st).token;
      st.Accept(t);
      out.push_back(t);
    }
    return out;
  };
  EXPECT_EQ(run(42), run(42));
  EXPECT_NE(run(42), run(43));
}

TEST(Sampler, TemperatureFollowsSoftmax) {
  std::vector<double> probs = {0.4, 0.3, 0.2, 0.1};
  const int n = 20000;
  auto counts = Draw(Params(1.0f), LogitsFromProbs(probs), n, 7);
  for (int i = 0; i < 4; ++i) {
    const double sd = std::sqrt(probs[i] * (1 - probs[i]) / n);
    EXPECT_NEAR(counts[i] / double(n), probs[i], 5 * sd) << "token " << i;
  }
  // Temperature 0.5 squares the odds: p ~ probs^2.
  auto sharp = Draw(Params(0.5f), LogitsFromProbs(probs), n, 8);
  const double z = 0.16 + 0.09 + 0.04 + 0.01;
  EXPECT_NEAR(sharp[0] / double(n), 0.16 / z, 5 * std::sqrt(0.53 * 0.47 / n));
}

TEST(Sampler, TopKRestrictsSupport) {
  std::vector<double> probs = {0.05, 0.3, 0.1, 0.25, 0.2, 0.1};
  auto counts = Draw(Params(1.0f, 3), LogitsFromProbs(probs), 5000, 9);
  std::set<int32_t> support;
  for (auto& [t, c] : counts) support.insert(t);
  EXPECT_EQ(support, (std::set<int32_t>{1, 3, 4}));
  // Renormalised over the kept tokens: 0.3 / 0.75 = 0.4.
  EXPECT_NEAR(counts[1] / 5000.0, 0.4, 5 * std::sqrt(0.4 * 0.6 / 5000));
}

TEST(Sampler, TopPKeepsSmallestPrefix) {
  // Sorted: 0.5, 0.3, 0.15, 0.05; mass before each: 0, 0.5, 0.8, 0.95 -> top_p 0.7 keeps the first two.
  std::vector<double> probs = {0.15, 0.5, 0.05, 0.3};
  auto counts = Draw(Params(1.0f, -1, 0.7f), LogitsFromProbs(probs), 5000, 10);
  std::set<int32_t> support;
  for (auto& [t, c] : counts) support.insert(t);
  EXPECT_EQ(support, (std::set<int32_t>{1, 3}));
  EXPECT_NEAR(counts[1] / 5000.0, 0.625, 5 * std::sqrt(0.625 * 0.375 / 5000));
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
  // Relative to the best: 1, 0.6, 0.3, 0.1 -> min_p 0.25 keeps three.
  std::vector<double> probs = {0.5, 0.3, 0.15, 0.05};
  auto counts = Draw(Params(1.0f, -1, 1.0f, 0.25f), LogitsFromProbs(probs), 5000, 11);
  std::set<int32_t> support;
  for (auto& [t, c] : counts) support.insert(t);
  EXPECT_EQ(support, (std::set<int32_t>{0, 1, 2}));
}

TEST(Sampler, RepetitionPenaltyCoversPromptAndGenerated) {
  Sampler s(8);
  std::vector<int32_t> prompt = {3, 4};
  SamplerState st(1, prompt);
  st.Accept(6);
  SamplingParams p = Params(0.0f);
  p.repetition_penalty = 1.5f;
  std::vector<float> l = {0.f, 1.f, 1.f, 2.f, -1.f, 1.f, 3.f, 0.5f};
  s.Sample(p, l, st);
  EXPECT_FLOAT_EQ(l[3], 2.0f / 1.5f);
  EXPECT_FLOAT_EQ(l[4], -1.5f);
  EXPECT_FLOAT_EQ(l[6], 2.0f);
  EXPECT_FLOAT_EQ(l[5], 1.0f);  // unseen: unchanged
}

TEST(Sampler, FrequencyAndPresencePenalizeGeneratedOnly) {
  Sampler s(8);
  std::vector<int32_t> prompt = {2};
  SamplerState st(1, prompt);
  st.Accept(5);
  st.Accept(5);
  st.Accept(7);
  EXPECT_EQ(st.generated_count(5), 2);
  EXPECT_TRUE(st.seen(2));
  SamplingParams p = Params(0.0f);
  p.frequency_penalty = 0.5f;
  p.presence_penalty = 0.25f;
  std::vector<float> l(8, 1.0f);
  s.Sample(p, l, st);
  EXPECT_FLOAT_EQ(l[5], 1.0f - 2 * 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(l[7], 1.0f - 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(l[2], 1.0f);  // prompt tokens are not penalised by frequency/presence
}

TEST(Sampler, PenaltyStateGrowsPastInitialCapacity) {
  SamplerState st(1, {});
  for (int32_t t = 0; t < 1000; ++t)
    for (int k = 0; k <= t % 3; ++k) st.Accept(t * 7);
  for (int32_t t = 0; t < 1000; ++t) EXPECT_EQ(st.generated_count(t * 7), t % 3 + 1);
  EXPECT_EQ(st.generated_count(3), 0);
}

TEST(Sampler, LogprobsAreLogSoftmaxOfProcessedLogits) {
  Sampler s(5);
  SamplerState st(3, {});
  SamplingParams p = Params(0.8f);
  p.logprobs = 3;
  std::vector<float> l = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f};
  const std::vector<float> orig = l;
  SampleResult r = s.Sample(p, l, st);
  double lse = 0;
  for (float v : orig) lse += std::exp(v);
  lse = std::log(lse);
  // The sampler's float log-softmax against a double one over 5 logits of magnitude <= 2: a few
  // float ulps of the log-sum-exp (about 2.4e-7 each at 2); 1e-5 leaves a wide margin.
  EXPECT_NEAR(r.logprob, orig[r.token] - lse, 1e-5);
  EXPECT_LE(r.logprob, 0.0f);
  ASSERT_EQ(r.num_top, 3);
  EXPECT_EQ(r.top[0].token, 1);
  EXPECT_EQ(r.top[1].token, 4);
  EXPECT_EQ(r.top[2].token, 0);
  double mass = 0;
  for (int i = 0; i < r.num_top; ++i) {
    EXPECT_NEAR(r.top[i].logprob, orig[r.top[i].token] - lse, 1e-5);
    if (i > 0) EXPECT_GE(r.top[i - 1].logprob, r.top[i].logprob);
    mass += std::exp(r.top[i].logprob);
  }
  EXPECT_LE(mass, 1.0 + 1e-6);  // three of five probabilities: below 1 but for float rounding (~1e-7)
}

TEST(Sampler, SuppressedTokensAreNeverChosen) {
  Sampler s(4);
  SamplerState st(5, {});
  std::vector<int32_t> eos = {2};
  for (int i = 0; i < 200; ++i) {
    std::vector<float> l = {0.0f, 0.0f, 10.0f, 0.0f};
    EXPECT_NE(s.Sample(Params(1.0f), l, st, eos).token, 2);
  }
  std::vector<float> l = {0.0f, 0.0f, 10.0f, 0.0f};
  EXPECT_NE(s.Sample(Params(0.0f), l, st, eos).token, 2);
}

TEST(Sampler, WarmSamplingDoesNotAllocate) {
  const int vocab = 1000;
  Sampler s(vocab);
  std::vector<int32_t> prompt = {1, 2, 3};
  SamplerState st(9, prompt);
  SamplingParams p = Params(0.9f, 50, 0.9f, 0.01f);
  p.repetition_penalty = 1.1f;
  p.frequency_penalty = 0.2f;
  p.logprobs = 5;
  std::vector<float> logits(vocab);
  auto fill = [&] {
    for (int i = 0; i < vocab; ++i) logits[i] = std::sin(i * 0.37f) * 3;
  };
  for (int i = 0; i < 40; ++i) {  // warm-up: the penalty table reaches its size
    fill();
    st.Accept(s.Sample(p, logits, st).token);
  }
  const long before = testing_util::Allocations();
  for (int i = 0; i < 100; ++i) {
    fill();
    SampleResult r = s.Sample(p, logits, st);
    if (st.seen(r.token)) st.Accept(r.token);  // only tokens already in the table
  }
  EXPECT_EQ(testing_util::Allocations(), before);
}

}  // namespace
}  // namespace radixserve::sampling
