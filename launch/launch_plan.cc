#include "launch/launch_plan.h"

#include <algorithm>

#include "launch/launch_loader.h"

namespace radixserve::launch {

int StartRank(const std::string& component) {
  if (component == "scheduler") return 1;
  if (component == "api") return 2;
  return 0;  // detokenizer, worker, custom components: nothing they need starts later
}

std::string PlannedNode::Param(const std::string& key, const std::string& fallback) const {
  for (auto it = params.rbegin(); it != params.rend(); ++it)
    if (it->first == key) return it->second;
  return fallback;
}

const ProcessPlan* LaunchPlan::Find(const std::string& name) const {
  for (const auto& p : processes)
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<const PlannedNode*> LaunchPlan::NodesOf(const std::string& component) const {
  std::vector<const PlannedNode*> out;
  for (const auto& p : processes)
    for (const auto& n : p.nodes)
      if (n.component == component) out.push_back(&n);
  return out;
}

namespace {

ProcessPlan PlanProcess(const ProcessDescription& d, const PlanOptions& options) {
  ProcessPlan p;
  p.kind = d.kind == ProcessDescription::Kind::kContainer ? ProcessPlan::Kind::kContainer : ProcessPlan::Kind::kNode;
  p.ns = options.root_namespace.empty() ? d.ns
         : d.ns == "default"              ? options.root_namespace
                                          : options.root_namespace + "." + d.ns;
  p.name = p.ns == "default" ? d.name : p.ns + "/" + d.name;
  p.process_name = p.ns == "default" ? "radixserve_" + d.name : "radixserve_" + p.ns + "_" + d.name;
  p.respawn = d.respawn;
  p.respawn_delay = d.respawn_delay;
  p.required = d.required;
  for (const NodeDescription& n : d.nodes) {
    PlannedNode pn{n.component, n.name, {}};
    for (const ParamEntry& e : n.params) {
      std::string value = e.value;
      if (!options.root_namespace.empty() && e.key == "dp_groups") {  // absolute namespaces: put them under the root
        std::string out;
        size_t start = 0;
        while (start <= value.size()) {
          size_t comma = value.find(',', start);
          if (comma == std::string::npos) comma = value.size();
          std::string g = value.substr(start, comma - start);
          if (!g.empty()) out += (out.empty() ? "" : ",") + options.root_namespace + "." + g;
          start = comma + 1;
        }
        value = out;
      }
      pn.params.emplace_back(e.key, value);
    }
    p.rank = std::max(p.rank, StartRank(n.component));
    p.nodes.push_back(std::move(pn));
  }
  std::stable_sort(p.nodes.begin(), p.nodes.end(), [](const PlannedNode& a, const PlannedNode& b) {
    return StartRank(a.component) < StartRank(b.component);
  });

  auto& a = p.argv;
  a.push_back(options.binary);
  if (p.kind == ProcessPlan::Kind::kNode) {
    const PlannedNode& n = p.nodes.front();
    a.insert(a.end(), {"node", n.component, "--name", n.name});
  } else {
    a.push_back("container");
    for (const PlannedNode& n : p.nodes) a.insert(a.end(), {"-n", n.component + ":" + n.name});
  }
  a.insert(a.end(), {"--namespace", p.ns, "--process-name", p.process_name});
  for (const PlannedNode& n : p.nodes)
    for (const auto& [k, v] : n.params)
      a.insert(a.end(), {"-p", (p.kind == ProcessPlan::Kind::kNode ? k : n.name + "." + k) + ":=" + v});
  for (const RemapEntry& r : d.remaps) a.insert(a.end(), {"-r", r.from + ":=" + r.to});
  for (const std::string& dir : options.component_dirs) a.insert(a.end(), {"--component-dir", dir});
  return p;
}

}  // namespace

LaunchPlan BuildLaunchPlan(const LaunchDescription& desc, const PlanOptions& options) {
  LaunchPlan plan;
  plan.args = desc.args;
  for (const ProcessDescription& d : desc.processes) plan.processes.push_back(PlanProcess(d, options));
  std::stable_sort(plan.processes.begin(), plan.processes.end(),
                   [](const ProcessPlan& a, const ProcessPlan& b) { return a.rank < b.rank; });
  return plan;
}

Result<LaunchPlan> PlanLaunch(const std::string& path, const std::vector<std::string>& args,
                              const LaunchOptions& options) {
  RS_ASSIGN_OR_RETURN(ProvidedArgs provided, ParseCommandLineArgs(args));
  LaunchLoader loader;
  std::vector<LaunchError> errors;
  if (!loader.Load(path, provided)) errors = loader.errors();
  // Validate what did load, so one run reports format and semantic errors together.
  ValidateLaunch(loader.description(), options.validator, &errors);
  if (!errors.empty()) return Status::InvalidArgument(JoinErrors(errors));
  return BuildLaunchPlan(loader.description(), options.plan);
}

}  // namespace radixserve::launch
