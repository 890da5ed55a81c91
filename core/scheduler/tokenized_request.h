// TokenizedRequest: one request as the scheduler receives it. Plain value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/grammar/grammar_spec.h"
#include "core/sampling/sampling_params.h"

namespace radixserve::sched {

// One request as the scheduler receives it: one choice of an api::GenerateRequest, tokenized
// (the wire form is transport::TokenizedRequestMsg).
struct TokenizedRequest {
  uint64_t rid = 0;
  std::vector<int32_t> input_ids;
  SamplingParams sampling;
  std::vector<int32_t> stop_token_ids;
  std::vector<std::string> stop_strs;
  bool stream = false;
  bool return_logprob = false;
  int32_t top_logprobs_num = 0;
  std::optional<int64_t> priority;
  std::string routing_key;  // "" when none
  std::string cache_salt;   // "" when none
  grammar::GrammarSpec grammar;  // structured output; kind kNone when unconstrained
};

}  // namespace radixserve::sched
