#include "core/router/in_flight_prompts.h"

namespace radixserve::router {
namespace {
std::string RootKey(int32_t group, std::string_view ns) { return std::to_string(group) + "/" + std::string(ns); }
}  // namespace

InFlightPrompts::InFlightPrompts(int32_t num_groups) : num_groups_(num_groups) {}

int32_t InFlightPrompts::Root(int32_t group, std::string_view ns) const {
  auto it = roots_.find(RootKey(group, ns));
  return it == roots_.end() ? -1 : it->second;
}

void InFlightPrompts::Add(int32_t group, std::string_view ns, std::span<const int32_t> tokens) {
  if (group < 0 || group >= num_groups_) return;
  int32_t node = Root(group, ns);
  if (node < 0) node = roots_[RootKey(group, ns)] = trie_.Add(-1, 0);
  ++trie_[node].value;
  for (int32_t t : tokens) {
    int32_t c = trie_.Child(node, t);
    if (c < 0) c = trie_.Add(node, t);
    ++trie_[c].value;
    node = c;
  }
}

void InFlightPrompts::Remove(int32_t group, std::string_view ns, std::span<const int32_t> tokens) {
  const int32_t root = Root(group, ns);
  if (root < 0) return;
  std::vector<int32_t> path = {root};
  for (int32_t t : tokens) {
    const int32_t c = trie_.Child(path.back(), t);
    if (c < 0) return;  // never added: nothing to remove
    path.push_back(c);
  }
  // Deepest first: a node's count is at most its parent's, so emptied nodes have no children left.
  for (size_t i = path.size(); i-- > 0;) {
    if (--trie_[path[i]].value > 0) continue;
    if (i == 0) roots_.erase(RootKey(group, ns));
    trie_.Remove(path[i]);
  }
}

int32_t InFlightPrompts::Match(int32_t group, std::string_view ns, std::span<const int32_t> tokens) const {
  int32_t node = Root(group, ns);
  if (node < 0) return 0;
  int32_t n = 0;
  for (int32_t t : tokens) {
    node = trie_.Child(node, t);
    if (node < 0) break;
    ++n;
  }
  return n;
}

}  // namespace radixserve::router
