// RowSampler, the device samplers' contract on the host (row_sampling.h), makes Sampler's choices:
// for the same parameters, request state and logits, the same token, log-probability and top
// log-probabilities, bit for bit (both walk the same floats in the same order), over greedy,
// temperature, top-k, top-p, min-p, penalties, suppressed tokens and tied logits.
#include <gtest/gtest.h>

#include <random>

#include "core/sampling/row_sampler.h"
#include "core/sampling/sampler.h"
#include "tests/sampling/validated_params.h"

namespace radixserve::sampling {
namespace {

// Logits of distinct values spread over `span` (ties only where `ties` makes pairs equal).
std::vector<float> Logits(int vocab, float span, bool ties, std::mt19937& rng) {
  std::vector<float> l(vocab);
  std::uniform_real_distribution<float> u(-span / 2, span / 2);
  for (float& v : l) v = u(rng);
  if (ties)
    for (int i = 1; i < vocab; i += 3) l[i] = l[i - 1];
  return l;
}

// Runs `steps` tokens of one request through both samplers from the same seed and prompt,
// accepting each chosen token, and expects the same result at every step.
void ExpectSameChoices(const SamplingParams& p, int vocab, float span, bool ties, bool suppress, int steps,
                       uint32_t seed) {
  std::mt19937 rng(seed);
  const std::vector<int32_t> prompt = {3, 5, 5, 9};
  SamplerState host_state(seed, prompt), row_state(seed, prompt);
  Sampler sampler(vocab);
  RowSampler row_sampler(vocab);
  const std::vector<int32_t> eog = {1, 7};
  std::vector<TokenCount> counts;
  std::vector<int32_t> suppressed;
  for (int step = 0; step < steps; ++step) {
    const std::vector<float> logits = Logits(vocab, span, ties, rng);
    std::vector<float> a = logits, b = logits;
    const std::span<const int32_t> sup = suppress ? std::span<const int32_t>(eog) : std::span<const int32_t>();
    const SampleResult want = sampler.Sample(p, a, host_state, sup);
    counts.clear();
    suppressed.clear();
    const RowSampling row = MakeRowSampling(p, row_state, sup, &counts, &suppressed);
    const RowSample got = row_sampler.Sample(row, b, counts, suppressed);
    const std::string where = "T " + std::to_string(p.temperature) + " top_k " + std::to_string(p.top_k) +
                              " top_p " + std::to_string(p.top_p) + " min_p " + std::to_string(p.min_p) +
                              " step " + std::to_string(step);
    ASSERT_EQ(got.token, want.token) << where;
    if (p.logprobs >= 0) EXPECT_EQ(got.logprob, want.logprob) << where;
    for (int k = 0; k < want.num_top; ++k) {
      EXPECT_EQ(got.top_ids[k], want.top[k].token) << where << " top " << k;
      EXPECT_EQ(got.top_logprobs[k], want.top[k].logprob) << where << " top " << k;
    }
    host_state.Accept(want.token);
    row_state.Accept(got.token);
  }
}

TEST(RowSampler, EqualsSamplerOverTheParameterGrid) {
  uint32_t seed = 1;
  for (float t : {0.0f, 0.5f, 1.0f, 1.7f})
    for (int32_t k : {-1, 1, 5, 64})
      for (float top_p : {1.0f, 0.9f, 0.3f})
        for (float min_p : {0.0f, 0.05f})
          ExpectSameChoices(Params(t, k, top_p, min_p, 1.0f, 0.0f, 0.0f, 3), 300, 8.0f, false, false, 12, seed++);
}

TEST(RowSampler, EqualsSamplerWithPenaltiesSuppressionAndTies) {
  uint32_t seed = 100;
  for (bool ties : {false, true}) {
    ExpectSameChoices(Params(0.0f, -1, 1.0f, 0.0f, 1.3f, 0.0f, 0.0f, 5), 200, 6.0f, ties, true, 30, seed++);
    ExpectSameChoices(Params(0.8f, 40, 0.95f, 0.0f, 1.2f, 0.5f, 0.3f, 2), 200, 6.0f, ties, true, 30, seed++);
    ExpectSameChoices(Params(1.0f, -1, 1.0f, 0.02f, 0.8f, -0.4f, 0.6f, 20), 200, 6.0f, ties, false, 30, seed++);
  }
}

TEST(RowSampler, EverySuppressedTokenGivesTokenZeroAndStillTakesTheDraw) {
  const SamplingParams p = Params(1.0f, -1, 1.0f, 0.0f);
  SamplerState a(4, {}), b(4, {});
  std::vector<int32_t> all = {0, 1, 2, 3};
  std::vector<float> la = {1, 2, 3, 4}, lb = la;
  Sampler sampler(4);
  RowSampler row_sampler(4);
  std::vector<TokenCount> counts;
  std::vector<int32_t> suppressed;
  EXPECT_EQ(sampler.Sample(p, la, a, all).token, 0);
  const RowSampling row = MakeRowSampling(p, b, all, &counts, &suppressed);
  EXPECT_EQ(row_sampler.Sample(row, lb, counts, suppressed).token, 0);
  EXPECT_EQ(a.rng().Next(), b.rng().Next());  // both took one number
}

TEST(RowSampler, MakeRowSamplingCarriesCountsOnlyWithPenaltiesAndDrawsOnlyWhenNotGreedy) {
  const std::vector<int32_t> prompt = {2, 2, 6};
  SamplerState st(11, prompt), fresh(11, prompt);
  std::vector<TokenCount> counts;
  std::vector<int32_t> suppressed;
  const RowSampling greedy = MakeRowSampling(Params(0.0f, -1, 1.0f, 0.0f), st, {}, &counts, &suppressed);
  EXPECT_EQ(greedy.temperature, 0.0f);
  EXPECT_TRUE(IsPlainArgmax(greedy));
  EXPECT_TRUE(counts.empty());
  const std::vector<int32_t> eog = {9};
  const RowSampling penalised = MakeRowSampling(Params(0.7f, -1, 1.0f, 0.0f, 1.1f), st, eog, &counts, &suppressed);
  EXPECT_FALSE(IsPlainArgmax(penalised));
  EXPECT_EQ(penalised.counts_begin, 0);
  EXPECT_EQ(penalised.counts_size, 2);  // tokens 2 and 6
  EXPECT_EQ(penalised.suppressed_size, 1);
  EXPECT_EQ(suppressed[penalised.suppressed_begin], 9);
  EXPECT_EQ(penalised.uniform, fresh.rng().Uniform());  // the first number: the greedy row took none
}

}  // namespace
}  // namespace radixserve::sampling
