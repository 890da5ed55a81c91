// `hrrn`: highest response ratio next (SCHEDULER_SPEC 13.1). A request's
// ratio is the prefill work the engine did since it arrived over the prefill
// work it still needs (its uncached tokens): cache-hot and short requests go
// early, and a cold long one rises steadily until it runs, so none starves
// the way LPM can. With in-batch prefix dedup, and the queue kept in its
// current order above a queue-length cutoff or with a cache that does not
// share prefixes, as SGLang does.
// Departures from SGLang, decided where the spec leaves a choice:
//  - the uncached work counts the output too (max(1, tokens - match)): a
//    retracted request recomputes its output, and no request jumps the queue
//    with an infinite ratio;
//  - equal ratios go in arrival order, not by request-id string, so a burst
//    that arrives at one counter value is served FCFS;
//  - a retracted or preempted request keeps its arrival snapshot (its age).
// Holds scratch state: one instance per scheduler thread.
#pragma once

#include <memory>

#include "core/scheduler/in_batch_prefix_dedup.h"
#include "core/scheduler/params.h"
#include "core/scheduler/policy.h"

namespace radixserve::sched {

extern const RsParamSpec kHrrnParams[];
extern const uint32_t kNumHrrnParams;

class HrrnPolicy final : public SchedulePolicy {
 public:
  HrrnPolicy(int32_t fcfs_cutoff, int32_t check_threshold, int32_t deprioritize_threshold)
      : fcfs_cutoff_(fcfs_cutoff), dedup_(check_threshold, deprioritize_threshold) {}
  std::string_view name() const override { return "hrrn"; }
  void Order(std::span<const RequestView> queue, const OrderContext& ctx, std::vector<int32_t>* order) override;
  bool matched_prefixes() const override { return matched_; }
  std::string StatsJson() const override;

  // The ratio's numerator: prefill tokens launched since the request arrived (its denominator is
  // UncachedPrefillWork).
  static int64_t Waited(RequestView r, int64_t processed_prefill_tokens);

 private:
  uint64_t orders_ = 0, fcfs_fallbacks_ = 0, deprioritized_total_ = 0;
  bool matched_ = false;
  int32_t fcfs_cutoff_;
  InBatchPrefixDedup dedup_;
  std::vector<int32_t> match_lens_;
  std::vector<uint8_t> deprioritized_;
  std::vector<double> ratio_;
};

Result<std::unique_ptr<SchedulePolicy>> MakeHrrnPolicy(const Params& params);

}  // namespace radixserve::sched
