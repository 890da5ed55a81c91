// NodeHealth: what the api node knows of the pipeline's nodes, from their
// node_status messages: each node's state, readiness and when it was last
// heard. /health is ready while one group has every required node ready and
// heard within kFresh. A scheduler or detokenizer that restarts or falls
// silent has lost the requests in flight in its group: Update and TakeSilent
// say which, and the caller fails those requests.
//
// Thread-safe: mu_ guards nodes_. Configure runs before any other call (the
// group names and required nodes are not changed afterwards).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "transport/messages.h"

namespace radixserve::nodes {

class NodeHealth {
 public:
  static constexpr std::chrono::seconds kFresh{3};
  using Clock = std::chrono::steady_clock;

  // `group_ns`: each group's namespace; with data parallelism nodes are named "ns/name".
  void Configure(std::vector<std::string> group_ns, bool data_parallel, std::vector<std::string> required);
  // How a node of a group is named: "name", or "ns/name" with data parallelism.
  std::string Key(int32_t group, const std::string& name) const;
  // Every required node of the group is ready and fresh.
  bool GroupReady(int32_t group, Clock::time_point now) const;
  bool AnyGroupReady() const;
  // ready[g] for each group g (ready.size() groups).
  void ReadyGroups(std::span<bool> ready) const;
  // Records one status message of `group`; the key of the scheduler or detokenizer node it shows
  // restarted (a new pid), else "".
  std::string Update(int32_t group, const transport::NodeStatusMsg& m);
  // Scheduler and detokenizer nodes not heard from within kFresh (key, group), each reported once.
  std::vector<std::pair<std::string, int32_t>> TakeSilent();
  // {key: {"state", "ready"}}; `detailed` adds "pid" and "last_seen_s".
  nlohmann::json Json(bool detailed) const;

 private:
  struct NodeSeen {
    bool ready = false;
    std::string state;
    std::string component;
    int32_t pid = 0;
    int32_t group = 0;
    Clock::time_point when;
  };
  bool GroupReadyLocked(int32_t group, Clock::time_point now) const;

  std::vector<std::string> group_ns_;
  bool data_parallel_ = false;
  std::vector<std::string> required_;
  mutable std::mutex mu_;
  std::map<std::string, NodeSeen> nodes_;
};

}  // namespace radixserve::nodes
