// `shortest-prefill-first` (SPF, SCHEDULER_SPEC 13.2): the waiting request
// with the least prefill work left (tokens not in the cache) goes first,
// earlier enqueue on ties, in-batch dedup losers last; no queue-length
// fallback. While a long prompt is being chunk-prefilled, its next chunk is
// capped so that strictly shorter waiters that fit whole get the rest of the
// pass's chunk budget (at least one page stays with the long prompt).
// Departure from SGLang, decided: with a cache that does not share prefixes
// it orders by prompt length (nothing is cached) instead of refusing to run,
// since the cache can be swapped while serving.
// Holds scratch state: one instance per scheduler thread.
#pragma once

#include <memory>
#include <optional>

#include "core/scheduler/in_batch_prefix_dedup.h"
#include "core/scheduler/params.h"
#include "core/scheduler/policy.h"

namespace radixserve::sched {

extern const RsParamSpec kShortestPrefillFirstParams[];
extern const uint32_t kNumShortestPrefillFirstParams;

class ShortestPrefillFirstPolicy final : public SchedulePolicy {
 public:
  ShortestPrefillFirstPolicy(bool chunk_cap, int32_t check_threshold, int32_t deprioritize_threshold)
      : chunk_cap_(chunk_cap), dedup_(check_threshold, deprioritize_threshold) {}
  std::string_view name() const override { return "shortest-prefill-first"; }
  void Order(std::span<const RequestView> queue, const OrderContext& ctx, std::vector<int32_t>* order) override;
  bool matched_prefixes() const override { return matched_; }
  int64_t ChunkedReqLimit(RequestView chunked, std::span<const RequestView> queue, const OrderContext& ctx,
                          int64_t budget) const override;
  std::string StatsJson() const override;

 private:
  bool chunk_cap_;
  bool matched_ = false;
  uint64_t orders_ = 0, deprioritized_total_ = 0;
  mutable uint64_t chunk_limits_ = 0;
  InBatchPrefixDedup dedup_;
  std::vector<int32_t> match_lens_;
  std::vector<uint8_t> deprioritized_;
  mutable std::vector<int64_t> work_scratch_;
};

// The cap's arithmetic alone (SCHEDULER_SPEC 13.2): `waiter_work` in admission order, the
// continuation's remaining work, the chunk budget and the page size; -1 when nothing is reserved.
int64_t ReserveChunkForShorterWaiters(std::span<const int64_t> waiter_work, int64_t remaining, int64_t budget,
                                      int64_t page);

Result<std::unique_ptr<SchedulePolicy>> MakeShortestPrefillFirstPolicy(const Params& params);

}  // namespace radixserve::sched
