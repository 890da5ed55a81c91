#include "core/router/routing_policy.h"

#include <algorithm>
#include <limits>

namespace radixserve::router {
namespace {

int32_t ShortestHealthy(std::span<const GroupLoad> groups) {
  int32_t best = -1;
  for (int32_t g = 0; g < static_cast<int32_t>(groups.size()); ++g)
    if (groups[g].healthy && (best < 0 || groups[g].load() < groups[best].load())) best = g;
  return best;
}

class RoundRobin final : public RoutingPolicy {
 public:
  std::string_view name() const override { return "round-robin"; }
  int32_t Route(const RouteKey&, std::span<const GroupLoad> groups, const GroupCacheView&) override {
    const int32_t n = static_cast<int32_t>(groups.size());
    for (int32_t k = 0; k < n; ++k) {
      const int32_t g = static_cast<int32_t>((next_ + k) % n);
      if (groups[g].healthy) {
        next_ = g + 1;
        return g;
      }
    }
    return -1;
  }

 private:
  uint64_t next_ = 0;
};

class ShortestQueue final : public RoutingPolicy {
 public:
  std::string_view name() const override { return "shortest-queue"; }
  int32_t Route(const RouteKey&, std::span<const GroupLoad> groups, const GroupCacheView&) override {
    return ShortestHealthy(groups);
  }
};

class CacheAware final : public RoutingPolicy {
 public:
  explicit CacheAware(const CacheAwareOptions& o) : o_(o) {}
  std::string_view name() const override { return "cache-aware"; }
  int32_t Route(const RouteKey& key, std::span<const GroupLoad> groups, const GroupCacheView& view) override {
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = -1;
    for (const GroupLoad& g : groups)
      if (g.healthy) lo = std::min(lo, g.load()), hi = std::max(hi, g.load());
    if (hi < 0) return -1;
    if (hi - lo > o_.balance_abs && static_cast<double>(hi) > o_.balance_rel * static_cast<double>(lo)) {
      ++balanced_;
      return ShortestHealthy(groups);
    }
    match_.assign(groups.size(), 0);
    view.Match(key.cache_salt, key.tokens, match_);
    for (size_t g = 0; g < groups.size(); ++g) match_[g] = std::max(match_[g], groups[g].in_flight_match);
    int32_t best = -1;
    for (int32_t g = 0; g < static_cast<int32_t>(groups.size()); ++g)
      if (groups[g].healthy && (best < 0 || match_[g] > match_[best] ||
                                (match_[g] == match_[best] && groups[g].load() < groups[best].load())))
        best = g;
    const double rate = key.tokens.empty() ? 0.0 : static_cast<double>(match_[best]) / double(key.tokens.size());
    if (rate > o_.cache_threshold) {
      ++hits_;
      return best;
    }
    // No group holds enough of it: the one with the most room, so that caches fill evenly.
    int32_t roomiest = -1;
    for (int32_t g = 0; g < static_cast<int32_t>(groups.size()); ++g)
      if (groups[g].healthy &&
          (roomiest < 0 || view.cached_tokens(g) < view.cached_tokens(roomiest) ||
           (view.cached_tokens(g) == view.cached_tokens(roomiest) && groups[g].load() < groups[roomiest].load())))
        roomiest = g;
    ++misses_;
    return roomiest;
  }
  std::string StatsJson() const override {
    return "{\"cache_routed\": " + std::to_string(hits_) + ", \"room_routed\": " + std::to_string(misses_) +
           ", \"load_routed\": " + std::to_string(balanced_) + "}";
  }

 private:
  CacheAwareOptions o_;
  std::vector<int32_t> match_;
  uint64_t hits_ = 0, misses_ = 0, balanced_ = 0;
};

}  // namespace

std::unique_ptr<RoutingPolicy> MakeRoundRobin() { return std::make_unique<RoundRobin>(); }
std::unique_ptr<RoutingPolicy> MakeShortestQueue() { return std::make_unique<ShortestQueue>(); }
std::unique_ptr<RoutingPolicy> MakeCacheAware(const CacheAwareOptions& o) { return std::make_unique<CacheAware>(o); }

const std::vector<std::string>& RoutingPolicyNames() {
  static const std::vector<std::string> kNames = {"round-robin", "shortest-queue", "cache-aware"};
  return kNames;
}

Result<std::unique_ptr<RoutingPolicy>> MakeRoutingPolicy(std::string_view name) {
  if (name == "round-robin") return MakeRoundRobin();
  if (name == "shortest-queue") return MakeShortestQueue();
  if (name == "cache-aware") return MakeCacheAware();
  std::string known;
  for (const auto& n : RoutingPolicyNames()) known += (known.empty() ? "" : ", ") + n;
  return Status::InvalidArgument("unknown routing policy '" + std::string(name) + "' (" + known + ")");
}

}  // namespace radixserve::router
