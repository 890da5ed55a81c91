// Plugin entry point of the `dfs-weight` policy.
#include "core/scheduler/plugin_entry.h"
#include "plugins/policy/dfs_weight/dfs_weight_policy.h"

RADIXSERVE_DEFINE_PLUGIN(RS_PLUGIN_POLICY, radixserve::sched::SchedulePolicy, "dfs-weight",
                         "DFS over the prefix tree, heaviest subtrees first", radixserve::sched::kDfsWeightParams,
                         radixserve::sched::kNumDfsWeightParams, radixserve::sched::MakeDfsWeightPolicy)
