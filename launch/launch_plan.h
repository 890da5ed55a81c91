// LaunchPlan: the processes a launch starts, each with the exact argv of its
// `radixserve node` or `radixserve container` command, in start order.
//
// Start order (a rule, not an accident of file order): every node has a rank,
//   detokenizer, worker, custom components (.so paths)  → 0
//   scheduler                                           → 1
//   api                                                 → 2
// A process's rank is the highest rank of its nodes. Processes start by rank,
// ties in file order; nodes inside a container are ordered the same way. So
// the leaves of the pipeline are up before the scheduler, and the scheduler
// before the api node (whose /health waits for the others anyway). Stopping
// goes in the reverse order.
// Plain data and stateless functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/util/status.h"
#include "launch/launch_description.h"
#include "launch/launch_validator.h"

namespace radixserve::launch {

int StartRank(const std::string& component);

struct PlannedNode {
  std::string component;
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;  // key -> value text, file order
  // The value of parameter `key`, or `fallback`.
  std::string Param(const std::string& key, const std::string& fallback = "") const;
};

struct ProcessPlan {
  enum class Kind { kNode, kContainer };
  Kind kind = Kind::kNode;
  std::string name;          // unique label: "<name>", or "<ns>/<name>" outside the default namespace
  std::string ns;
  std::string process_name;  // iceoryx runtime name (--process-name)
  std::vector<PlannedNode> nodes;  // start order
  std::vector<std::string> argv;   // argv[0] is PlanOptions::binary
  bool respawn = false;
  double respawn_delay = 0.0;
  bool required = false;
  int rank = 0;
};

struct LaunchPlan {
  std::vector<ProcessPlan> processes;     // start order
  std::map<std::string, std::string> args;  // resolved launch arguments of the top-level file
  const ProcessPlan* Find(const std::string& name) const;
  // Every node of the plan with the component `component`, in start order.
  std::vector<const PlannedNode*> NodesOf(const std::string& component) const;
};

struct PlanOptions {
  std::string binary = "radixserve";        // argv[0]: the radixserve executable
  std::vector<std::string> component_dirs;  // passed as --component-dir to each process when set
  // `namespace:=` on the command line: every process's namespace is put under it ("default" becomes
  // it, "dp0" becomes "<it>.dp0"), and so its iceoryx runtime name, topics, label and the api
  // node's dp_groups entries; two pipelines with different roots share one RouDi. Empty: none.
  std::string root_namespace;
};

// Orders the processes and builds their argv. The description must have passed ValidateLaunch.
LaunchPlan BuildLaunchPlan(const LaunchDescription& desc, const PlanOptions& options);

struct LaunchOptions {
  ValidatorOptions validator;
  PlanOptions plan;
};

// Load + validate + plan: `args` are the command line's "name:=value" launch arguments. Any error
// fails the whole plan; the message lists every error as "file:line:column: message", one per line.
Result<LaunchPlan> PlanLaunch(const std::string& path, const std::vector<std::string>& args,
                              const LaunchOptions& options = {});

}  // namespace radixserve::launch
