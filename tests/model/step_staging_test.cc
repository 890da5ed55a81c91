// StepStaging: a device step's inputs laid out and packed for one transfer.
#include "core/model/step_staging.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace radixserve::model {
namespace {

// A buffer aligned for RowSampling, as the backend's pinned staging buffer is, its bytes 0xff so
// that a part Pack leaves unwritten shows.
std::vector<sampling::RowSampling> Buffer(size_t bytes) {
  std::vector<sampling::RowSampling> b((bytes + sizeof(sampling::RowSampling) - 1) / sizeof(sampling::RowSampling));
  std::memset(static_cast<void*>(b.data()), 0xff, b.size() * sizeof(b[0]));
  return b;
}

// An extend of 2 tokens after 3 cached (slots 40..44) and a fresh prompt of 3 (slots 7, 9, 8).
struct TwoSequences {
  std::vector<int32_t> extend_tokens = {11, 12}, extend_slots = {40, 41, 42, 43, 44};
  std::vector<int32_t> prompt_tokens = {1, 2, 3}, prompt_slots = {7, 9, 8};
  std::vector<SequenceInput> seqs = {{3, extend_tokens, extend_slots}, {0, prompt_tokens, prompt_slots}};
};

TEST(StepStagingTest, IntPartsFollowOneAnotherAndRowsArePaddedWithSlotZero) {
  TwoSequences b;
  const StepStaging l = StepStaging::Plan(b.seqs, 5, 1, nullptr);
  EXPECT_EQ(l.tokens, 5);
  EXPECT_EQ(l.sequences, 2);
  EXPECT_EQ(l.row_stride, 5);  // the longest row
  EXPECT_EQ(l.bytes, (4 * 5 + 2 + 2 * 5) * sizeof(int32_t));
  auto buf = Buffer(l.bytes);
  l.Pack(b.seqs, nullptr, buf.data());
  const int32_t* h = reinterpret_cast<const int32_t*>(buf.data());
  auto part = [&](int64_t at, int64_t n) { return std::vector<int32_t>(h + at, h + at + n); };
  EXPECT_EQ(part(0, 5), (std::vector<int32_t>{11, 12, 1, 2, 3}));
  EXPECT_EQ(part(l.positions_at(), 5), (std::vector<int32_t>{3, 4, 0, 1, 2}));
  EXPECT_EQ(part(l.token_seq_at(), 5), (std::vector<int32_t>{0, 0, 1, 1, 1}));
  EXPECT_EQ(part(l.token_slot_at(), 5), (std::vector<int32_t>{43, 44, 7, 9, 8}));
  EXPECT_EQ(part(l.last_index_at(), 2), (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(part(l.rows_at(), 10), (std::vector<int32_t>{40, 41, 42, 43, 44, 7, 9, 8, 0, 0}));
}

TEST(StepStagingTest, RowsRoundUpToTheAlignmentAsked) {
  TwoSequences b;
  const StepStaging l = StepStaging::Plan(b.seqs, 5, 256, nullptr);
  EXPECT_EQ(l.row_stride, 256);
  EXPECT_EQ(l.bytes, (4 * 5 + 2 + 2 * 256) * sizeof(int32_t));
  auto buf = Buffer(l.bytes);
  l.Pack(b.seqs, nullptr, buf.data());
  const int32_t* rows = reinterpret_cast<const int32_t*>(buf.data()) + l.rows_at();
  EXPECT_EQ(rows[4], 44);
  for (int i = 5; i < 256; ++i) ASSERT_EQ(rows[i], 0) << i;
  EXPECT_EQ(rows[256 + 2], 8);
  for (int i = 256 + 3; i < 512; ++i) ASSERT_EQ(rows[i], 0) << i;
  // A row exactly at a multiple stays there.
  std::vector<int32_t> slots(256, 5), token = {1};
  const std::vector<SequenceInput> full = {{255, token, slots}};
  EXPECT_EQ(StepStaging::Plan(full, 1, 256, nullptr).row_stride, 256);
}

TEST(StepStagingTest, SamplingPartsFollowAtTheirAlignmentsAndAreCopied) {
  TwoSequences b;
  std::vector<sampling::RowSampling> rows(2);
  rows[0].temperature = 0.5f;
  rows[1].top_k = 7;
  const std::vector<sampling::TokenCount> counts = {{5, 1, 2}, {6, 0, 1}, {9, 3, 0}};
  const std::vector<int32_t> suppressed = {2};
  std::vector<sampling::RowSample> out(2);
  const DeviceSampling ds{rows, counts, suppressed, out};
  const StepStaging l = StepStaging::Plan(b.seqs, 5, 1, &ds);
  const size_t ints = (4 * 5 + 2 + 2 * 5) * sizeof(int32_t);  // 128 bytes
  EXPECT_GE(l.sampling_rows, ints);
  EXPECT_EQ(l.sampling_rows % alignof(sampling::RowSampling), 0u);
  EXPECT_EQ(l.counts, l.sampling_rows + 2 * sizeof(sampling::RowSampling));
  EXPECT_EQ(l.suppressed, l.counts + 3 * sizeof(sampling::TokenCount));
  EXPECT_EQ(l.bytes, l.suppressed + sizeof(int32_t));
  auto buf = Buffer(l.bytes);
  l.Pack(b.seqs, &ds, buf.data());
  const uint8_t* base = reinterpret_cast<const uint8_t*>(buf.data());
  const auto* r = reinterpret_cast<const sampling::RowSampling*>(base + l.sampling_rows);
  EXPECT_EQ(r[0].temperature, 0.5f);
  EXPECT_EQ(r[1].top_k, 7);
  const auto* c = reinterpret_cast<const sampling::TokenCount*>(base + l.counts);
  EXPECT_EQ(c[2].token, 9);
  EXPECT_EQ(c[2].in_prompt, 3);
  EXPECT_EQ(*reinterpret_cast<const int32_t*>(base + l.suppressed), 2);
  // The int parts are unchanged by the sampling parts after them.
  EXPECT_EQ(reinterpret_cast<const int32_t*>(base)[l.rows_at() + 9], 0);
  EXPECT_EQ(reinterpret_cast<const int32_t*>(base)[l.token_slot_at() + 4], 8);
}

TEST(StepStagingTest, EmptySamplingListsTakeNoBytes) {
  TwoSequences b;
  std::vector<sampling::RowSampling> rows(2);
  std::vector<sampling::RowSample> out(2);
  const DeviceSampling ds{rows, {}, {}, out};
  const StepStaging l = StepStaging::Plan(b.seqs, 5, 1, &ds);
  EXPECT_EQ(l.counts, l.sampling_rows + 2 * sizeof(sampling::RowSampling));
  EXPECT_EQ(l.bytes, l.counts);
  auto buf = Buffer(l.bytes);
  l.Pack(b.seqs, &ds, buf.data());  // no copy from an empty list's (null) data
}

TEST(StepStagingTest, TokenMasksFollowTheSuppressedIdsAndAreCopied) {
  TwoSequences b;
  std::vector<sampling::RowSampling> rows(2);
  const std::vector<int32_t> suppressed = {2, 3, 4};
  std::vector<sampling::RowSample> out(2);
  const std::vector<uint32_t> masks = {0xFFFFFFFFu, 1u, 0u, 0x80000000u};  // 2 rows of 2 words
  DeviceSampling ds{rows, {}, suppressed, out};
  ds.token_masks = masks;
  ds.mask_words = 2;
  const StepStaging l = StepStaging::Plan(b.seqs, 5, 1, &ds);
  EXPECT_EQ(l.token_masks, l.suppressed + 3 * sizeof(int32_t));
  EXPECT_EQ(l.token_masks % alignof(uint32_t), 0u);
  EXPECT_EQ(l.bytes, l.token_masks + 4 * sizeof(uint32_t));
  auto buf = Buffer(l.bytes);
  l.Pack(b.seqs, &ds, buf.data());
  const auto* m = reinterpret_cast<const uint32_t*>(reinterpret_cast<const uint8_t*>(buf.data()) + l.token_masks);
  EXPECT_EQ(std::vector<uint32_t>(m, m + 4), masks);
  EXPECT_EQ(*reinterpret_cast<const int32_t*>(reinterpret_cast<const uint8_t*>(buf.data()) + l.suppressed + 8), 4);
}

}  // namespace
}  // namespace radixserve::model
