// TokenTrie: the node storage both of the router's tries share (GroupCacheView,
// InFlightPrompts): nodes of one token each, linked to their parent and
// siblings, kept in one vector with a free list, each carrying a Payload.
// Roots are nodes without a parent. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace radixserve::router {

template <typename Payload>
class TokenTrie {
 public:
  struct Node {
    int32_t token = 0;
    int32_t parent = -1;  // -1: a root; -2: freed
    int32_t first_child = -1;
    int32_t next_sibling = -1;
    Payload value{};
  };

  Node& operator[](int32_t id) { return nodes_[static_cast<size_t>(id)]; }
  const Node& operator[](int32_t id) const { return nodes_[static_cast<size_t>(id)]; }

  // The child of `node` for `token`, or -1.
  int32_t Child(int32_t node, int32_t token) const {
    for (int32_t c = nodes_[node].first_child; c >= 0; c = nodes_[c].next_sibling)
      if (nodes_[c].token == token) return c;
    return -1;
  }
  // A new node (a root when parent is -1) with a default payload.
  int32_t Add(int32_t parent, int32_t token) {
    int32_t id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = static_cast<int32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[id] = Node{token, parent, -1, -1, Payload{}};
    if (parent >= 0) {
      nodes_[id].next_sibling = nodes_[parent].first_child;
      nodes_[parent].first_child = id;
    }
    return id;
  }
  // Frees a node without children (unlinked from its parent, if any).
  void Remove(int32_t node) {
    const int32_t parent = nodes_[node].parent;
    if (parent >= 0) {
      int32_t* link = &nodes_[parent].first_child;
      while (*link != node) link = &nodes_[*link].next_sibling;
      *link = nodes_[node].next_sibling;
    }
    nodes_[node].parent = -2;
    free_.push_back(node);
  }
  bool removed(int32_t node) const { return nodes_[node].parent == -2; }
  size_t size() const { return nodes_.size() - free_.size(); }

 private:
  std::vector<Node> nodes_;
  std::vector<int32_t> free_;
};

}  // namespace radixserve::router
