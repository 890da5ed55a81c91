// InFlightPrompts: the prompts a router has sent to each group and that have
// not ended yet, as one token trie per group and cache namespace with a count
// per node. They are not the group's cache (that is GroupCacheView, from its
// events), but what it is about to cache: a burst of requests sharing a
// prefix that no cache holds yet can follow the first of them.
// Not thread-safe (the Router's mutex guards it).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/router/token_trie.h"

namespace radixserve::router {

class InFlightPrompts {
 public:
  explicit InFlightPrompts(int32_t num_groups);
  void Add(int32_t group, std::string_view ns, std::span<const int32_t> tokens);
  // Removes one Add of the same prompt.
  void Remove(int32_t group, std::string_view ns, std::span<const int32_t> tokens);
  // The longest prefix of `tokens` shared with a prompt in flight in `group`.
  int32_t Match(int32_t group, std::string_view ns, std::span<const int32_t> tokens) const;
  size_t num_nodes() const { return trie_.size(); }

 private:
  int32_t Root(int32_t group, std::string_view ns) const;  // -1 when none

  const int32_t num_groups_;
  TokenTrie<int32_t> trie_;  // payload: prompts in flight through the node
  std::unordered_map<std::string, int32_t> roots_;  // "<group>/<ns>" -> root node
};

}  // namespace radixserve::router
