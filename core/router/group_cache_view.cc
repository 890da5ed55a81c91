#include "core/router/group_cache_view.h"

#include <algorithm>

namespace radixserve::router {

GroupCacheView::GroupCacheView(int32_t num_groups) : num_groups_(std::clamp(num_groups, 1, kMaxGroups)) {}

void GroupCacheView::Prune(int32_t node) {
  while (node >= 0 && trie_[node].parent >= 0 && trie_[node].value == 0 && trie_[node].first_child < 0) {
    const int32_t parent = trie_[node].parent;
    trie_.Remove(node);  // a second Prune of it stops at once
    node = parent;
  }
}

void GroupCacheView::Clear(int32_t group) {
  const uint64_t bit = uint64_t(1) << group;
  std::vector<int32_t> stack;
  for (const auto& [name, root] : roots_) stack.push_back(root);
  std::vector<int32_t> emptied;
  while (!stack.empty()) {
    const int32_t n = stack.back();
    stack.pop_back();
    if (trie_[n].parent >= 0 && (trie_[n].value & bit) == 0) continue;  // prefix-closed: nothing below
    trie_[n].value &= ~bit;
    if (trie_[n].value == 0 && trie_[n].parent >= 0) emptied.push_back(n);
    for (int32_t c = trie_[n].first_child; c >= 0; c = trie_[c].next_sibling) stack.push_back(c);
  }
  for (auto it = emptied.rbegin(); it != emptied.rend(); ++it)
    if (!trie_.removed(*it)) Prune(*it);  // deepest first
  cached_[static_cast<size_t>(group)] = 0;
}

void GroupCacheView::Apply(int32_t group, const sched::CacheEvent& e) {
  if (group < 0 || group >= num_groups_) return;
  const uint64_t bit = uint64_t(1) << group;
  if (e.kind == sched::CacheEvent::Kind::kCleared) {
    Clear(group);
    return;
  }
  auto it = roots_.find(e.ns);
  if (it == roots_.end()) {
    if (e.kind == sched::CacheEvent::Kind::kRemoved) return;  // nothing of it was known
    it = roots_.emplace(std::string(e.ns), trie_.Add(-1, 0)).first;
  }
  int32_t node = it->second;
  const size_t changed_from = e.tokens.size() - std::min<size_t>(e.tokens.size(), static_cast<size_t>(e.changed));
  if (e.kind == sched::CacheEvent::Kind::kStored) {
    for (size_t i = 0; i < e.tokens.size(); ++i) {
      int32_t c = trie_.Child(node, e.tokens[i]);
      if (c < 0) c = trie_.Add(node, e.tokens[i]);
      if ((trie_[c].value & bit) == 0) {
        trie_[c].value |= bit;
        ++cached_[static_cast<size_t>(group)];
      }
      node = c;
    }
    return;
  }
  // kRemoved: the group no longer holds the tail [changed_from, end) of this key.
  std::vector<int32_t> path;
  for (size_t i = 0; i < e.tokens.size(); ++i) {
    node = trie_.Child(node, e.tokens[i]);
    if (node < 0) break;
    path.push_back(node);
  }
  for (size_t i = path.size(); i-- > changed_from;) {
    uint64_t& groups = trie_[path[i]].value;
    if (groups & bit) {
      groups &= ~bit;
      --cached_[static_cast<size_t>(group)];
    }
  }
  if (!path.empty()) Prune(path.back());  // and every ancestor left with no group and no child
}

void GroupCacheView::Match(std::string_view ns, std::span<const int32_t> tokens, std::span<int32_t> match_len) const {
  std::fill(match_len.begin(), match_len.end(), 0);
  auto it = roots_.find(ns);
  if (it == roots_.end()) return;
  int32_t node = it->second;
  uint64_t alive = num_groups_ >= 64 ? ~uint64_t(0) : (uint64_t(1) << num_groups_) - 1;
  for (size_t i = 0; i < tokens.size() && alive != 0; ++i) {
    node = trie_.Child(node, tokens[i]);
    if (node < 0) break;
    alive &= trie_[node].value;
    for (int32_t g = 0; g < num_groups_ && static_cast<size_t>(g) < match_len.size(); ++g)
      if (alive & (uint64_t(1) << g)) match_len[g] = static_cast<int32_t>(i + 1);
  }
}

}  // namespace radixserve::router
