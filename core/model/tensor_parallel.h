// Tensor parallelism of the llama forward pass, the Megatron way: each of
// `size` ranks holds a contiguous range of the query heads (with the K/V heads
// they read, replicated across ranks when there are fewer K/V heads than
// ranks), the matching column range of the attention output projection, and
// a range of FFN columns with the matching columns of the down projection.
// The ranks sum their partial outputs of the two projections with an
// all-reduce (Collective); everything else every rank computes in full.
//
// TpShard says which part a rank holds; Collective is how ranks combine.
// ThreadCollectives runs the ranks as threads of one process (tests, and the
// reference the shared-memory one between processes must equal).
#pragma once

#include <barrier>
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
  // Query heads per K/V head on this rank (the model's group, or fewer when a K/V head is shared
  // by ranks).
  int32_t group() const { return q_heads / kv_heads; }

  // The shard of rank `rank` of `size`; InvalidArgument when the model does not divide so
  // (query heads and FFN columns by size; K/V heads by size, or size by K/V heads).
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
  // data[i] = the sum over ranks of their data[i], added in rank order, so that every rank gets
  // the same bits. `n` is the same on every rank.
  virtual Status AllReduceSum(float* data, int64_t n) = 0;
};

// `size` Collectives over one shared buffer, one per rank thread.
std::vector<std::unique_ptr<Collective>> MakeThreadCollectives(int size);

}  // namespace radixserve::model
