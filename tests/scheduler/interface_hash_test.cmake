# The plugin interface hash, as a specification (run by ctest: cmake -DSOURCE=<tree> -DGENERATED=<the
# generated hash header> -DWORK=<scratch dir> -P interface_hash_test.cmake):
#  - it is this build's: the generated header carries the hash of each kind's include closure;
#  - the closure is complete: headers a policy sees through its includes count, not a hand-kept list;
#  - a policy sees requests through RequestView only: the scheduler's Req is not in its closure;
#  - a comment or a reflowed line changes nothing; a changed declaration changes the kinds that see it.
cmake_minimum_required(VERSION 3.20)
include(${SOURCE}/cmake/interface_hash.cmake)

# expect(<condition as if() takes it> <what it shows>)
macro(expect cond what)
  cmake_language(EVAL CODE "if(NOT (${cond}))\n message(FATAL_ERROR \"FAILED: ${what}\")\nendif()")
  message(STATUS "ok: ${what}")
endmacro()

set(policy_roots core/scheduler/policy.h core/scheduler/plugin_entry.h)
set(cache_roots core/scheduler/prefix_cache.h core/scheduler/plugin_entry.h)
set(routing_roots core/router/routing_policy.h core/scheduler/plugin_entry.h)

# 1. The build's hashes are the closures' hashes.
file(READ ${GENERATED} generated)
radixserve_interface_hash(policy ${SOURCE} ${policy_roots})
string(FIND "${generated}" "RADIXSERVE_PLUGIN_INTERFACE_HASH_POLICY 0x${policy}ull" at)
expect("NOT at EQUAL -1" "the generated policy hash is the hash of the policy closure (${policy})")

# 2. The closure follows includes.
radixserve_interface_closure(closure ${SOURCE} ${policy_roots})
expect("\"core/scheduler/cache_node.h\" IN_LIST closure"
       "a policy's closure reaches core/scheduler/cache_node.h through prefix_cache.h")
expect("\"core/scheduler/request_view.h\" IN_LIST closure" "a policy's closure holds the request view")
expect("NOT \"core/scheduler/req.h\" IN_LIST closure" "a policy's closure does not hold the scheduler's Req")
radixserve_interface_closure(cclosure ${SOURCE} ${cache_roots})
expect("NOT \"core/scheduler/req.h\" IN_LIST cclosure" "nor does a cache's (a cache never touches a request)")
radixserve_interface_closure(rclosure ${SOURCE} ${routing_roots})
expect("\"core/router/token_trie.h\" IN_LIST rclosure" "a routing plugin's closure reaches core/router/token_trie.h")

# 3. Edits on a private copy of the tree.
file(REMOVE_RECURSE ${WORK})
foreach(h ${closure} ${rclosure})
  configure_file(${SOURCE}/${h} ${WORK}/${h} COPYONLY)
endforeach()
radixserve_interface_hash(copy ${WORK} ${policy_roots})
expect("copy STREQUAL policy" "a copy of the headers hashes the same")

file(READ ${WORK}/core/scheduler/request_view.h text)
string(REPLACE "class RequestView {" "// A comment added above.\n/* and a block\n   comment */\nclass   RequestView\n{"
       edited "${text}")
expect("NOT edited STREQUAL text" "the comment edit applies")
file(WRITE ${WORK}/core/scheduler/request_view.h "${edited}")
radixserve_interface_hash(commented ${WORK} ${policy_roots})
expect("commented STREQUAL policy" "comments and layout do not change the hash")

string(REPLACE "class RequestView {" "class RequestView {\n public:\n  int added_accessor() const;" changed "${text}")
file(WRITE ${WORK}/core/scheduler/request_view.h "${changed}")
radixserve_interface_hash(declared ${WORK} ${policy_roots})
expect("NOT declared STREQUAL policy" "a changed declaration changes the policy hash")

file(WRITE ${WORK}/core/scheduler/request_view.h "${text}")
radixserve_interface_hash(routing ${WORK} ${routing_roots})
file(APPEND ${WORK}/core/router/token_trie.h "\nstruct AddedForTheTest {};\n")
radixserve_interface_hash(routing2 ${WORK} ${routing_roots})
radixserve_interface_hash(policy2 ${WORK} ${policy_roots})
expect("NOT routing2 STREQUAL routing" "a routing header's change changes the routing hash")
expect("policy2 STREQUAL policy" "and not the policy hash (policies never see it)")
file(REMOVE_RECURSE ${WORK})
