// Sampler: picks the next token from a row of logits under SamplingParams.
//
// Order of processing (SGLang's): penalties -> (greedy: argmax) ->
// temperature -> softmax -> top-k, top-p, min-p (all judged on the full
// temperature-scaled distribution) -> renormalise -> draw with the request's RNG.
// - repetition_penalty (llama/HF style) applies to every token seen in the
//   prompt or generated so far: logit > 0 ? logit / p : logit * p.
// - frequency_penalty / presence_penalty (OpenAI style) apply to generated
//   tokens only: logit -= frequency * count + presence * (count > 0).
// - Logprobs are the log-softmax of the logits AFTER penalties and BEFORE
//   temperature and truncation (the model's distribution as the request saw it).
// - The draw walks the kept tokens in id order, and a sampled request takes one uniform
//   number per token even when every token is suppressed, so that a device sampler given the
//   same number (row_sampling.h) makes the same choice.
//
// SamplerState is the per-request part (RNG, token counts); Sampler owns
// vocab-sized scratch reused across calls, so sampling does not allocate per
// token once warm. Thread-safety: a Sampler or a SamplerState is used by one
// thread at a time; give each worker thread its own Sampler.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "core/sampling/rng.h"
#include "kernels/row_sampling.h"
#include "core/sampling/sampling_params.h"

namespace radixserve::sampling {

// Per-request state: the RNG and how often each token was seen.
class SamplerState {
 public:
  // `seed`: params.seed when the request has one, else something unique such as the request id.
  SamplerState(uint64_t seed, std::span<const int32_t> prompt);

  // Records a generated token (for penalties).
  void Accept(int32_t token);
  // Resets to a fresh request.
  void Reset(uint64_t seed, std::span<const int32_t> prompt);

  int32_t generated_count(int32_t token) const;
  bool seen(int32_t token) const;  // in the prompt or generated
  // Appends every seen token with its counts (for a sampler elsewhere, as RowSampling ranges).
  void AppendCounts(std::vector<TokenCount>* out) const;
  Rng& rng() { return rng_; }

 private:
  friend class Sampler;
  struct Entry {
    int32_t token;
    bool in_prompt;
    int32_t generated;
  };
  Entry& Upsert(int32_t token);
  const Entry* Find(int32_t token) const;
  void Rehash(size_t capacity);

  Rng rng_;
  std::vector<Entry> entries_;  // dense, for iteration
  std::vector<int32_t> index_;  // open addressing: position in entries_ or -1
};

struct TokenLogprob {
  int32_t token = -1;
  float logprob = 0.0f;
};

struct SampleResult {
  int32_t token = -1;
  float logprob = 0.0f;  // of the chosen token (only when params.logprobs >= 0)
  int32_t num_top = 0;   // entries of top used (params.logprobs clamped to kMaxTopLogprobs)
  std::array<TokenLogprob, kMaxTopLogprobs> top{};
};

class Sampler {
 public:
  explicit Sampler(int32_t vocab_size);

  // Samples one token. `logits` (vocab_size floats) is overwritten with the processed values.
  // `suppress` lists tokens that must not be chosen (e.g. EOS before min_new_tokens).
  // params must have been normalised by SamplingParams::Validate().
  SampleResult Sample(const SamplingParams& params, std::span<float> logits, SamplerState& state,
                      std::span<const int32_t> suppress = {});

  int32_t vocab_size() const { return vocab_size_; }

 private:
  void ApplyPenalties(const SamplingParams& p, std::span<float> logits, const SamplerState& state) const;
  void FillLogprobs(const SamplingParams& p, std::span<const float> logits, SampleResult* r);

  int32_t vocab_size_;
  std::vector<int32_t> candidates_;
  std::vector<float> probs_;
};

}  // namespace radixserve::sampling
