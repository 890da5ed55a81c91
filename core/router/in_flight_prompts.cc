#include "core/router/in_flight_prompts.h"

namespace radixserve::router {
namespace {
std::string RootKey(int32_t group, std::string_view ns) { return std::to_string(group) + "/" + std::string(ns); }
}  // namespace

InFlightPrompts::InFlightPrompts(int32_t num_groups) : num_groups_(num_groups) {}

int32_t InFlightPrompts::Child(int32_t node, int32_t token) const {
  for (int32_t c = nodes_[node].first_child; c >= 0; c = nodes_[c].next_sibling)
    if (nodes_[c].token == token) return c;
  return -1;
}

int32_t InFlightPrompts::NewNode(int32_t parent, int32_t token) {
  int32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<int32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  nodes_[id] = Node{token, parent, -1, -1, 0};
  if (parent >= 0) {
    nodes_[id].next_sibling = nodes_[parent].first_child;
    nodes_[parent].first_child = id;
  }
  return id;
}

void InFlightPrompts::Unlink(int32_t node) {
  const int32_t parent = nodes_[node].parent;
  int32_t* link = &nodes_[parent].first_child;
  while (*link != node) link = &nodes_[*link].next_sibling;
  *link = nodes_[node].next_sibling;
  free_.push_back(node);
}

int32_t InFlightPrompts::Root(int32_t group, std::string_view ns) const {
  auto it = roots_.find(RootKey(group, ns));
  return it == roots_.end() ? -1 : it->second;
}

void InFlightPrompts::Add(int32_t group, std::string_view ns, std::span<const int32_t> tokens) {
  if (group < 0 || group >= num_groups_) return;
  int32_t node = Root(group, ns);
  if (node < 0) node = roots_[RootKey(group, ns)] = NewNode(-1, 0);
  ++nodes_[node].count;
  for (int32_t t : tokens) {
    int32_t c = Child(node, t);
    if (c < 0) c = NewNode(node, t);
    ++nodes_[c].count;
    node = c;
  }
}

void InFlightPrompts::Remove(int32_t group, std::string_view ns, std::span<const int32_t> tokens) {
  const int32_t root = Root(group, ns);
  if (root < 0) return;
  std::vector<int32_t> path = {root};
  for (int32_t t : tokens) {
    const int32_t c = Child(path.back(), t);
    if (c < 0) return;  // never added: nothing to remove
    path.push_back(c);
  }
  // Deepest first, so that a node is unlinked only after its emptied children.
  for (size_t i = path.size(); i-- > 0;) {
    if (--nodes_[path[i]].count > 0) continue;
    if (i == 0) {
      roots_.erase(RootKey(group, ns));
      free_.push_back(path[0]);
    } else {
      Unlink(path[i]);
    }
  }
}

int32_t InFlightPrompts::Match(int32_t group, std::string_view ns, std::span<const int32_t> tokens) const {
  int32_t node = Root(group, ns);
  if (node < 0) return 0;
  int32_t n = 0;
  for (int32_t t : tokens) {
    node = Child(node, t);
    if (node < 0) break;
    ++n;
  }
  return n;
}

}  // namespace radixserve::router
