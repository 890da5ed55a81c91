// RowSampling: one output row's sampling as plain numbers, for a backend that samples where the
// logits are (a GPU's): the request's parameters, its penalty counts and suppressed tokens as
// ranges into lists the step carries, and the uniform number its random generator gave on the
// host, so that the device keeps no generator state and a request draws the same sequence
// whichever backend runs it. RowSample is what comes back for the row.
//
// The contract (what RowSampler computes on the host, and a device sampler must too):
//   1. penalties on the counted tokens (PenalisedLogit), then suppressed tokens to -inf;
//   2. greedy (temperature 0): the lowest-id maximum;
//   3. otherwise p_i = exp((l_i - max) / temperature); sort by (logit descending, id ascending);
//      keep the first top_k, then the sorted prefix whose mass before each token is at most
//      top_p of the total (at least one), then those with p_i >= min_p; draw `uniform` x the
//      kept mass, walking the kept tokens in id order (the last kept one if rounding runs out);
//      every token suppressed: token 0;
//   4. logprob: the chosen token's log-softmax of the step 1 logits; top logprobs: the best
//      top_logprobs of those, ties to the lower id.
// This is Sampler::Sample's result for the same parameters, state and logits (core/sampling/sampler.h).
// Plain C++17 data, in kernels/ so that the CUDA kernels and core/ both include it (nvcc too);
// thread-safe.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define RADIXSERVE_HOST_DEVICE __host__ __device__
#else
#define RADIXSERVE_HOST_DEVICE
#endif

namespace radixserve::sampling {

inline constexpr int kMaxTopLogprobs = 20;
inline constexpr int32_t kTopKAll = 1 << 30;  // top_k that keeps every token

// A token the request has seen: in its prompt (repetition penalty) and how often generated.
struct TokenCount {
  int32_t token = 0;
  int32_t in_prompt = 0;
  int32_t generated = 0;
};

struct RowSampling {
  double uniform = 0.0;        // [0, 1), from the request's generator; unused when greedy
  float temperature = 0.0f;    // 0: greedy
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  int32_t top_k = kTopKAll;
  int32_t top_logprobs = 0;    // [0, kMaxTopLogprobs]
  int32_t counts_begin = 0;    // this row's TokenCounts in the step's list
  int32_t counts_size = 0;
  int32_t suppressed_begin = 0;  // this row's suppressed token ids in the step's list
  int32_t suppressed_size = 0;
};

struct RowSample {
  int32_t token = 0;
  float logprob = 0.0f;
  int32_t top_ids[kMaxTopLogprobs] = {};
  float top_logprobs[kMaxTopLogprobs] = {};
};

// The penalised logit of a token seen `generated` times (llama/HF repetition penalty on every
// seen token, then OpenAI frequency and presence penalties on generated ones).
RADIXSERVE_HOST_DEVICE inline float PenalisedLogit(float logit, float repetition, float frequency, float presence,
                                                   int32_t generated) {
  if (repetition != 1.0f) logit = logit > 0.0f ? logit / repetition : logit * repetition;
  if (generated > 0 && (frequency != 0.0f || presence != 0.0f))
    logit -= frequency * static_cast<float>(generated) + presence;
  return logit;
}

// True when the row takes the plain lowest-id argmax of the raw logits (a backend's fast path).
RADIXSERVE_HOST_DEVICE inline bool IsPlainArgmax(const RowSampling& r) {
  return r.temperature == 0.0f && r.counts_size == 0 && r.suppressed_size == 0 && r.top_logprobs == 0;
}

}  // namespace radixserve::sampling
