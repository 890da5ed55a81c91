#include "core/sampling/sampling_params.h"

#include <cmath>

namespace radixserve {

Status SamplingParams::Validate() {
  if (!std::isfinite(temperature) || temperature < 0.0f)
    return Status::InvalidArgument("temperature must be a finite number >= 0, got " + std::to_string(temperature));
  if (top_k == -1 || top_k == 0) top_k = kTopKAll;
  if (top_k < 1) return Status::InvalidArgument("top_k must be >= 1 or -1 (all), got " + std::to_string(top_k));
  if (temperature < 1e-6f) {  // greedy: SCHEDULER_SPEC 10.2 normalisation
    temperature = 1.0f;
    top_k = 1;
  }
  if (!(top_p > 0.0f && top_p <= 1.0f)) return Status::InvalidArgument("top_p must be in (0, 1], got " + std::to_string(top_p));
  if (!(min_p >= 0.0f && min_p <= 1.0f)) return Status::InvalidArgument("min_p must be in [0, 1], got " + std::to_string(min_p));
  if (!(repetition_penalty > 0.0f && repetition_penalty <= 2.0f))
    return Status::InvalidArgument("repetition_penalty must be in (0, 2], got " + std::to_string(repetition_penalty));
  if (!(frequency_penalty >= -2.0f && frequency_penalty <= 2.0f))
    return Status::InvalidArgument("frequency_penalty must be in [-2, 2], got " + std::to_string(frequency_penalty));
  if (!(presence_penalty >= -2.0f && presence_penalty <= 2.0f))
    return Status::InvalidArgument("presence_penalty must be in [-2, 2], got " + std::to_string(presence_penalty));
  if (max_new_tokens < 0) return Status::InvalidArgument("max_new_tokens must be >= 0, got " + std::to_string(max_new_tokens));
  if (min_new_tokens < 0 || min_new_tokens > max_new_tokens)
    return Status::InvalidArgument("min_new_tokens must be in [0, max_new_tokens], got " + std::to_string(min_new_tokens));
  if (logprobs < -1 || logprobs > 20) return Status::InvalidArgument("logprobs must be in [0, 20], got " + std::to_string(logprobs));
  if (stream_interval < 0) return Status::InvalidArgument("stream_interval must be >= 0");
  return Status::Ok();
}

}  // namespace radixserve
