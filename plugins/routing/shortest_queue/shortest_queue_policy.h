// The `shortest-queue` routing policy: the healthy group with the fewest requests in flight.
#pragma once

#include <memory>

#include "core/router/routing_policy.h"
#include "core/scheduler/params.h"

namespace radixserve::router {

std::unique_ptr<RoutingPolicy> MakeShortestQueue();
Result<std::unique_ptr<RoutingPolicy>> MakeShortestQueuePolicy(const sched::Params& params);

}  // namespace radixserve::router
