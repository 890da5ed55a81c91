// StepStaging: where a forward step's inputs lie in the one host buffer a device backend
// (CudaModel) copies in with one transfer, and the packing of them into it. Host code alone, so
// it is tested without a GPU.
//
// int32 parts, in order: the new tokens [T], their positions [T], the sequence of each [T], the
// KV slot of each [T], the last token of each sequence [S], then each sequence's slot row
// (row_stride slots, the tail zero); after them, for a step that samples on the device, its
// RowSampling rows, penalty counts, suppressed ids and token masks, each at its alignment.
// Plain data; thread-safe to read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/model/forward_input.h"

namespace radixserve::model {

struct StepStaging {
  int64_t tokens = 0, sequences = 0;
  int64_t row_stride = 0;  // slots of each row: the longest row, rounded up to the alignment asked
  // Byte offsets of the sampling parts (0 without sampling) and the buffer's size.
  size_t sampling_rows = 0, counts = 0, suppressed = 0, token_masks = 0, bytes = 0;

  // The layout of a step of `seqs` with `tokens` new tokens in all; rows padded to a multiple of
  // row_align (>= 1). `ds` may be null (no sampling on the device).
  static StepStaging Plan(std::span<const SequenceInput> seqs, int64_t tokens, int64_t row_align,
                          const DeviceSampling* ds);

  // Writes the step's inputs as planned into `dst`: `bytes` long, aligned for RowSampling.
  void Pack(std::span<const SequenceInput> seqs, const DeviceSampling* ds, void* dst) const;

  // Element offsets of the int32 parts.
  int64_t positions_at() const { return tokens; }
  int64_t token_seq_at() const { return 2 * tokens; }
  int64_t token_slot_at() const { return 3 * tokens; }
  int64_t last_index_at() const { return 4 * tokens; }
  int64_t rows_at() const { return 4 * tokens + sequences; }
};

}  // namespace radixserve::model
