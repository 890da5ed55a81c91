// RowSampler: the RowSampling contract (row_sampling.h) on the host, step by step as a device
// sampler takes it (a full sort of the row, then prefix cuts): what a backend that samples where
// the logits are must return, and the reference its tests compare with. Slower than Sampler,
// which it equals; owns scratch reused across calls. Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/row_sampling.h"
#include "core/sampling/sampler.h"
#include "core/sampling/sampling_params.h"

namespace radixserve::sampling {

// The row for a request's next token: `params` (normalised by SamplingParams::Validate; its
// logprobs field gives the top logprobs), the request's token counts appended to *counts when it
// has penalties, `suppress` appended to *suppressed, and one uniform number drawn from the
// request's generator when the row is not greedy (as Sampler::Sample draws it).
RowSampling MakeRowSampling(const SamplingParams& params, SamplerState& state, std::span<const int32_t> suppress,
                            std::vector<TokenCount>* counts, std::vector<int32_t>* suppressed);

class RowSampler {
 public:
  explicit RowSampler(int32_t vocab_size);

  // Samples one row. `logits` (vocab_size floats) is overwritten with the penalised logits;
  // `counts` and `suppressed` are the step's lists that the row's ranges index.
  RowSample Sample(const RowSampling& row, std::span<float> logits, std::span<const TokenCount> counts,
                   std::span<const int32_t> suppressed);

 private:
  int32_t vocab_size_;
  std::vector<int32_t> order_;  // token ids by (logit descending, id ascending)
};

}  // namespace radixserve::sampling
