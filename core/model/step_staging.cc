#include "core/model/step_staging.h"

#include <algorithm>
#include <cstring>

namespace radixserve::model {

StepStaging StepStaging::Plan(std::span<const SequenceInput> seqs, int64_t tokens, int64_t row_align,
                              const DeviceSampling* ds) {
  StepStaging o;
  o.tokens = tokens;
  o.sequences = static_cast<int64_t>(seqs.size());
  for (const SequenceInput& in : seqs) o.row_stride = std::max<int64_t>(o.row_stride, in.slots.size());
  o.row_stride = (o.row_stride + row_align - 1) / row_align * row_align;
  o.bytes = static_cast<size_t>(o.rows_at() + o.sequences * o.row_stride) * sizeof(int32_t);
  if (ds == nullptr) return o;
  auto place = [&](size_t align, size_t size) {
    const size_t at = (o.bytes + align - 1) / align * align;
    o.bytes = at + size;
    return at;
  };
  o.sampling_rows = place(alignof(sampling::RowSampling), ds->rows.size_bytes());
  o.counts = place(alignof(sampling::TokenCount), ds->counts.size_bytes());
  o.suppressed = place(alignof(int32_t), ds->suppressed.size_bytes());
  o.token_masks = place(alignof(uint32_t), ds->token_masks.size_bytes());
  return o;
}

void StepStaging::Pack(std::span<const SequenceInput> seqs, const DeviceSampling* ds, void* dst) const {
  int32_t* h = static_cast<int32_t*>(dst);
  int32_t *token_ids = h, *pos = h + positions_at(), *token_seq = h + token_seq_at();
  int32_t *token_slot = h + token_slot_at(), *last = h + last_index_at(), *rows = h + rows_at();
  int64_t t = 0;
  for (int64_t s = 0; s < sequences; ++s) {
    const SequenceInput& in = seqs[s];
    for (size_t i = 0; i < in.new_tokens.size(); ++i, ++t) {
      token_ids[t] = in.new_tokens[i];
      pos[t] = in.cached_len + static_cast<int32_t>(i);
      token_seq[t] = static_cast<int32_t>(s);
      token_slot[t] = in.slots[pos[t]];
    }
    last[s] = static_cast<int32_t>(t - 1);
    std::fill(std::copy(in.slots.begin(), in.slots.end(), rows + s * row_stride), rows + (s + 1) * row_stride, 0);
  }
  if (ds == nullptr) return;
  uint8_t* base = static_cast<uint8_t*>(dst);
  // Empty lists may have no data pointer, which memcpy must not be given.
  if (!ds->rows.empty()) std::memcpy(base + sampling_rows, ds->rows.data(), ds->rows.size_bytes());
  if (!ds->counts.empty()) std::memcpy(base + counts, ds->counts.data(), ds->counts.size_bytes());
  if (!ds->suppressed.empty()) std::memcpy(base + suppressed, ds->suppressed.data(), ds->suppressed.size_bytes());
  if (!ds->token_masks.empty())
    std::memcpy(base + token_masks, ds->token_masks.data(), ds->token_masks.size_bytes());
}

}  // namespace radixserve::model
