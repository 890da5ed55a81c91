#include "nodes/api/node_health.h"

#include <nlohmann/json.hpp>

#include "nodes/node.h"

namespace radixserve::nodes {

void NodeHealth::Configure(std::vector<std::string> group_ns, bool data_parallel, std::vector<std::string> required) {
  group_ns_ = std::move(group_ns);
  data_parallel_ = data_parallel;
  required_ = std::move(required);
  std::lock_guard<std::mutex> l(mu_);
  nodes_.clear();
}

std::string NodeHealth::Key(int32_t group, const std::string& name) const {
  return data_parallel_ ? group_ns_[static_cast<size_t>(group)] + "/" + name : name;
}

bool NodeHealth::GroupReadyLocked(int32_t group, Clock::time_point now) const {
  for (const auto& name : required_) {
    auto it = nodes_.find(Key(group, name));
    if (it == nodes_.end() || !it->second.ready || now - it->second.when > kFresh) return false;
  }
  return true;
}

bool NodeHealth::GroupReady(int32_t group, Clock::time_point now) const {
  std::lock_guard<std::mutex> l(mu_);
  return GroupReadyLocked(group, now);
}

bool NodeHealth::AnyGroupReady() const {
  std::lock_guard<std::mutex> l(mu_);
  const auto now = Clock::now();
  // With data parallelism one complete group can serve.
  for (int32_t g = 0; g < static_cast<int32_t>(group_ns_.size()); ++g)
    if (GroupReadyLocked(g, now)) return true;
  return false;
}

void NodeHealth::ReadyGroups(std::span<bool> ready) const {
  std::lock_guard<std::mutex> l(mu_);
  const auto now = Clock::now();
  for (size_t g = 0; g < ready.size(); ++g) ready[g] = GroupReadyLocked(static_cast<int32_t>(g), now);
}

std::string NodeHealth::Update(int32_t group, const transport::NodeStatusMsg& m) {
  std::lock_guard<std::mutex> l(mu_);
  NodeSeen& s = nodes_[Key(group, m.name)];
  s.group = group;
  const bool restarted = s.pid != 0 && s.pid != m.pid;
  s.ready = m.ready != 0;
  s.state = NodeStateName(static_cast<NodeState>(m.state));
  s.component = m.component;
  s.pid = m.pid;
  s.when = Clock::now();
  // Only these two hold requests in flight; a worker's restart is the scheduler's to handle.
  if (!restarted || (s.component != "scheduler" && s.component != "detokenizer")) return "";
  return Key(group, m.name);
}

std::vector<std::pair<std::string, int32_t>> NodeHealth::TakeSilent() {
  std::vector<std::pair<std::string, int32_t>> silent;
  std::lock_guard<std::mutex> l(mu_);
  const auto now = Clock::now();
  for (auto& [n, s] : nodes_) {
    if (s.component != "scheduler" && s.component != "detokenizer") continue;
    if (s.pid != 0 && now - s.when > kFresh) {
      silent.emplace_back(n, s.group);
      s.pid = 0;  // report once; a new process is a new start
    }
  }
  return silent;
}

nlohmann::json NodeHealth::Json(bool detailed) const {
  nlohmann::json nodes = nlohmann::json::object();
  const auto now = Clock::now();
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& [n, s] : nodes_) {
    nodes[n] = {{"state", s.state}, {"ready", s.ready}};
    if (detailed) {
      nodes[n]["pid"] = s.pid;
      nodes[n]["last_seen_s"] = std::chrono::duration<double>(now - s.when).count();
    }
  }
  return nodes;
}

}  // namespace radixserve::nodes
