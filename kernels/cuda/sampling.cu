#include "kernels/cuda/sampling.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include <climits>
#include <cmath>
#include <string>

#include "kernels/cuda/cuda_check.h"

namespace radixserve::cuda {
namespace {

using sampling::RowSample;
using sampling::RowSampling;
using sampling::TokenCount;

constexpr int kThreads = 512;

struct MaxAt {
  float value;
  int32_t index;
};

// The larger value; on equal values the lower index (the contract's tie rule).
struct MaxAtOp {
  __device__ MaxAt operator()(const MaxAt& a, const MaxAt& b) const {
    if (a.value > b.value || (a.value == b.value && a.index < b.index)) return a;
    return b;
  }
};

struct MaxOp {
  __device__ int32_t operator()(int32_t a, int32_t b) const { return a > b ? a : b; }
};

// One block per row: penalties on the row's counted tokens (one entry per token, so no two
// threads write one logit), then its suppressed tokens to -inf; for a row that sorts, its ids
// 0..vocab-1 as the sort's values, its zeros made +0.0, and its segment; the others get an empty
// segment.
__global__ void PrepareRowsKernel(float* logits, int64_t vocab, const RowSampling* rows, const TokenCount* counts,
                                  const int32_t* suppressed, int32_t* ids, int32_t* seg_begin, int32_t* seg_end) {
  const int64_t r = blockIdx.x;
  const RowSampling s = rows[r];
  float* row = logits + r * vocab;
  for (int32_t i = threadIdx.x; i < s.counts_size; i += blockDim.x) {
    const TokenCount c = counts[s.counts_begin + i];
    if (c.token >= 0 && c.token < vocab)
      row[c.token] = sampling::PenalisedLogit(row[c.token], s.repetition_penalty, s.frequency_penalty,
                                              s.presence_penalty, c.generated);
  }
  __syncthreads();  // a suppressed token that is also counted ends at -inf
  for (int32_t i = threadIdx.x; i < s.suppressed_size; i += blockDim.x) {
    const int32_t t = suppressed[s.suppressed_begin + i];
    if (t >= 0 && t < vocab) row[t] = -INFINITY;
  }
  if (ids == nullptr) return;  // no row of the step sorts
  const bool sorts = SortsRow(s, vocab);
  if (threadIdx.x == 0) {
    seg_begin[r] = static_cast<int32_t>(r * vocab);
    seg_end[r] = static_cast<int32_t>(r * vocab + (sorts ? vocab : 0));
  }
  if (!sorts) return;
  __syncthreads();  // every penalty and suppression written before the row is read again
  for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) {
    ids[r * vocab + i] = static_cast<int32_t>(i);
    // The radix sort orders -0.0 below +0.0, the contract's comparison holds them equal: one zero
    // keeps equal logits in ascending ids.
    if (row[i] == 0.0f) row[i] = 0.0f;
  }
}

// One block per row: the contract's steps 2-4 (row_sampling.h) on the penalised logits, with the
// row's sorted logits and ids where SortsRow. Sums are in double as on the host.
__global__ void SampleRowKernel(const float* logits, int64_t vocab, const RowSampling* rows, const float* sorted_logits,
                                const int32_t* sorted_ids, RowSample* out) {
  using ReduceMaxAt = cub::BlockReduce<MaxAt, kThreads>;
  using ReduceDouble = cub::BlockReduce<double, kThreads>;
  using ReduceInt = cub::BlockReduce<int32_t, kThreads>;
  using ScanDouble = cub::BlockScan<double, kThreads>;
  __shared__ union {
    typename ReduceMaxAt::TempStorage max_at;
    typename ReduceDouble::TempStorage sum;
    typename ReduceInt::TempStorage max_id;
    typename ScanDouble::TempStorage scan;
  } temp;
  __shared__ MaxAt best;
  __shared__ double shared_sum;
  __shared__ int32_t highest_kept, chosen;

  const int64_t r = blockIdx.x;
  const int32_t V = static_cast<int32_t>(vocab);
  const RowSampling s = rows[r];
  const float* l = logits + r * vocab;
  const bool sorted = sorted_logits != nullptr && SortsRow(s, vocab);
  const float* sl = sorted ? sorted_logits + r * vocab : nullptr;
  const int32_t* si = sorted ? sorted_ids + r * vocab : nullptr;

  // The lowest-id maximum and the log-sum-exp.
  MaxAt mine{-INFINITY, 0};  // index 0, not a sentinel: a row of NaNs (every comparison false) gives id 0
  for (int32_t i = threadIdx.x; i < V; i += kThreads) mine = MaxAtOp()(mine, MaxAt{l[i], i});
  const MaxAt top = ReduceMaxAt(temp.max_at).Reduce(mine, MaxAtOp());
  if (threadIdx.x == 0) best = top;
  __syncthreads();
  const float mx = best.value;
  double part = 0.0;
  for (int32_t i = threadIdx.x; i < V; i += kThreads) part += exp(static_cast<double>(l[i] - mx));
  const double lse_sum = ReduceDouble(temp.sum).Sum(part);
  if (threadIdx.x == 0) shared_sum = lse_sum;
  __syncthreads();
  const float lse = mx + static_cast<float>(log(shared_sum));

  int32_t token = best.index;  // greedy
  if (s.temperature != 0.0f) {
    token = 0;  // every token suppressed
    if (mx != -INFINITY) {
      const float inv_t = 1.0f / s.temperature;
      // Kept: sorted before or at the n-th, i.e. above its logit, or equal to it at no higher id.
      bool keep_all = true;
      float last_logit = 0.0f;
      int32_t last_id = 0;
      if (sorted && (s.top_k < V || s.top_p < 1.0f || s.min_p > 0.0f)) {
        keep_all = false;
        int32_t n = s.top_k < V ? s.top_k : V;
        if (s.top_p < 1.0f) {
          double p = 0.0;
          for (int32_t i = threadIdx.x; i < V; i += kThreads) p += expf((l[i] - mx) * inv_t);
          __syncthreads();
          const double total = ReduceDouble(temp.sum).Sum(p);
          if (threadIdx.x == 0) shared_sum = total;
          __syncthreads();
          const double limit = static_cast<double>(s.top_p) * shared_sum;
          // A sorted token is kept while the mass before it is at most the limit.
          int32_t keep = 0;
          double carry = 0.0;
          for (int32_t base = 0; base < n; base += kThreads) {
            const int32_t j = base + threadIdx.x;
            const double q = j < n ? expf((sl[j] - mx) * inv_t) : 0.0;
            double before, tile;
            __syncthreads();
            ScanDouble(temp.scan).ExclusiveSum(q, before, tile);
            keep += __syncthreads_count(j < n && carry + before <= limit);
            carry += tile;
            if (carry > limit) break;  // every later token has more before it
          }
          n = keep > 1 ? keep : 1;
        }
        if (s.min_p > 0.0f) {
          // Sorted, so p_i >= min_p holds for a prefix; stop at the first tile it ends in.
          int32_t keep = 0;
          for (int32_t base = 0; base < n; base += kThreads) {
            const int32_t j = base + threadIdx.x;
            const int32_t in_tile = n - base < kThreads ? n - base : kThreads;
            const int32_t kept = __syncthreads_count(j < n && expf((sl[j] - mx) * inv_t) >= s.min_p);
            keep += kept;
            if (kept < in_tile) break;
          }
          n = keep;
        }
        last_logit = sl[n - 1];
        last_id = si[n - 1];
      }
      auto kept = [&](int32_t i) {
        return keep_all || l[i] > last_logit || (l[i] == last_logit && i <= last_id);
      };
      // Each thread a run of consecutive ids, so that one scan gives the mass before each run.
      const int32_t chunk = (V + kThreads - 1) / kThreads;
      const int32_t begin = min(V, static_cast<int32_t>(threadIdx.x) * chunk), end = min(V, begin + chunk);
      double run = 0.0;
      int32_t highest = -1;
      for (int32_t i = begin; i < end; ++i)
        if (kept(i)) {
          run += expf((l[i] - mx) * inv_t);
          highest = i;
        }
      __syncthreads();
      const int32_t top_id = ReduceInt(temp.max_id).Reduce(highest, MaxOp());
      if (threadIdx.x == 0) {
        highest_kept = top_id;
        chosen = INT_MAX;
      }
      double before, mass;
      __syncthreads();
      ScanDouble(temp.scan).ExclusiveSum(run, before, mass);
      const double target = s.uniform * mass;
      if (before <= target && target < before + run) {
        double u = target - before;
        for (int32_t i = begin; i < end; ++i) {
          if (!kept(i)) continue;
          u -= expf((l[i] - mx) * inv_t);
          if (u < 0.0) {
            atomicMin(&chosen, i);  // two runs can claim the target only by rounding: the lower id
            break;
          }
        }
      }
      __syncthreads();
      token = chosen != INT_MAX ? chosen : highest_kept;  // rounding ran out: the last kept token
    }
  }
  RowSample& o = out[r];
  if (threadIdx.x == 0) {
    o.token = token;
    o.logprob = l[token] - lse;
  }
  const int32_t n_top = sorted ? min(s.top_logprobs, V) : 0;
  for (int32_t j = threadIdx.x; j < n_top; j += kThreads) {
    o.top_ids[j] = si[j];
    o.top_logprobs[j] = sl[j] - lse;
  }
}

}  // namespace

