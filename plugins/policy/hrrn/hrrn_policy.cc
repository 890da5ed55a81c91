#include "plugins/policy/hrrn/hrrn_policy.h"

#include <algorithm>
#include <limits>

namespace radixserve::sched {

const RsParamSpec kHrrnParams[] = {
    {"fcfs_fallback_queue_len", RS_PARAM_INT, "128", 0, 1e9, "keep queue order when more requests wait"},
    kInBatchCheckThresholdParam,
    kInBatchDeprioritizeThresholdParam,
};
const uint32_t kNumHrrnParams = sizeof(kHrrnParams) / sizeof(kHrrnParams[0]);


int64_t HrrnPolicy::Waited(RequestView r, int64_t processed) {
  return std::max<int64_t>(0, processed - r.arrival_processed_tokens());
}

void HrrnPolicy::Order(std::span<const RequestView> queue, const OrderContext& ctx, std::vector<int32_t>* order) {
  FcfsOrder(queue.size(), order);
  ++orders_;
  matched_ = ctx.cache.shares_prefixes() && static_cast<int32_t>(queue.size()) <= fcfs_cutoff_;
  if (!matched_) {
    ++fcfs_fallbacks_;
    return;
  }
  match_lens_.resize(queue.size());
  ratio_.resize(queue.size());
  for (size_t i = 0; i < queue.size(); ++i) match_lens_[i] = ctx.cache.PeekMatchLength(MatchKeyOf(queue[i]));
  dedup_.Compute(queue, match_lens_, &deprioritized_);
  for (size_t i = 0; i < queue.size(); ++i) {
    deprioritized_total_ += deprioritized_[i];
    ratio_[i] = deprioritized_[i] ? -std::numeric_limits<double>::infinity()
                                  : static_cast<double>(Waited(queue[i], ctx.processed_prefill_tokens)) /
                                        static_cast<double>(UncachedPrefillWork(queue[i], match_lens_[i]));
  }
  std::stable_sort(order->begin(), order->end(), [&](int32_t a, int32_t b) {
    if (ratio_[a] != ratio_[b]) return ratio_[a] > ratio_[b];
    return queue[a].arrival_seq() < queue[b].arrival_seq();
  });
}

std::string HrrnPolicy::StatsJson() const {
  return "{\"orders\": " + std::to_string(orders_) + ", \"fcfs_fallbacks\": " + std::to_string(fcfs_fallbacks_) +
         ", \"deprioritized\": " + std::to_string(deprioritized_total_) + "}";
}

Result<std::unique_ptr<SchedulePolicy>> MakeHrrnPolicy(const Params& p) {
  return std::unique_ptr<SchedulePolicy>(new HrrnPolicy(static_cast<int32_t>(p.GetInt("fcfs_fallback_queue_len")),
                                                        static_cast<int32_t>(p.GetInt("in_batch_check_threshold")),
                                                        static_cast<int32_t>(p.GetInt("in_batch_deprioritize_threshold"))));
}

}  // namespace radixserve::sched
