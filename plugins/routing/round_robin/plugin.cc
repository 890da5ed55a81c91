// Plugin entry point of the `round-robin` routing policy.
#include "core/scheduler/plugin_entry.h"
#include "plugins/routing/round_robin/round_robin_policy.h"

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_ROUTING, radixserve::router::RoutingPolicy, "round-robin",
                         "data-parallel groups in turn", nullptr, 0, radixserve::router::MakeRoundRobinPolicy)
