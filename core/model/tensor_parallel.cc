#include "core/model/tensor_parallel.h"

#include <algorithm>

namespace radixserve::model {

Result<TpShard> TpShard::For(const LlamaConfig& c, int rank, int size) {
  if (size < 1 || rank < 0 || rank >= size)
    return Status::InvalidArgument("tensor-parallel rank " + std::to_string(rank) + " of " + std::to_string(size));
  auto refuse = [&](const std::string& why) {
    return Status::InvalidArgument("tensor parallelism of size " + std::to_string(size) + ": " + why);
  };
  if (c.num_heads % size != 0)
    return refuse("the model's " + std::to_string(c.num_heads) + " query heads do not divide by it");
  if (c.ffn_dim % size != 0) return refuse("the FFN's " + std::to_string(c.ffn_dim) + " columns do not divide by it");
  if (c.dim % size != 0) return refuse("the model width " + std::to_string(c.dim) + " does not divide by it");
  if (c.num_kv_heads % size != 0 && size % c.num_kv_heads != 0)
    return refuse(std::to_string(c.num_kv_heads) + " K/V heads neither divide by it nor divide it");
  TpShard s;
  s.rank = rank;
  s.size = size;
  s.q_heads = c.num_heads / size;
  s.q_head_begin = rank * s.q_heads;
  const int32_t model_group = c.num_heads / c.num_kv_heads;
  s.kv_head_begin = s.q_head_begin / model_group;
  s.kv_heads = std::max<int32_t>(1, c.num_kv_heads / size);  // one replicated head when fewer than ranks
  s.ffn_dim = c.ffn_dim / size;
  s.ffn_begin = rank * s.ffn_dim;
  s.dim_part = c.dim / size;
  s.dim_begin = rank * s.dim_part;
  return s;
}

namespace {

// The ranks' parts, published for one call; a barrier before and after each gather.
struct ThreadGroup {
  explicit ThreadGroup(int size) : size(size), parts(size), sync(size) {}
  const int size;
  std::vector<const float*> parts;
  std::barrier<> sync;
};

class ThreadCollective final : public Collective {
 public:
  ThreadCollective(std::shared_ptr<ThreadGroup> group, int rank) : group_(std::move(group)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return group_->size; }
  Status AllGather(const float* part, int64_t rows, int64_t cols, float* out) override {
    ThreadGroup& g = *group_;
    g.parts[rank_] = part;
    g.sync.arrive_and_wait();  // every part is in place
    for (int64_t t = 0; t < rows; ++t)
      for (int r = 0; r < g.size; ++r)
        std::copy(g.parts[r] + t * cols, g.parts[r] + (t + 1) * cols, out + (t * g.size + r) * cols);
    g.sync.arrive_and_wait();  // every rank has read every part
    return Status::Ok();
  }

 private:
  std::shared_ptr<ThreadGroup> group_;
  const int rank_;
};

}  // namespace

std::vector<std::unique_ptr<Collective>> MakeThreadCollectives(int size) {
  auto group = std::make_shared<ThreadGroup>(size);
  std::vector<std::unique_ptr<Collective>> out;
  for (int r = 0; r < size; ++r) out.push_back(std::make_unique<ThreadCollective>(group, r));
  return out;
}

}  // namespace radixserve::model
