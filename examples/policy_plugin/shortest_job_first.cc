// shortest-job-first: an example policy plugin built outside the engine's tree
// against its installed SDK. It admits the waiting request with the least work
// first, work being its output budget (max_new_tokens) plus prompt_weight times
// its prompt tokens not yet cached; ties keep arrival order. A policy only
// orders the queue: the scheduler does the admitting, and falls back to FCFS
// if Order() throws or returns something that is not a permutation.
#include <algorithm>
#include <memory>
#include <numeric>
#include <string_view>
#include <vector>

#include "core/scheduler/plugin_entry.h"
#include "core/scheduler/policy.h"

namespace example {

using radixserve::Result;
using radixserve::sched::OrderContext;
using radixserve::sched::Params;
using radixserve::sched::RequestView;
using radixserve::sched::SchedulePolicy;

class ShortestJobFirst final : public SchedulePolicy {
 public:
  explicit ShortestJobFirst(double prompt_weight) : prompt_weight_(prompt_weight) {}
  std::string_view name() const override { return "shortest-job-first"; }

  // A policy reads requests through RequestView (request_view.h): the few facts an ordering needs.
  void Order(std::span<const RequestView> queue, const OrderContext& ctx, std::vector<int32_t>* order) override {
    work_.resize(queue.size());
    for (size_t i = 0; i < queue.size(); ++i) {
      const RequestView r = queue[i];
      // A dry-run match: how much of the prompt the cache already holds (nothing is locked).
      const int32_t cached = ctx.cache.shares_prefixes() ? ctx.cache.PeekMatchLength(radixserve::sched::MatchKeyOf(r)) : 0;
      work_[i] = r.max_new_tokens() + prompt_weight_ * radixserve::sched::UncachedPrefillWork(r, cached);
    }
    order->resize(queue.size());
    std::iota(order->begin(), order->end(), 0);
    std::stable_sort(order->begin(), order->end(), [&](int32_t a, int32_t b) { return work_[a] < work_[b]; });
  }

 private:
  const double prompt_weight_;
  std::vector<double> work_;  // reused: Order runs every iteration
};

Result<std::unique_ptr<SchedulePolicy>> Make(const Params& params) {
  return std::unique_ptr<SchedulePolicy>(new ShortestJobFirst(params.GetDouble("prompt_weight")));
}

const RsParamSpec kParams[] = {
    {"prompt_weight", RS_PARAM_DOUBLE, "0.0", 0.0, 1000.0, "work per uncached prompt token, in output tokens"},
};

}  // namespace example

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_POLICY, radixserve::sched::SchedulePolicy, "shortest-job-first",
                         "least work first: output budget plus weighted uncached prompt (an out-of-tree example)",
                         example::kParams, 1, example::Make)
