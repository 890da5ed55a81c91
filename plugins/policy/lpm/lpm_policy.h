// `lpm`: longest cached prefix first, with in-batch prefix dedup
// (SCHEDULER_SPEC 2.1, 2.2). Keeps the current order above a queue-length
// cutoff (cost guard) and with a cache that does not share prefixes.
// Optional aging (aging_ms > 0, off by default as in SGLang): requests that have
// waited longer than aging_ms go first, oldest first, so that a cache-cold request
// is not starved by a stream of cache-hot ones.
// Holds scratch state: one instance per scheduler thread.
#pragma once

#include <memory>

#include "core/scheduler/in_batch_prefix_dedup.h"
#include "core/scheduler/params.h"
#include "core/scheduler/policy.h"

namespace radixserve::sched {

extern const RsParamSpec kLpmParams[];
extern const uint32_t kNumLpmParams;

class LpmPolicy final : public SchedulePolicy {
 public:
  LpmPolicy(int32_t fcfs_cutoff, int32_t check_threshold, int32_t deprioritize_threshold, int64_t aging_ms = 0)
      : fcfs_cutoff_(fcfs_cutoff), aging_s_(static_cast<double>(aging_ms) / 1000.0),
        dedup_(check_threshold, deprioritize_threshold) {}
  std::string_view name() const override { return "lpm"; }
  void Order(std::span<const RequestView> queue, const OrderContext& ctx, std::vector<int32_t>* order) override;
  std::string StatsJson() const override;
  bool matched_prefixes() const override { return matched_; }

 private:
  // Counters: passes ordered, passes kept in FCFS order (cutoff or no prefix sharing), requests
  // deprioritized by in-batch dedup.
  uint64_t orders_ = 0, fcfs_fallbacks_ = 0, deprioritized_total_ = 0, aged_total_ = 0;
  bool matched_ = false;  // the last pass matched the queue (no FCFS fallback)
  int32_t fcfs_cutoff_;
  double aging_s_;  // 0: off
  std::vector<uint8_t> aged_;
  InBatchPrefixDedup dedup_;
  std::vector<int32_t> match_lens_;
  std::vector<uint8_t> deprioritized_;
};

Result<std::unique_ptr<SchedulePolicy>> MakeLpmPolicy(const Params& params);

}  // namespace radixserve::sched
