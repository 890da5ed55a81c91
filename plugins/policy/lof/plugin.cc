// Plugin entry point of the `lof` policy.
#include "core/scheduler/plugin_entry.h"
#include "plugins/policy/lof/lof_policy.h"

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_POLICY, radixserve::sched::SchedulePolicy, "lof", "longest output first", nullptr,
                         0, radixserve::sched::MakeLofPolicy)
