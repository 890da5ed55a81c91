// Plugin entry point of the `shortest-queue` routing policy.
#include "core/scheduler/plugin_entry.h"
#include "plugins/routing/shortest_queue/shortest_queue_policy.h"

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_ROUTING, radixserve::router::RoutingPolicy, "shortest-queue",
                         "the data-parallel group with the fewest requests in flight", nullptr, 0,
                         radixserve::router::MakeShortestQueuePolicy)
