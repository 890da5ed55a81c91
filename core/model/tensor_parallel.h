// Tensor parallelism of the llama forward pass. Each of `size` ranks holds a
// contiguous range of the query heads (with the K/V heads they read,
// replicated across ranks when there are fewer K/V heads than ranks) and a
// range of the FFN columns, as Megatron splits them, and a range of the output
// rows of the two projections that follow (attention output, FFN down). The
// ranks exchange the projections' inputs and outputs with all-gathers
// (Collective): every rank then computes each output element it owns with
// the whole dot product, in the same order as one worker does, so that the
// logits are those of the whole model bit for bit. (Megatron's all-reduce of
// partial sums would add each dot product in another order and let greedy
// tokens flip on near ties.) Everything else every rank computes in full.
//
// TpShard says which part a rank holds; Collective is how ranks exchange.
// ThreadCollectives runs the ranks as threads of one process (tests, and the
// reference the shared-memory one between processes must equal).
#pragma once

#include <barrier>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/model/llama_config.h"
#include "core/util/status.h"

namespace radixserve::model {

struct TpShard {
  int rank = 0;
  int size = 1;
  int32_t q_head_begin = 0, q_heads = 0;    // this rank's query heads
  int32_t kv_head_begin = 0, kv_heads = 0;  // the K/V heads those read
  int32_t ffn_begin = 0, ffn_dim = 0;       // this rank's FFN columns
  int32_t dim_begin = 0, dim_part = 0;      // this rank's output rows of the attention-output and down projections
  // Query heads per K/V head on this rank (the model's group, or fewer when a K/V head is shared
  // by ranks).
  int32_t group() const { return q_heads / kv_heads; }

  // The shard of rank `rank` of `size`; InvalidArgument when the model does not divide so
  // (query heads, FFN columns and the model width by size; K/V heads by size, or size by K/V heads).
  static Result<TpShard> For(const LlamaConfig& config, int rank, int size);
};

// How the ranks of one tensor-parallel group combine partial results. Every rank calls each
// collective in the same order; a call returns when all ranks have made it.
class Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Starts a step (one Forward call): every rank passes the same id, and the calls that follow are
  // matched across ranks by (step, call number).
  virtual void BeginStep(uint64_t step) {}
  // Every rank's `rows` x `cols` part, side by side: row t of `out` (rows x cols * size) is rank
  // 0's row t, then rank 1's, and so on. `rows` and `cols` are the same on every rank.
  virtual Status AllGather(const float* part, int64_t rows, int64_t cols, float* out) = 0;
};

// `size` Collectives over one shared buffer, one per rank thread.
std::vector<std::unique_ptr<Collective>> MakeThreadCollectives(int size);

}  // namespace radixserve::model
