// Plugin entry point of the `fcfs` policy.
#include "core/scheduler/plugin_entry.h"
#include "plugins/policy/fcfs/fcfs_policy.h"

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_POLICY, radixserve::sched::SchedulePolicy, "fcfs", "first come, first served",
                         nullptr, 0, radixserve::sched::MakeFcfsPolicy)
