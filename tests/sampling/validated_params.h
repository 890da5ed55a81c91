// The sampling tests' parameters: SamplingParams with the given fields, validated (and so
// normalised: temperature 0 becomes top_k 1) as a request's are.
#pragma once

#include <gtest/gtest.h>

#include "core/sampling/sampling_params.h"

namespace radixserve::sampling {

inline SamplingParams Params(float temperature, int32_t top_k = -1, float top_p = 1.0f, float min_p = 0.0f,
                             float repetition = 1.0f, float frequency = 0.0f, float presence = 0.0f,
                             int32_t logprobs = -1) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.min_p = min_p;
  p.repetition_penalty = repetition;
  p.frequency_penalty = frequency;
  p.presence_penalty = presence;
  p.logprobs = logprobs;
  EXPECT_TRUE(p.Validate().ok());
  return p;
}

}  // namespace radixserve::sampling
