// Plugin entry point of the `priority` policy.
#include "core/scheduler/plugin_entry.h"
#include "plugins/policy/priority/priority_policy.h"

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_POLICY, radixserve::sched::SchedulePolicy, "priority",
                         "priority order with queue-cap eviction and preemption", radixserve::sched::kPriorityParams,
                         radixserve::sched::kNumPriorityParams, radixserve::sched::MakePriorityPolicy)
