// Sampling on a CUDA device, with CUB's block reductions: greedy choice per row of logits and the
// chosen token's log-probability (log-softmax at the maximum), so that a greedy step returns S
// ids and S floats instead of S x vocab logits. Ties go to the lowest token id, as on the CPU.
// Pointers are device memory; thread-safety: as the stream's.
#pragma once

#include <cstdint>

#include "kernels/cuda/device.h"

namespace radixserve::cuda {

// For each of `rows` rows of `vocab` logits: ids[r] = argmax, logprobs[r] = its log-probability.
Status GreedySample(const float* logits, int64_t rows, int64_t vocab, int32_t* ids, float* logprobs, Stream stream);

}  // namespace radixserve::cuda
