#include "plugins/routing/cache_aware/cache_aware_policy.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace radixserve::router {
namespace {

const CacheAwareOptions kDefaults;

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

const std::string kThreshold = std::to_string(kDefaults.cache_threshold);
const std::string kBalanceAbs = std::to_string(kDefaults.balance_abs);
const std::string kBalanceRel = std::to_string(kDefaults.balance_rel);

}  // namespace

const RsParamSpec kCacheAwareParams[] = {
    {"cache_threshold", RS_PARAM_DOUBLE, kThreshold.c_str(), 0.0, 1.0,
     "route by cache when a group holds more than this share of the prompt"},
    {"balance_abs", RS_PARAM_INT, kBalanceAbs.c_str(), 0, 1e9,
     "loads are unbalanced (shortest queue wins) when max - min exceeds this"},
    {"balance_rel", RS_PARAM_DOUBLE, kBalanceRel.c_str(), 1.0, 1e9, "... and max exceeds this times min"},
};
const uint32_t kNumCacheAwareParams = sizeof(kCacheAwareParams) / sizeof(kCacheAwareParams[0]);

std::unique_ptr<RoutingPolicy> MakeCacheAware(const CacheAwareOptions& o) { return std::make_unique<CacheAware>(o); }

Result<std::unique_ptr<RoutingPolicy>> MakeCacheAwarePolicy(const sched::Params& params) {
  CacheAwareOptions o;
  o.cache_threshold = params.GetDouble("cache_threshold");
  o.balance_abs = params.GetInt("balance_abs");
  o.balance_rel = params.GetDouble("balance_rel");
  return MakeCacheAware(o);
}

}  // namespace radixserve::router
