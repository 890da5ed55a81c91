#include "core/model/forward_input.h"

#include <cmath>
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

Status ValidateDeviceSampling(const DeviceSampling& ds, int64_t out_rows, size_t logits_size) {
  if (logits_size != 0 || static_cast<int64_t>(ds.rows.size()) != out_rows ||
      static_cast<int64_t>(ds.out.size()) != out_rows)
    return Status::InvalidArgument("Forward: a step that samples on the device takes no logits and " +
                                   std::to_string(out_rows) + " rows and outputs, got " + std::to_string(logits_size) +
                                   " logits, " + std::to_string(ds.rows.size()) + " rows and " +
                                   std::to_string(ds.out.size()) + " outputs");
  if (!ds.token_masks.empty() &&
      (ds.mask_words <= 0 || ds.token_masks.size() != static_cast<size_t>(out_rows) * static_cast<size_t>(ds.mask_words)))
    return Status::InvalidArgument("Forward: token masks of " + std::to_string(ds.token_masks.size()) +
                                   " words do not cover " + std::to_string(out_rows) + " rows of " +
                                   std::to_string(ds.mask_words) + " words");
  auto inside = [](int32_t begin, int32_t size, size_t list) {
    return begin >= 0 && size >= 0 && static_cast<size_t>(begin) + static_cast<size_t>(size) <= list;
  };
  for (size_t r = 0; r < ds.rows.size(); ++r) {
    const sampling::RowSampling& s = ds.rows[r];
    const bool ok = inside(s.counts_begin, s.counts_size, ds.counts.size()) &&
                    inside(s.suppressed_begin, s.suppressed_size, ds.suppressed.size()) &&
                    s.top_logprobs >= 0 && s.top_logprobs <= sampling::kMaxTopLogprobs && std::isfinite(s.temperature) &&
                    s.temperature >= 0.0f && s.top_k >= 1 && s.top_p > 0.0f && s.top_p <= 1.0f &&
                    s.min_p >= 0.0f && s.min_p <= 1.0f && s.repetition_penalty > 0.0f && s.uniform >= 0.0 &&
                    s.uniform < 1.0;
    if (!ok) return Status::InvalidArgument("Forward: sampling row " + std::to_string(r) + " is out of range");
  }
  return Status::Ok();
}

}  // namespace radixserve::model
