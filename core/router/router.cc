#include "core/router/router.h"

#include <nlohmann/json.hpp>

namespace radixserve::router {

Router::Router(std::vector<std::string> group_names, RoutingPolicyPtr policy)
    : names_(std::move(group_names)),
      policy_(std::move(policy)),
      view_(static_cast<int32_t>(names_.size())),
      in_flight_(static_cast<int32_t>(names_.size())),
      state_(names_.size()),
      loads_(names_.size()) {}

Router::Ticket Router::Route(const RouteKey& key, std::span<const bool> healthy) {
  std::lock_guard<std::mutex> l(mu_);
  for (size_t g = 0; g < loads_.size(); ++g) {
    loads_[g].running = state_[g].in_flight;
    loads_[g].healthy = g < healthy.size() && healthy[g];
    loads_[g].in_flight_match = in_flight_.Match(static_cast<int32_t>(g), key.cache_salt, key.tokens);
  }
  const int32_t g = policy_->Route(key, loads_, view_);
  if (g < 0 || g >= num_groups() || !loads_[static_cast<size_t>(g)].healthy) return {};
  ++state_[static_cast<size_t>(g)].in_flight;
  ++state_[static_cast<size_t>(g)].routed;
  in_flight_.Add(g, key.cache_salt, key.tokens);
  const uint64_t id = next_ticket_++;
  routed_.emplace(id, Routed{g, std::string(key.cache_salt), std::vector<int32_t>(key.tokens.begin(), key.tokens.end())});
  return {g, id};
}

void Router::Finished(const Ticket& ticket) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = routed_.find(ticket.id);
  if (it == routed_.end()) return;
  const Routed& r = it->second;
  in_flight_.Remove(r.group, r.salt, r.tokens);
  --state_[static_cast<size_t>(r.group)].in_flight;
  routed_.erase(it);
}

std::string Router::SwapPolicy(RoutingPolicyPtr policy) {
  std::lock_guard<std::mutex> l(mu_);
  std::string old(policy_->name());
  policy_ = std::move(policy);
  return old;
}

std::string Router::policy_name() const {
  std::lock_guard<std::mutex> l(mu_);
  return std::string(policy_->name());
}

bool Router::BeginEvents(int32_t group, uint64_t epoch, uint64_t seq) {
  if (group < 0 || group >= num_groups()) return false;
  std::lock_guard<std::mutex> l(mu_);
  GroupState& s = state_[static_cast<size_t>(group)];
  bool whole = true;
  if (epoch != s.epoch) {
    // A new scheduler instance starts with an empty cache; what the old one held is gone.
    if (s.epoch != 0) view_.Apply(group, {sched::CacheEvent::Kind::kCleared, {}, {}, 0});
    s.epoch = epoch;
  } else if (seq != s.seq + 1) {
    view_.Apply(group, {sched::CacheEvent::Kind::kCleared, {}, {}, 0});
    ++s.gaps;
    whole = false;
  }
  s.seq = seq;
  return whole;
}

void Router::ApplyEvent(int32_t group, const sched::CacheEvent& event) {
  std::lock_guard<std::mutex> l(mu_);
  view_.Apply(group, event);
}

void Router::ForgetGroup(int32_t group) {
  if (group < 0 || group >= num_groups()) return;
  std::lock_guard<std::mutex> l(mu_);
  view_.Apply(group, {sched::CacheEvent::Kind::kCleared, {}, {}, 0});
}

std::vector<int32_t> Router::MatchLengths(std::string_view salt, std::span<const int32_t> tokens) const {
  std::vector<int32_t> out(names_.size(), 0);
  std::lock_guard<std::mutex> l(mu_);
  view_.Match(salt, tokens, out);
  return out;
}

std::string Router::StatsJson() const {
  std::lock_guard<std::mutex> l(mu_);
  nlohmann::json j;
  j["policy"] = std::string(policy_->name());
  j["policy_stats"] = nlohmann::json::parse(policy_->StatsJson(), nullptr, false);
  nlohmann::json groups = nlohmann::json::object();
  for (size_t g = 0; g < names_.size(); ++g)
    groups[names_[g]] = {{"routed", state_[g].routed},
                         {"in_flight", state_[g].in_flight},
                         {"cached_tokens", view_.cached_tokens(static_cast<int32_t>(g))},
                         {"lost_event_messages", state_[g].gaps}};
  j["groups"] = groups;
  return j.dump();
}

}  // namespace radixserve::router
