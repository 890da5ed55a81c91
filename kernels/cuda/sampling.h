// Sampling on a CUDA device: each row of a step's logits sampled as its RowSampling says
// (kernels/row_sampling.h: penalties, suppressed tokens, greedy, temperature, top-k, top-p,
// min-p, top logprobs), so that a step returns a RowSample per row instead of vocab floats and the
// tokens are those the host sampler would choose. Rows that need their order (a cut to draw from,
// or top logprobs) are sorted with CUB's segmented radix sort, which is stable, so equal logits
// keep ascending ids as the contract's tie rule asks; the other rows only reduce.
// Pointers are device memory unless named host; thread-safety: as the stream's.
#pragma once

#include <cstdint>

#include "kernels/row_sampling.h"
#include "kernels/cuda/device.h"

namespace radixserve::cuda {

// Whether a row needs its logits in sorted order.
RADIXSERVE_HOST_DEVICE inline bool SortsRow(const sampling::RowSampling& r, int64_t vocab) {
  const bool cuts = r.top_k < vocab || r.top_p < 1.0f || r.min_p > 0.0f;
  return r.top_logprobs > 0 || (r.temperature != 0.0f && cuts);
}

struct SampleRowsInput {
  const sampling::RowSampling* host_rows = nullptr;  // what the launches are chosen from
  int64_t num_rows = 0;
  const sampling::RowSampling* rows = nullptr;       // the same rows on the device
  const sampling::TokenCount* counts = nullptr;      // the rows' ranges index these
  const int32_t* suppressed = nullptr;
  int64_t vocab = 0;
};

// Scratch for SampleRows that only grows, so that a warm step allocates nothing.
struct SampleWorkspace {
  DeviceBuffer ids_in, sorted_logits, sorted_ids, offsets, sort_temp;
};

// Samples num_rows rows of `logits` ([rows][vocab], overwritten with the penalised
// logits) into out[r]. A sorted step needs rows x vocab below 2^31.
Status SampleRows(float* logits, const SampleRowsInput& in, SampleWorkspace& ws, sampling::RowSample* out,
                  Stream stream);

// Structured output: sets logits[r][i] to -inf wherever bit i of masks[r] ([rows][mask_words]
// uint32 words, bit i of word i / 32 is token i; the layout grammar::GrammarMatcher fills) is
// clear, and every logit past mask_words * 32. Runs before SampleRows, so penalties, the cuts and
// the log-probabilities all see the constrained distribution.
Status ApplyTokenBitmask(float* logits, const uint32_t* masks, int64_t rows, int64_t vocab, int64_t mask_words,
                         Stream stream);

}  // namespace radixserve::cuda
