// The inputs of one forward step, common to every model backend (LlamaModel on the CPU,
// CudaModel on a GPU), and the checks every backend makes of them before it runs.
// Plain data and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>

#include "core/model/llama_config.h"
#include "core/util/status.h"

namespace radixserve::model {

// One sequence of a batch: its cached length, its new tokens and the KV slots of ALL its
// positions (slots [0, cached_len) are read, [cached_len, cached_len + n_new) written then read).
struct SequenceInput {
  int32_t cached_len = 0;
  std::span<const int32_t> new_tokens;
  std::span<const int32_t> slots;  // size cached_len + new_tokens.size()
};

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
  // Greedy choice on the device, for backends whose samples_greedy() is true: when greedy_ids is
  // not empty, `logits` is empty and each output row's lowest-id argmax goes to greedy_ids and its
  // log-probability (log-softmax of the raw logits) to greedy_logprobs, one per output row, so
  // that the step returns two numbers a row instead of vocab_size.
  std::span<int32_t> greedy_ids;
  std::span<float> greedy_logprobs;
};

// Checks each sequence against the model and a KV cache of num_slots slots (new tokens present,
// slot lists of the right length and in range, token ids in the vocabulary, lengths within the
// context) and sets *total_tokens to the batch's new tokens. Does not allocate unless it fails.
Status ValidateSequences(const LlamaConfig& config, std::span<const SequenceInput> seqs, int64_t num_slots,
                         int64_t* total_tokens);

}  // namespace radixserve::model
