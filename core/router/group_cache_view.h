// GroupCacheView: what a data-parallel router knows of each group's prefix
// cache, kept exact by the groups' own cache events (sched::CacheEvent:
// stored and removed key ranges, and clears) rather than guessed from where
// requests were sent. One token trie per cache namespace; each node carries
// the set of groups (a bit each, at most kMaxGroups) whose cache holds the
// path to it. A group's cache is prefix-closed, so along any key the set only
// shrinks, and one walk gives every group's match length.
// Not thread-safe: one thread applies events and answers matches.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/router/token_trie.h"
#include "core/scheduler/cache_event.h"

namespace radixserve::router {

class GroupCacheView {
 public:
  static constexpr int32_t kMaxGroups = 64;
  explicit GroupCacheView(int32_t num_groups);

  int32_t num_groups() const { return num_groups_; }
  // Applies one event of `group`'s cache.
  void Apply(int32_t group, const sched::CacheEvent& event);
  // Tokens of `tokens` each group's cache holds, in namespace ns (written to match_len[group]).
  void Match(std::string_view ns, std::span<const int32_t> tokens, std::span<int32_t> match_len) const;
  // Tokens held by group g, over all namespaces.
  int64_t cached_tokens(int32_t g) const { return cached_[static_cast<size_t>(g)]; }
  size_t num_nodes() const { return trie_.size(); }

 private:
  void Prune(int32_t node);  // drops node and its childless, groupless ancestors
  void Clear(int32_t group);

  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  int32_t num_groups_;
  TokenTrie<uint64_t> trie_;  // payload: the groups (a bit each) whose cache holds the path
  std::unordered_map<std::string, int32_t, NameHash, std::equal_to<>> roots_;
  std::array<int64_t, kMaxGroups> cached_{};
};

}  // namespace radixserve::router