Status SampleRows(float* logits, const SampleRowsInput& in, SampleWorkspace& ws, RowSample* out, Stream stream) {
  const int64_t rows = in.num_rows, V = in.vocab;
  if (V <= 0 || V > INT32_MAX) return Status::InvalidArgument("SampleRows: bad vocabulary size " + std::to_string(V));
  if (rows == 0) return Status::Ok();
  bool penalises = false, sorts = false;
  for (int64_t r = 0; r < rows; ++r) {
    const RowSampling& s = in.host_rows[r];
    penalises |= s.counts_size > 0 || s.suppressed_size > 0;
    sorts |= SortsRow(s, V);
  }
  if (sorts && rows * V > INT32_MAX)
    return Status::InvalidArgument("SampleRows: " + std::to_string(rows) + " rows of " + std::to_string(V) +
                                   " logits exceed a sort's 2^31 items");
  int32_t *ids = nullptr, *seg = nullptr;
  if (sorts) {
    RS_RETURN_IF_ERROR(GrowBuffer(ws.ids_in, rows * V * sizeof(int32_t)));
    RS_RETURN_IF_ERROR(GrowBuffer(ws.offsets, 2 * rows * sizeof(int32_t)));
    ids = ws.ids_in.as<int32_t>();
    seg = ws.offsets.as<int32_t>();
  }
  if (penalises || sorts) {
    PrepareRowsKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(logits, V, in.rows, in.counts,
                                                                           in.suppressed, ids, seg, seg + rows);
    RS_RETURN_IF_ERROR(LaunchStatus("PrepareRows"));
  }
  float* sorted_logits = nullptr;
  int32_t* sorted_ids = nullptr;
  if (sorts) {
    RS_RETURN_IF_ERROR(GrowBuffer(ws.sorted_logits, rows * V * sizeof(float)));
    RS_RETURN_IF_ERROR(GrowBuffer(ws.sorted_ids, rows * V * sizeof(int32_t)));
    sorted_logits = ws.sorted_logits.as<float>();
    sorted_ids = ws.sorted_ids.as<int32_t>();
    const int items = static_cast<int>(rows * V), segments = static_cast<int>(rows);
    size_t temp_bytes = 0;
    RS_RETURN_IF_ERROR(CudaStatus(
        cub::DeviceSegmentedRadixSort::SortPairsDescending(nullptr, temp_bytes, logits, sorted_logits, ids, sorted_ids,
                                                           items, segments, seg, seg + rows, 0, 32, stream),
        "SampleRows: sort size"));
    RS_RETURN_IF_ERROR(GrowBuffer(ws.sort_temp, temp_bytes));
    temp_bytes = ws.sort_temp.bytes();
    RS_RETURN_IF_ERROR(CudaStatus(
        cub::DeviceSegmentedRadixSort::SortPairsDescending(ws.sort_temp.data(), temp_bytes, logits, sorted_logits, ids,
                                                           sorted_ids, items, segments, seg, seg + rows, 0, 32, stream),
        "SampleRows: sort"));
  }
  SampleRowKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(logits, V, in.rows, sorted_logits, sorted_ids,
                                                                       out);
  return LaunchStatus("SampleRow");
}

