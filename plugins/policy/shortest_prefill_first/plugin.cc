// Plugin entry point of the `shortest-prefill-first` policy.
#include "core/scheduler/plugin_entry.h"
#include "plugins/policy/shortest_prefill_first/shortest_prefill_first_policy.h"

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_POLICY, radixserve::sched::SchedulePolicy, "shortest-prefill-first",
                         "least uncached prefill work first; caps a long prompt's chunk for shorter waiters",
                         radixserve::sched::kShortestPrefillFirstParams,
                         radixserve::sched::kNumShortestPrefillFirstParams,
                         radixserve::sched::MakeShortestPrefillFirstPolicy)
