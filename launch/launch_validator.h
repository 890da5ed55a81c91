// Checks a loaded LaunchDescription before anything starts: components exist,
// plugin names are known, node and process names are well-formed and unique
// (per namespace), namespaces and remaps are valid topic parts. Every error
// points at the file, line and column of the offending value.
// Stateless; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "launch/launch_description.h"

namespace radixserve::launch {

// The built-in node components: "worker", "scheduler", "detokenizer", "api", and "bridge" where
// Cyclone DDS was there at build time.
const std::vector<std::string>& BuiltinComponents();
bool IsBuiltinComponent(const std::string& component);

struct ValidatorOptions {
  // Known plugin names of each kind, as the plugin host reports them. The built-in plugins by
  // default; a built-in component's "policy" / "cache" parameter must name one of them.
  std::vector<std::string> policies = {"fcfs", "lpm", "dfs-weight", "lof", "random", "priority"};
  std::vector<std::string> caches = {"radix", "chunk"};
};

// Appends every problem found to *errors; true when there was none.
bool ValidateLaunch(const LaunchDescription& desc, const ValidatorOptions& options, std::vector<LaunchError>* errors);

}  // namespace radixserve::launch
