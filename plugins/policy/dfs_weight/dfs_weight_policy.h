// `dfs-weight`: orders requests by a DFS over the radix tree, heavier shared
// subtrees first (SCHEDULER_SPEC 2.3). FCFS with a cache that has no tree.
// As in SGLang, in-batch dedup does not change this order; with in_batch_dedup
// on, requests whose prefix an earlier waiting request provides move behind the
// others (radixserve's former order, kept as an option).
// Holds scratch state: one instance per scheduler thread.
#pragma once

#include <memory>

#include "core/scheduler/in_batch_prefix_dedup.h"
#include "core/scheduler/params.h"
#include "core/scheduler/policy.h"

namespace radixserve::sched {

extern const RsParamSpec kDfsWeightParams[];
extern const uint32_t kNumDfsWeightParams;

class DfsWeightPolicy final : public SchedulePolicy {
 public:
  DfsWeightPolicy(int32_t check_threshold, int32_t deprioritize_threshold, bool in_batch_dedup = false)
      : in_batch_dedup_(in_batch_dedup), dedup_(check_threshold, deprioritize_threshold) {}
  std::string_view name() const override { return "dfs-weight"; }
  void Order(std::span<const RequestView> queue, const OrderContext& ctx, std::vector<int32_t>* order) override;
  bool matched_prefixes() const override { return matched_; }

 private:
  bool in_batch_dedup_;
  bool matched_ = false;
  InBatchPrefixDedup dedup_;
  std::vector<CacheNodeRef> nodes_;
  std::vector<int32_t> match_lens_;
  std::vector<uint8_t> deprioritized_;
};

Result<std::unique_ptr<SchedulePolicy>> MakeDfsWeightPolicy(const Params& params);

}  // namespace radixserve::sched
