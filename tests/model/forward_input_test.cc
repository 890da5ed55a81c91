// ValidateDeviceSampling: what a backend that samples on the device is guaranteed before it reads
// a step's sampling rows blind (forward_input.h).
#include "core/model/forward_input.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace radixserve::model {
namespace {

using sampling::RowSample;
using sampling::RowSampling;
using sampling::TokenCount;

struct Step {
  std::vector<RowSampling> rows = std::vector<RowSampling>(2);
  std::vector<TokenCount> counts = std::vector<TokenCount>(3);
  std::vector<int32_t> suppressed = std::vector<int32_t>(2);
  std::vector<RowSample> out = std::vector<RowSample>(2);
  Status Check(int64_t out_rows = 2, size_t logits = 0) {
    return ValidateDeviceSampling(DeviceSampling{rows, counts, suppressed, out}, out_rows, logits);
  }
};

TEST(ValidateDeviceSampling, AcceptsRowsWhoseRangesAndParametersAreInside) {
  Step s;
  s.rows[0] = {.uniform = 0.5, .temperature = 0.8f, .top_p = 0.9f, .min_p = 0.05f, .repetition_penalty = 1.1f,
               .top_k = 40, .top_logprobs = sampling::kMaxTopLogprobs, .counts_begin = 0, .counts_size = 3,
               .suppressed_begin = 1, .suppressed_size = 1};
  s.rows[1].counts_begin = 3;  // an empty range at the end is inside
  EXPECT_TRUE(s.Check().ok());
}

TEST(ValidateDeviceSampling, RefusesLogitsAndMiscountedRowsOrOutputs) {
  Step s;
  EXPECT_EQ(s.Check(2, 10).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.Check(3).code(), StatusCode::kInvalidArgument);
  s.out.resize(1);
  EXPECT_EQ(s.Check().code(), StatusCode::kInvalidArgument);
}

TEST(ValidateDeviceSampling, RefusesEachOutOfRangeField) {
  const auto refused = [](auto edit) {
    Step s;
    edit(s.rows[1]);
    return s.Check().code() == StatusCode::kInvalidArgument;
  };
  EXPECT_TRUE(refused([](RowSampling& r) { r.counts_begin = 2, r.counts_size = 2; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.counts_begin = -1; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.suppressed_size = 3; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.suppressed_size = -1; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.top_logprobs = sampling::kMaxTopLogprobs + 1; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.top_logprobs = -1; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.temperature = -0.5f; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.temperature = NAN; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.temperature = INFINITY; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.top_k = 0; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.top_p = 0.0f; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.top_p = 1.5f; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.min_p = 1.5f; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.min_p = NAN; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.repetition_penalty = 0.0f; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.uniform = 1.0; }));
  EXPECT_TRUE(refused([](RowSampling& r) { r.uniform = -0.1; }));
}

TEST(ValidateDeviceSampling, TokenMasksCoverEveryRowOrAreAbsent) {
  Step s;
  const std::vector<uint32_t> masks(2 * 4, 0xFFFFFFFFu);
  DeviceSampling ds{s.rows, s.counts, s.suppressed, s.out};
  ds.token_masks = masks;
  ds.mask_words = 4;
  EXPECT_TRUE(ValidateDeviceSampling(ds, 2, 0).ok());
  ds.mask_words = 3;
  EXPECT_EQ(ValidateDeviceSampling(ds, 2, 0).code(), StatusCode::kInvalidArgument);
  ds.mask_words = 0;
  EXPECT_EQ(ValidateDeviceSampling(ds, 2, 0).code(), StatusCode::kInvalidArgument);
  ds.token_masks = {};
  EXPECT_TRUE(ValidateDeviceSampling(ds, 2, 0).ok());
}

}  // namespace
}  // namespace radixserve::model
