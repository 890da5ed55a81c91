#include "plugins/policy/shortest_prefill_first/shortest_prefill_first_policy.h"

#include <algorithm>

#include "core/scheduler/paging.h"

namespace radixserve::sched {

const RsParamSpec kShortestPrefillFirstParams[] = {
    {"chunk_cap", RS_PARAM_BOOL, "true", 0, 0, "cap a long prompt's chunk to leave budget for shorter waiters"},
    kInBatchCheckThresholdParam,
    kInBatchDeprioritizeThresholdParam,
};
const uint32_t kNumShortestPrefillFirstParams =
    sizeof(kShortestPrefillFirstParams) / sizeof(kShortestPrefillFirstParams[0]);


void ShortestPrefillFirstPolicy::Order(std::span<const RequestView> queue, const OrderContext& ctx,
                                       std::vector<int32_t>* order) {
  FcfsOrder(queue.size(), order);
  ++orders_;
  matched_ = ctx.cache.shares_prefixes();
  match_lens_.assign(queue.size(), 0);
  if (matched_) {
    for (size_t i = 0; i < queue.size(); ++i) match_lens_[i] = ctx.cache.PeekMatchLength(MatchKeyOf(queue[i]));
    dedup_.Compute(queue, match_lens_, &deprioritized_);
  } else {
    deprioritized_.assign(queue.size(), 0);
  }
  for (uint8_t d : deprioritized_) deprioritized_total_ += d;
  std::stable_sort(order->begin(), order->end(), [&](int32_t a, int32_t b) {
    if (deprioritized_[a] != deprioritized_[b]) return deprioritized_[a] < deprioritized_[b];
    const int64_t wa = UncachedPrefillWork(queue[a], match_lens_[a]);
    const int64_t wb = UncachedPrefillWork(queue[b], match_lens_[b]);
    if (wa != wb) return wa < wb;
    const double ta = queue[a].wait_entry_time(), tb = queue[b].wait_entry_time();
    if (ta != tb) return ta < tb;
    return queue[a].arrival_seq() < queue[b].arrival_seq();
  });
}

int64_t ReserveChunkForShorterWaiters(std::span<const int64_t> waiter_work, int64_t remaining, int64_t budget,
                                      int64_t page) {
  if (budget < 2 * page) return -1;
  int64_t reserved = 0;
  for (int64_t w : waiter_work) {
    const int64_t charge = PageCeil(w, page);
    if (w >= remaining || reserved + charge > budget - page) break;  // the scan stops at the first misfit
    reserved += charge;
  }
  if (reserved == 0) return -1;
  return PageFloor(budget - reserved, page);
}

int64_t ShortestPrefillFirstPolicy::ChunkedReqLimit(RequestView chunked, std::span<const RequestView> queue,
                                                    const OrderContext& ctx, int64_t budget) const {
  if (!chunk_cap_) return -1;
  const int64_t page = ctx.page_size;
  const int64_t remaining = static_cast<int64_t>(chunked.seq_len()) - chunked.prefix_len();
  // Only the head of the queue can be reserved for (at most budget / page waiters).
  std::vector<int64_t>& work = work_scratch_;
  work.clear();
  for (const RequestView r : queue) {
    if (static_cast<int64_t>(work.size()) * page >= budget) break;
    const int32_t match = ctx.cache.shares_prefixes() ? ctx.cache.PeekMatchLength(MatchKeyOf(r)) : 0;
    work.push_back(UncachedPrefillWork(r, match));
  }
  const int64_t limit = ReserveChunkForShorterWaiters(work, remaining, budget, page);
  if (limit >= 0) ++chunk_limits_;
  return limit;
}

std::string ShortestPrefillFirstPolicy::StatsJson() const {
  return "{\"orders\": " + std::to_string(orders_) + ", \"deprioritized\": " + std::to_string(deprioritized_total_) +
         ", \"chunk_limits\": " + std::to_string(chunk_limits_) + "}";
}

Result<std::unique_ptr<SchedulePolicy>> MakeShortestPrefillFirstPolicy(const Params& p) {
  return std::unique_ptr<SchedulePolicy>(new ShortestPrefillFirstPolicy(
      p.GetBool("chunk_cap"), static_cast<int32_t>(p.GetInt("in_batch_check_threshold")),
      static_cast<int32_t>(p.GetInt("in_batch_deprioritize_threshold"))));
}

}  // namespace radixserve::sched
