// Plugin entry point of the `lpm` policy.
#include "core/scheduler/plugin_entry.h"
#include "plugins/policy/lpm/lpm_policy.h"

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_POLICY, radixserve::sched::SchedulePolicy, "lpm", "longest cached prefix first",
                         radixserve::sched::kLpmParams, radixserve::sched::kNumLpmParams,
                         radixserve::sched::MakeLpmPolicy)