namespace {

// One thread per 32 logits: a word of the mask, read once.
__global__ void ApplyTokenBitmaskKernel(float* logits, const uint32_t* masks, int64_t vocab, int64_t mask_words) {
  const int64_t row = blockIdx.y;
  const int64_t w = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t words = (vocab + 31) / 32;
  if (w >= words) return;
  const uint32_t bits = w < mask_words ? masks[row * mask_words + w] : 0u;
  if (bits == 0xFFFFFFFFu) return;
  float* out = logits + row * vocab + w * 32;
  const int64_t n = vocab - w * 32 < 32 ? vocab - w * 32 : 32;
  for (int64_t i = 0; i < n; ++i)
    if (!((bits >> i) & 1u)) out[i] = -INFINITY;
}

}  // namespace

Status ApplyTokenBitmask(float* logits, const uint32_t* masks, int64_t rows, int64_t vocab, int64_t mask_words,
                         Stream stream) {
  if (rows <= 0) return Status::Ok();
  if (vocab <= 0 || mask_words < 0 || rows > 65535)
    return Status::InvalidArgument("ApplyTokenBitmask: rows " + std::to_string(rows) + ", vocab " +
                                   std::to_string(vocab) + " out of range");
  const int threads = 128;
  const int64_t words = (vocab + 31) / 32;
  const dim3 grid(static_cast<unsigned>((words + threads - 1) / threads), static_cast<unsigned>(rows));
  ApplyTokenBitmaskKernel<<<grid, threads, 0, stream>>>(logits, masks, vocab, mask_words);
  return LaunchStatus("ApplyTokenBitmask");
}

}  // namespace radixserve::cuda
