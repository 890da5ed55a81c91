#include "plugins/policy/dfs_weight/dfs_weight_policy.h"

#include <algorithm>

namespace radixserve::sched {

const RsParamSpec kDfsWeightParams[] = {
    {"in_batch_dedup", RS_PARAM_BOOL, "false", 0, 0, "move requests whose prefix an earlier one provides to the back"},
    kInBatchCheckThresholdParam,
    kInBatchDeprioritizeThresholdParam,
};
const uint32_t kNumDfsWeightParams = sizeof(kDfsWeightParams) / sizeof(kDfsWeightParams[0]);

void DfsWeightPolicy::Order(std::span<const RequestView> queue, const OrderContext& ctx,
                            std::vector<int32_t>* order) {
  FcfsOrder(queue.size(), order);
  const PrefixCache& cache = ctx.cache;
  matched_ = cache.shares_prefixes();
  if (!matched_) return;
  nodes_.resize(queue.size());
  match_lens_.resize(queue.size());
  for (size_t i = 0; i < queue.size(); ++i) match_lens_[i] = cache.PeekMatch(MatchKeyOf(queue[i]), &nodes_[i]);
  if (!cache.DfsWeightOrder(nodes_, order)) {
    FcfsOrder(queue.size(), order);
    return;
  }
  if (!in_batch_dedup_) return;  // SGLang computes the dedup set here but never uses it
  dedup_.Compute(queue, match_lens_, &deprioritized_);
  std::stable_partition(order->begin(), order->end(), [&](int32_t i) { return !deprioritized_[i]; });
}

Result<std::unique_ptr<SchedulePolicy>> MakeDfsWeightPolicy(const Params& p) {
  return std::unique_ptr<SchedulePolicy>(
      new DfsWeightPolicy(static_cast<int32_t>(p.GetInt("in_batch_check_threshold")),
                          static_cast<int32_t>(p.GetInt("in_batch_deprioritize_threshold")),
                          p.GetBool("in_batch_dedup")));
}

}  // namespace radixserve::sched
