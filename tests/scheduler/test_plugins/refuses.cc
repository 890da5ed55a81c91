// A policy plugin whose configure step fails unless mode=ok.
#include <cstdio>
#include <cstring>

#include "core/scheduler/params.h"
#include "core/scheduler/plugin_abi.h"
#include "plugins/policy/fcfs/fcfs_policy.h"

namespace {
const RsParamSpec kParams[] = {{"mode", RS_PARAM_STRING, "broken", 0, 0, "ok or broken"}};
void* Create(const void* p, char* err, size_t len) {
  const auto& params = *static_cast<const radixserve::sched::Params*>(p);
  if (params.GetString("mode") != "ok") {
    std::snprintf(err, len, "mode '%s' is not supported", params.GetString("mode").c_str());
    return nullptr;
  }
  radixserve::sched::SchedulePolicy* policy = new radixserve::sched::FcfsPolicy();
  return policy;
}
void Destroy(void* o) { delete static_cast<radixserve::sched::SchedulePolicy*>(o); }
const RsPluginDescriptor kDesc = {RADIXSERVE_PLUGIN_ABI_VERSION, RS_PLUGIN_POLICY, RADIXSERVE_PLUGIN_INTERFACE_HASH_POLICY, "refuses", "test", kParams, 1,
                                  &Create, &Destroy};
}  // namespace

RADIXSERVE_PLUGIN_EXPORT const RsPluginDescriptor* radixserve_plugin_descriptor(void) { return &kDesc; }
