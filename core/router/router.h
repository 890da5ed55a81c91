// Router: the data-parallel front of the pipeline (issue #16). It picks the
// group (a scheduler with its own prefix cache and workers) for each request
// with a RoutingPolicy, counts each group's requests in flight (the load the
// policies balance), and keeps the GroupCacheView current from the groups'
// cache event messages: a message lost (a gap in a group's numbering) or a
// restarted scheduler (a new epoch, or ForgetGroup) empties that group's view,
// which then under-states what the group holds and never over-states it.
// Thread-safe: one mutex; Route runs on HTTP threads, events arrive on the
// receive thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/router/group_cache_view.h"
#include "core/router/in_flight_prompts.h"
#include "core/router/routing_policy.h"

namespace radixserve::router {

class Router {
 public:
  Router(std::vector<std::string> group_names, RoutingPolicyPtr policy);

  int32_t num_groups() const { return static_cast<int32_t>(names_.size()); }
  const std::string& group_name(int32_t g) const { return names_[static_cast<size_t>(g)]; }
  struct Ticket {
    int32_t group = -1;  // -1: no group is healthy
    uint64_t id = 0;     // for Finished
  };
  // The group for `key` among the healthy ones (healthy[g]), counted in flight there until Finished.
  Ticket Route(const RouteKey& key, std::span<const bool> healthy);
  // A routed request ended (any way).
  void Finished(const Ticket& ticket);
  // Replaces the policy; the next Route uses it. Returns the old one's name.
  std::string SwapPolicy(RoutingPolicyPtr policy);
  std::string policy_name() const;

  // Starts applying message `seq` of scheduler instance `epoch` of `group`. False (and the
  // group's view emptied) when messages of this instance were lost before it.
  bool BeginEvents(int32_t group, uint64_t epoch, uint64_t seq);
  void ApplyEvent(int32_t group, const sched::CacheEvent& event);
  // The group's scheduler restarted: its cache is empty.
  void ForgetGroup(int32_t group);

  // Tokens of `tokens` (namespace `salt`) each group is known to cache.
  std::vector<int32_t> MatchLengths(std::string_view salt, std::span<const int32_t> tokens) const;
  // {"policy", "policy_stats", "groups": {name: {routed, in_flight, cached_tokens, lost_event_messages}}}
  std::string StatsJson() const;

 private:
  struct Routed {
    int32_t group;
    std::string salt;
    std::vector<int32_t> tokens;
  };
  struct GroupState {
    int64_t in_flight = 0;
    uint64_t routed = 0;
    uint64_t epoch = 0, seq = 0;
    uint64_t gaps = 0;
  };
  const std::vector<std::string> names_;
  mutable std::mutex mu_;
  RoutingPolicyPtr policy_;
  GroupCacheView view_;
  InFlightPrompts in_flight_;
  std::unordered_map<uint64_t, Routed> routed_;  // by ticket id
  uint64_t next_ticket_ = 1;
  std::vector<GroupState> state_;
  std::vector<GroupLoad> loads_;  // scratch for Route
};

}  // namespace radixserve::router
