// SamplingParams: how one request picks its next tokens and when it stops.
// Plain data (trivially copyable, fixed size) so it can travel inside
// shared-memory messages. Defaults follow SCHEDULER_SPEC section 10.2.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/row_sampling.h"
#include "core/util/status.h"

namespace radixserve {

struct SamplingParams {
  static constexpr int32_t kTopKAll = sampling::kTopKAll;

  float temperature = 1.0f;         // 0 (or < 1e-6) means greedy
  float top_p = 1.0f;               // (0, 1]
  int32_t top_k = kTopKAll;         // >= 1; -1 on input means all
  float min_p = 0.0f;               // [0, 1]
  float repetition_penalty = 1.0f;  // (0, 2]
  float frequency_penalty = 0.0f;   // [-2, 2]
  float presence_penalty = 0.0f;    // [-2, 2]
  uint64_t seed = 0;
  bool has_seed = false;            // without a seed, the request id seeds the generator
  int32_t max_new_tokens = 128;
  int32_t min_new_tokens = 0;
  bool ignore_eos = false;
  bool skip_special_tokens = true;
  int32_t logprobs = -1;            // -1: none; 0: chosen token only; n: chosen + top n
  int32_t stream_interval = 0;      // 0: the server default

  bool is_greedy() const { return temperature < 1e-6f || top_k == 1; }
  // True when the tokens generated so far change the next token's distribution.
  bool has_penalties() const {
    return repetition_penalty != 1.0f || frequency_penalty != 0.0f || presence_penalty != 0.0f;
  }

  // Normalises (-1 top_k, tiny temperature) and checks every range; the message names the field.
  Status Validate();
};

}  // namespace radixserve
