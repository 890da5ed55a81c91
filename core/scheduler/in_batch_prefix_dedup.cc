#include "core/scheduler/in_batch_prefix_dedup.h"

#include <algorithm>
#include <string_view>

namespace radixserve::sched {

void TokenViewTrie::Reset() { nodes_.resize(1); nodes_[0] = Node{}; }

int32_t TokenViewTrie::FindChild(int32_t node, int32_t token) const {
  for (int32_t c = nodes_[node].first_child; c >= 0; c = nodes_[c].next_sibling)
    if (nodes_[c].key[0] == token) return c;
  return -1;
}

int32_t TokenViewTrie::AddChild(int32_t parent, const int32_t* key, int32_t len) {
  Node n;
  n.key = key;
  n.len = len;
  n.next_sibling = nodes_[parent].first_child;
  nodes_.push_back(n);
  int32_t id = static_cast<int32_t>(nodes_.size()) - 1;
  nodes_[parent].first_child = id;
  return id;
}

int32_t TokenViewTrie::Match(std::span<const int32_t> key) const {
  int32_t node = 0, total = 0;
  size_t pos = 0;
  while (pos < key.size()) {
    int32_t c = FindChild(node, key[pos]);
    if (c < 0) break;
    const Node& n = nodes_[c];
    int32_t lim = std::min<int32_t>(n.len, static_cast<int32_t>(key.size() - pos));
    int32_t k = static_cast<int32_t>(std::mismatch(n.key, n.key + lim, key.data() + pos).first - n.key);
    total += k;
    if (k < n.len) break;
    pos += k;
    node = c;
  }
  return total;
}

void TokenViewTrie::Insert(std::span<const int32_t> key) {
  int32_t node = 0;
  size_t pos = 0;
  while (pos < key.size()) {
    int32_t c = FindChild(node, key[pos]);
    if (c < 0) break;
    Node n = nodes_[c];
    int32_t lim = std::min<int32_t>(n.len, static_cast<int32_t>(key.size() - pos));
    int32_t k = static_cast<int32_t>(std::mismatch(n.key, n.key + lim, key.data() + pos).first - n.key);
    if (k < n.len) {
      // Split: c keeps the first k tokens, a new child takes the rest and c's children.
      Node tail;
      tail.key = n.key + k;
      tail.len = n.len - k;
      tail.first_child = n.first_child;
      tail.next_sibling = -1;
      nodes_.push_back(tail);
      nodes_[c].len = k;
      nodes_[c].first_child = static_cast<int32_t>(nodes_.size()) - 1;
    }
    pos += k;
    node = c;
  }
  if (pos < key.size()) AddChild(node, key.data() + pos, static_cast<int32_t>(key.size() - pos));
}

void InBatchPrefixDedup::Compute(std::span<const RequestView> queue, std::span<const int32_t> match_lens,
                                 std::vector<uint8_t>* deprioritized) {
  deprioritized->assign(queue.size(), 0);
  if (check_threshold_ < 0) return;
  auto consider = [&](size_t i) {
    if (match_lens[i] > check_threshold_) return;
    std::span<const int32_t> ids = queue[i].tokens();
    if (trie_.Match(ids) >= deprioritize_threshold_) {
      (*deprioritized)[i] = 1;  // an earlier request already carries this prefix
    } else {
      trie_.Insert(ids);
    }
  };
  // Cache namespaces never share, so a request is compared only with earlier ones of its own salt:
  // the shared namespace first, then one pass per salt (few salts wait at once).
  trie_.Reset();
  bool salted = false;
  for (size_t i = 0; i < queue.size(); ++i) {
    if (queue[i].cache_salt().empty()) consider(i); else salted = true;
  }
  if (!salted) return;
  done_.assign(queue.size(), 0);
  for (size_t i = 0; i < queue.size(); ++i) {
    const std::string_view salt = queue[i].cache_salt();
    if (salt.empty() || done_[i]) continue;
    trie_.Reset();
    for (size_t j = i; j < queue.size(); ++j)
      if (!done_[j] && queue[j].cache_salt() == salt) {
        done_[j] = 1;
        consider(j);
      }
  }
}

}  // namespace radixserve::sched
