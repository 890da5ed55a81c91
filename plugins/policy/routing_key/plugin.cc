// Plugin entry point of the `routing-key` policy.
#include "core/scheduler/plugin_entry.h"
#include "plugins/policy/routing_key/routing_key_policy.h"

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_POLICY, radixserve::sched::SchedulePolicy, "routing-key",
                         "requests whose routing key is running go first", nullptr, 0,
                         radixserve::sched::MakeRoutingKeyPolicy)
