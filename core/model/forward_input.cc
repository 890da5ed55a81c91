#include "core/model/forward_input.h"

#include <string>

namespace radixserve::model {

Status ValidateSequences(const LlamaConfig& c, std::span<const SequenceInput> seqs, int64_t num_slots,
                         int64_t* total_tokens) {
  if (seqs.empty()) return Status::InvalidArgument("Forward: empty batch");
  int64_t total = 0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const SequenceInput& in = seqs[s];
    // Built only on error: validation runs every step and must not allocate.
    auto where = [s] { return "Forward: sequence " + std::to_string(s) + ": "; };
    if (in.new_tokens.empty()) return Status::InvalidArgument(where() + "no new tokens");
    if (in.cached_len < 0) return Status::InvalidArgument(where() + "negative cached_len");
    const int64_t len = static_cast<int64_t>(in.cached_len) + static_cast<int64_t>(in.new_tokens.size());
    if (static_cast<int64_t>(in.slots.size()) != len)
      return Status::InvalidArgument(where() + "slots has " + std::to_string(in.slots.size()) +
                                     " entries, expected cached_len + new tokens = " + std::to_string(len));
    if (len > c.context_length)
      return Status::InvalidArgument(where() + "length " + std::to_string(len) + " exceeds the context length " +
                                     std::to_string(c.context_length));
    for (int32_t slot : in.slots)
      if (slot < 0 || slot >= num_slots)
        return Status::InvalidArgument(where() + "KV slot " + std::to_string(slot) + " is outside [0, " +
                                       std::to_string(num_slots) + ")");
    for (int32_t tok : in.new_tokens)
      if (tok < 0 || tok >= c.vocab_size)
        return Status::InvalidArgument(where() + "token id " + std::to_string(tok) + " is outside the vocabulary [0, " +
                                       std::to_string(c.vocab_size) + ")");
    total += static_cast<int64_t>(in.new_tokens.size());
  }
  *total_tokens = total;
  return Status::Ok();
}

}  // namespace radixserve::model
