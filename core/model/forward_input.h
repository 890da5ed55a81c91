// The inputs of one forward step, common to every model backend (LlamaModel on the CPU,
// CudaModel on a GPU), and the checks every backend makes of them before it runs.
// Plain data and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "core/model/llama_config.h"
#include "kernels/row_sampling.h"
#include "core/util/status.h"

namespace radixserve::model {

// One sequence of a batch: its cached length, its new tokens and the KV slots of ALL its
// positions (slots [0, cached_len) are read, [cached_len, cached_len + n_new) written then read).
struct SequenceInput {
  int32_t cached_len = 0;
  std::span<const int32_t> new_tokens;
  std::span<const int32_t> slots;  // size cached_len + new_tokens.size()
};

struct DeviceSampling;

struct ForwardOptions {
  // false: logits are [num_seqs][vocab] for each sequence's last token.
  // true: logits are [total new tokens][vocab], sequences in order.
  bool all_logits = false;
  // Tensor parallelism: the step's id, the same on every rank (the forward batch's id).
  uint64_t step = 0;
  // Pipeline parallelism: the residual stream entering this stage's first layer, [T][dim] for the
  // T new tokens in order (required unless this stage is the first), and where it leaves this
  // stage's last layer (required unless this stage is the last; `logits` is then empty).
  std::span<const float> hidden_in;
  std::span<float> hidden_out;
  // Sampling where the logits are, for backends whose samples_on_device() is true: when set,
  // `logits` is empty and output row r is sampled as sampling->rows[r] says (row_sampling.h),
  // its result in sampling->out[r], so that a step returns a few numbers a row, not vocab_size.
  const DeviceSampling* sampling = nullptr;
};

struct DeviceSampling {
  std::span<const sampling::RowSampling> rows;  // one per output row
  std::span<const sampling::TokenCount> counts;  // the rows' penalty counts
  std::span<const int32_t> suppressed;           // the rows' suppressed token ids
  std::span<sampling::RowSample> out;            // one per output row
  // Structured output: [rows][mask_words] bitmasks (bit i of word i / 32: token i allowed),
  // applied to the logits before sampling; empty when no row is constrained.
  std::span<const uint32_t> token_masks;
  int64_t mask_words = 0;
};

// Checks each sequence against the model and a KV cache of num_slots slots (new tokens present,
// slot lists of the right length and in range, token ids in the vocabulary, lengths within the
// context) and sets *total_tokens to the batch's new tokens. Does not allocate unless it fails.
Status ValidateSequences(const LlamaConfig& config, std::span<const SequenceInput> seqs, int64_t num_slots,
                         int64_t* total_tokens);

// Checks a step that samples on the device: no logits, a row and an output per output row, each
// row's ranges inside the step's lists and its parameters in range (a backend reads them blind).
Status ValidateDeviceSampling(const DeviceSampling& ds, int64_t out_rows, size_t logits_size);

}  // namespace radixserve::model
