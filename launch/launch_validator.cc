#include "launch/launch_validator.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "transport/topic.h"

namespace radixserve::launch {
namespace {

bool NameChars(const std::string& s, bool allow_dot) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || (allow_dot && c == '.')))
      return false;
  return true;
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

void CheckComponent(const NodeDescription& n, const ProcessDescription& p, std::vector<LaunchError>* errors) {
  if (IsBuiltinComponent(n.component)) return;
  const std::string& c = n.component;
  bool is_path = c.find('/') != std::string::npos;
  if (!is_path) {
    // The one optional built-in: say how to get it rather than that it does not exist.
    const std::string hint = c == "bridge" ? "; the DDS bridge is built when Cyclone DDS is installed "
                                             "(cyclonedds-dev, cyclonedds-tools: scripts/install-deps.sh)"
                                           : "";
    errors->push_back({n.component_at, "unknown component '" + c + "' (expected one of " +
                                           Join(BuiltinComponents()) + ", or a path to a component .so)" + hint});
    return;
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(c, ec)) {
    errors->push_back({n.component_at, "component library '" + c + "' does not exist"});
    return;
  }
  if (p.kind == ProcessDescription::Kind::kContainer && c.find(':') != std::string::npos)
    errors->push_back({n.component_at, "a component path inside a container must not contain ':' ('" + c + "')"});
}

void CheckPlugins(const NodeDescription& n, const ValidatorOptions& o, std::vector<LaunchError>* errors) {
  if (!IsBuiltinComponent(n.component)) return;  // a custom component's parameters mean what it says
  for (const auto& p : n.params) {
    const std::vector<std::string>* known = p.key == "policy" ? &o.policies : p.key == "cache" ? &o.caches : nullptr;
    if (!known) continue;
    if (std::find(known->begin(), known->end(), p.value) != known->end()) continue;
    errors->push_back({p.at, "unknown " + p.key + " plugin '" + p.value + "' (known: " + Join(*known) + ")"});
  }
}

}  // namespace

const std::vector<std::string>& BuiltinComponents() {
  static const std::vector<std::string> kNames = {"worker", "scheduler", "detokenizer", "api",
#ifdef RADIXSERVE_HAVE_BRIDGE
                                                   "bridge",
#endif
  };
  return kNames;
}

bool IsBuiltinComponent(const std::string& component) {
  const auto& b = BuiltinComponents();
  return std::find(b.begin(), b.end(), component) != b.end();
}

bool ValidateLaunch(const LaunchDescription& desc, const ValidatorOptions& options,
                    std::vector<LaunchError>* errors) {
  size_t before = errors->size();
  std::map<std::string, SourceLocation> node_names;     // "ns/name" of every node
  std::map<std::string, std::pair<SourceLocation, bool>> process_names;  // "ns/name" -> (where, container)
  for (const ProcessDescription& p : desc.processes) {
    const bool container = p.kind == ProcessDescription::Kind::kContainer;
    if (Status s = transport::ValidateTopic({p.ns, "x"}); !s.ok())
      errors->push_back({p.ns_at, "namespace '" + p.ns + "': " + s.message()});
    if (container && !NameChars(p.name, false))
      errors->push_back({p.name_at, "container name '" + p.name + "' may only hold letters, digits, '_' and '-'"});
    std::string pkey = p.ns + "/" + p.name;
    // Two single-node processes with one name are reported below as duplicate node names.
    if (auto [it, fresh] = process_names.emplace(pkey, std::make_pair(p.name_at, container));
        !fresh && (container || it->second.second))
      errors->push_back({p.name_at, "process name '" + p.name + "' in namespace '" + p.ns +
                                        "' is already used at " + it->second.first.ToString()});
    transport::TopicRemap remap;
    for (const RemapEntry& r : p.remaps)
      if (Status s = remap.Add(r.from, r.to); !s.ok()) errors->push_back({r.at, "remap: " + s.message()});
    for (const NodeDescription& n : p.nodes) {
      // Container parameters are addressed as "<node>.<key>", so a node name holds no '.'.
      if (!NameChars(n.name, false))
        errors->push_back({n.name_at, "node name '" + n.name + "' may only hold letters, digits, '_' and '-'"});
      std::string key = p.ns + "/" + n.name;
      if (auto [it, fresh] = node_names.emplace(key, n.name_at); !fresh)
        errors->push_back({n.name_at, "duplicate node name '" + n.name + "' in namespace '" + p.ns +
                                          "' (first defined at " + it->second.ToString() + ")"});
      CheckComponent(n, p, errors);
      CheckPlugins(n, options, errors);
    }
  }
  return errors->size() == before;
}

}  // namespace radixserve::launch
