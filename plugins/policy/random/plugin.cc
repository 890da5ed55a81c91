// Plugin entry point of the `random` policy.
#include "core/scheduler/plugin_entry.h"
#include "plugins/policy/random/random_policy.h"

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_POLICY, radixserve::sched::SchedulePolicy, "random", "seeded random order",
                         radixserve::sched::kRandomParams, 1, radixserve::sched::MakeRandomPolicy)
