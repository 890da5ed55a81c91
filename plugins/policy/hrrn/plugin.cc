// Plugin entry point of the `hrrn` policy.
#include "core/scheduler/plugin_entry.h"
#include "plugins/policy/hrrn/hrrn_policy.h"

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_POLICY, radixserve::sched::SchedulePolicy, "hrrn",
                         "highest response ratio next (prefill work waited / work left)",
                         radixserve::sched::kHrrnParams, radixserve::sched::kNumHrrnParams,
                         radixserve::sched::MakeHrrnPolicy)
