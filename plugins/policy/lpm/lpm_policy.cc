#include "plugins/policy/lpm/lpm_policy.h"

#include <algorithm>
#include <climits>

namespace radixserve::sched {

const RsParamSpec kLpmParams[] = {
    {"fcfs_fallback_queue_len", RS_PARAM_INT, "128", 0, 1e9, "keep queue order when more requests wait"},
    kInBatchCheckThresholdParam,
    kInBatchDeprioritizeThresholdParam,
    {"aging_ms", RS_PARAM_INT, "0", 0, 1e9, "requests waiting longer go first, oldest first (anti-starvation); 0 off"},
};
const uint32_t kNumLpmParams = sizeof(kLpmParams) / sizeof(kLpmParams[0]);

void LpmPolicy::Order(std::span<const RequestView> queue, const OrderContext& ctx, std::vector<int32_t>* order) {
  const PrefixCache& cache = ctx.cache;
  FcfsOrder(queue.size(), order);
  ++orders_;
  matched_ = cache.shares_prefixes() && static_cast<int32_t>(queue.size()) <= fcfs_cutoff_;
  if (!matched_) {
    ++fcfs_fallbacks_;
    return;
  }
  match_lens_.resize(queue.size());
  // At least one token is always recomputed, so the usable match stops one short (MatchKeyOf).
  for (size_t i = 0; i < queue.size(); ++i) match_lens_[i] = cache.PeekMatchLength(MatchKeyOf(queue[i]));
  dedup_.Compute(queue, match_lens_, &deprioritized_);
  for (uint8_t d : deprioritized_) deprioritized_total_ += d;
  aged_.assign(queue.size(), 0);
  if (aging_s_ > 0) {
    // The scheduler's clock, the one of wait_entry_time (tests age requests with a fake one).
    const double now = ctx.now_s;
    for (size_t i = 0; i < queue.size(); ++i) {
      aged_[i] = now - queue[i].wait_entry_time() > aging_s_;
      aged_total_ += aged_[i];
    }
  }
  std::stable_sort(order->begin(), order->end(), [&](int32_t a, int32_t b) {
    if (aged_[a] != aged_[b]) return aged_[a] > aged_[b];
    if (aged_[a]) return queue[a].arrival_seq() < queue[b].arrival_seq();
    int64_t ka = deprioritized_[a] ? INT64_MAX : -static_cast<int64_t>(match_lens_[a]);
    int64_t kb = deprioritized_[b] ? INT64_MAX : -static_cast<int64_t>(match_lens_[b]);
    return ka < kb;
  });
}

std::string LpmPolicy::StatsJson() const {
  return "{\"orders\": " + std::to_string(orders_) + ", \"fcfs_fallbacks\": " + std::to_string(fcfs_fallbacks_) +
         ", \"deprioritized\": " + std::to_string(deprioritized_total_) + ", \"aged\": " + std::to_string(aged_total_) +
         "}";
}

Result<std::unique_ptr<SchedulePolicy>> MakeLpmPolicy(const Params& p) {
  return std::unique_ptr<SchedulePolicy>(new LpmPolicy(static_cast<int32_t>(p.GetInt("fcfs_fallback_queue_len")),
                                                       static_cast<int32_t>(p.GetInt("in_batch_check_threshold")),
                                                       static_cast<int32_t>(p.GetInt("in_batch_deprioritize_threshold")),
                                                       p.GetInt("aging_ms")));
}

}  // namespace radixserve::sched
