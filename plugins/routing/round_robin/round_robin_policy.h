// The `round-robin` routing policy: healthy groups in turn.
#pragma once

#include <memory>

#include "core/router/routing_policy.h"
#include "core/scheduler/params.h"

namespace radixserve::router {

std::unique_ptr<RoutingPolicy> MakeRoundRobin();
Result<std::unique_ptr<RoutingPolicy>> MakeRoundRobinPolicy(const sched::Params& params);

}  // namespace radixserve::router
