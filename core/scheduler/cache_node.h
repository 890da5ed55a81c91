// CacheNodeRef: the opaque handle to a node of a prefix cache (what MatchPrefix returns and a
// request's last_node keeps), apart from both so that neither header includes the other.
#pragma once

namespace radixserve::sched {

struct CacheNode;
using CacheNodeRef = CacheNode*;

}  // namespace radixserve::sched
