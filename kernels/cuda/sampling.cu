#include "kernels/cuda/sampling.h"

#include <cub/block/block_reduce.cuh>

#include <cmath>

#include "kernels/cuda/cuda_check.h"

namespace radixserve::cuda {
namespace {

constexpr int kThreads = 512;

struct MaxAt {
  float value;
  int32_t index;
};

// The larger value; on equal values the lower index (the CPU sampler's tie rule).
struct MaxAtOp {
  __device__ MaxAt operator()(const MaxAt& a, const MaxAt& b) const {
    if (a.value > b.value || (a.value == b.value && a.index < b.index)) return a;
    return b;
  }
};

__global__ void GreedySampleKernel(const float* logits, int64_t vocab, int32_t* ids, float* logprobs) {
  using ReduceMax = cub::BlockReduce<MaxAt, kThreads>;
  using ReduceSum = cub::BlockReduce<float, kThreads>;
  __shared__ union {
    typename ReduceMax::TempStorage max;
    typename ReduceSum::TempStorage sum;
  } temp;
  __shared__ MaxAt best;
  const float* row = logits + blockIdx.x * vocab;
  MaxAt mine{-INFINITY, 0};  // index 0, not a sentinel: a row of NaNs (every comparison false) gives id 0
  for (int64_t i = threadIdx.x; i < vocab; i += kThreads) mine = MaxAtOp()(mine, MaxAt{row[i], static_cast<int32_t>(i)});
  const MaxAt top = ReduceMax(temp.max).Reduce(mine, MaxAtOp());
  if (threadIdx.x == 0) best = top;
  __syncthreads();
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < vocab; i += kThreads) sum += expf(row[i] - best.value);
  const float total = ReduceSum(temp.sum).Sum(sum);
  if (threadIdx.x == 0) {
    ids[blockIdx.x] = best.index;
    logprobs[blockIdx.x] = -logf(total);
  }
}

}  // namespace

Status GreedySample(const float* logits, int64_t rows, int64_t vocab, int32_t* ids, float* logprobs, Stream stream) {
  if (vocab <= 0 || vocab > INT32_MAX) return Status::InvalidArgument("GreedySample: bad vocabulary size");
  if (rows == 0) return Status::Ok();
  GreedySampleKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(logits, vocab, ids, logprobs);
  return LaunchStatus("GreedySample");
}

}  // namespace radixserve::cuda
