// A policy plugin that misbehaves at run time, as its `mode` parameter says: "throw" (Order
// throws), "short" (one index missing), "range" (an index out of range), "dup" (an index
// twice), "ok" (FCFS). It faults only while the queue holds two or more requests, so that a
// lone request shows the fallback is not needed to make progress.
#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/scheduler/params.h"
#include "core/scheduler/plugin_abi.h"
#include "core/scheduler/policy.h"

namespace {

class BrokenOrderPolicy : public radixserve::sched::SchedulePolicy {
 public:
  explicit BrokenOrderPolicy(std::string mode) : mode_(std::move(mode)) {}
  std::string_view name() const override { return "brokenorder"; }
  void Order(std::span<const radixserve::sched::RequestView> queue, const radixserve::sched::OrderContext&,
             std::vector<int32_t>* order) override {
    radixserve::sched::FcfsOrder(queue.size(), order);
    if (queue.size() < 2) return;
    if (mode_ == "throw") throw std::runtime_error("broken on purpose");
    if (mode_ == "short") order->pop_back();
    if (mode_ == "range") (*order)[0] = static_cast<int32_t>(queue.size()) + 7;
    if (mode_ == "dup") (*order)[1] = (*order)[0];
  }

 private:
  std::string mode_;
};

const RsParamSpec kParams[] = {{"mode", RS_PARAM_STRING, "throw", 0, 0, "throw, short, range, dup or ok"}};
void* Create(const void* p, char* err, size_t len) {
  const auto& params = *static_cast<const radixserve::sched::Params*>(p);
  radixserve::sched::SchedulePolicy* policy = new BrokenOrderPolicy(params.GetString("mode"));
  return policy;
}
void Destroy(void* o) { delete static_cast<radixserve::sched::SchedulePolicy*>(o); }
const RsPluginDescriptor kDesc = {RADIXSERVE_PLUGIN_ABI_VERSION, RS_PLUGIN_POLICY, RADIXSERVE_PLUGIN_INTERFACE_HASH_POLICY, "brokenorder", "test", kParams, 1,
                                  &Create, &Destroy};

}  // namespace

RADIXSERVE_PLUGIN_EXPORT const RsPluginDescriptor* radixserve_plugin_descriptor(void) { return &kDesc; }
