#include "plugins/cache/radix/radix_cache.h"

#include <glog/logging.h>

#include <algorithm>
#include <functional>

namespace radixserve::sched {
namespace {

constexpr size_t kSmallChildren = 16;

uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace

Status ParseEvictionOrder(const std::string& name, EvictionOrder* out) {
  static const std::pair<const char*, EvictionOrder> kNames[] = {
      {"lru", EvictionOrder::kLru},   {"lfu", EvictionOrder::kLfu},   {"fifo", EvictionOrder::kFifo},
      {"mru", EvictionOrder::kMru},   {"filo", EvictionOrder::kFilo}, {"priority", EvictionOrder::kPriority},
      {"slru", EvictionOrder::kSlru}};
  for (const auto& [n, o] : kNames)
    if (name == n) {
      *out = o;
      return Status::Ok();
    }
  return Status::InvalidArgument("unknown eviction policy '" + name + "' (lru, lfu, fifo, mru, filo, priority, slru)");
}

// ---- ChildMap ---------------------------------------------------------------------

RadixCache::Node* RadixCache::ChildMap::Find(uint64_t k) const {
  if (big) {
    auto it = big->find(k);
    return it == big->end() ? nullptr : it->second;
  }
  for (const auto& kv : small)
    if (kv.first == k) return kv.second;
  return nullptr;
}

void RadixCache::ChildMap::Put(uint64_t k, Node* n) {
  if (big) {
    (*big)[k] = n;
    return;
  }
  for (auto& kv : small)
    if (kv.first == k) {
      kv.second = n;
      return;
    }
  small.emplace_back(k, n);
  if (small.size() > kSmallChildren) {
    big = new std::unordered_map<uint64_t, Node*>(small.begin(), small.end());
    small.clear();
  }
}

void RadixCache::ChildMap::Erase(uint64_t k) {
  if (big) {
    big->erase(k);
    return;
  }
  for (size_t i = 0; i < small.size(); ++i)
    if (small[i].first == k) {
      small[i] = small.back();
      small.pop_back();
      return;
    }
}

void RadixCache::ChildMap::Clear() {
  delete big;
  big = nullptr;
  small.clear();
}

// ---- tree plumbing ---------------------------------------------------------------

RadixCache::RadixCache(EvictionOrder order) : order_(order) {}

RadixCache::~RadixCache() {
  for (auto& n : pool_) n.children.Clear();
}

void RadixCache::Attach(const PrefixCacheContext& ctx) {
  ctx_ = ctx;
  page_ = ctx.page_size;
  for (auto& n : pool_) n.children.Clear();
  pool_.clear();
  free_nodes_.clear();
  evictable_leaves_.clear();
  salted_roots_.clear();
  live_nodes_ = 0;
  evictable_size_ = protected_size_ = 0;
  root_ = NewNode();
  root_->lock_ref = 1;  // the root is never evicted
  root_->priority = INT64_MIN;
  root_->root = root_;
  if (ctx_.events) ctx_.events->OnCacheEvent({CacheEvent::Kind::kCleared, {}, {}, 0});
}

void RadixCache::EmitRemoved(const Node* x) {
  std::vector<const Node*>& chain = event_chain_;
  chain.clear();
  for (const Node* n = x; n->parent != nullptr; n = n->parent) chain.push_back(n);
  event_tokens_.clear();
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    event_tokens_.insert(event_tokens_.end(), (*it)->key.begin(), (*it)->key.end());
  const std::string_view ns = x->root->ns_name != nullptr ? std::string_view(*x->root->ns_name) : std::string_view();
  ctx_.events->OnCacheEvent({CacheEvent::Kind::kRemoved, ns, event_tokens_, static_cast<int32_t>(x->key.size())});
}

RadixCache::Node* RadixCache::RootOf(std::string_view ns) const {
  if (ns.empty()) return root_;
  auto it = salted_roots_.find(ns);
  return it == salted_roots_.end() ? nullptr : it->second;
}

int64_t RadixCache::namespace_size(std::string_view ns) const {
  const Node* r = RootOf(ns);
  return r == nullptr ? 0 : r->ns_tokens;
}

RadixCache::Node* RadixCache::NewNode() {
  Node* n;
  if (!free_nodes_.empty()) {
    n = free_nodes_.back();
    free_nodes_.pop_back();
  } else {
    n = &pool_.emplace_back();
  }
  n->parent = nullptr;
  n->key.clear();
  n->value.clear();
  n->lock_ref = 0;
  n->leaf_pos = -1;
  n->last_access = n->creation = ++clock_;
  n->hit_count = 0;
  n->priority = 0;
  n->root = nullptr;
  n->ns_tokens = 0;
  n->ns_name = nullptr;
  ++live_nodes_;
  return n;
}

void RadixCache::ReleaseNode(Node* n) {
  n->children.Clear();
  --live_nodes_;
  free_nodes_.push_back(n);
}

uint64_t RadixCache::ChildKey(const int32_t* t) const {
  if (page_ == 1) return static_cast<uint32_t>(t[0]);
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (int32_t i = 0; i < page_; ++i) h = Mix(h ^ static_cast<uint32_t>(t[i]));
  return h;
}

size_t RadixCache::CommonPrefix(const std::vector<int32_t>& a, std::span<const int32_t> b) const {
  size_t n = std::min(a.size(), b.size());
  size_t i = std::mismatch(a.begin(), a.begin() + n, b.begin()).first - a.begin();
  return page_ == 1 ? i : i / page_ * page_;
}

RadixCache::Node* RadixCache::Split(Node* c, size_t n) {
  Node* mid = NewNode();
  mid->parent = c->parent;
  mid->key.assign(c->key.begin(), c->key.begin() + n);
  mid->value.assign(c->value.begin(), c->value.begin() + n);
  mid->lock_ref = c->lock_ref;  // same lock count: sizes do not change
  mid->priority = c->priority;
  mid->last_access = c->last_access;
  mid->creation = c->creation;
  mid->hit_count = c->hit_count;
  mid->root = c->root;
  c->key.erase(c->key.begin(), c->key.begin() + n);
  c->value.erase(c->value.begin(), c->value.begin() + n);
  c->parent = mid;
  mid->children.Put(ChildKey(c->key.data()), c);
  mid->parent->children.Put(ChildKey(mid->key.data()), mid);
  return mid;
}

void RadixCache::UpdateLeaf(Node* n) {
  bool leaf = n->parent != nullptr && n->lock_ref == 0 && n->children.empty();
  if (leaf && n->leaf_pos < 0) {
    n->leaf_pos = static_cast<int32_t>(evictable_leaves_.size());
    evictable_leaves_.push_back(n);
  } else if (!leaf && n->leaf_pos >= 0) {
    Node* last = evictable_leaves_.back();
    evictable_leaves_[n->leaf_pos] = last;
    last->leaf_pos = n->leaf_pos;
    evictable_leaves_.pop_back();
    n->leaf_pos = -1;
  }
}

void RadixCache::FreeSlots(std::span<const int32_t> slots) {
  if (!slots.empty()) ctx_.slots.free(slots);
}

// ---- public operations -------------------------------------------------------------

template <typename Visit>
RadixCache::Node* RadixCache::TouchPath(const CacheKey& k, Visit&& visit) {
  std::span<const int32_t> key = k.tokens;
  if (page_ > 1) key = key.first(key.size() / page_ * page_);
  Node* node = RootOf(k.ns);
  if (node == nullptr) return root_;  // an empty namespace: nothing to match (the root locks nothing)
  const uint64_t now = ++clock_;
  node->last_access = now;
  while (!key.empty()) {
    Node* c = node->children.Find(ChildKey(key.data()));
    if (c == nullptr) break;
    size_t n = CommonPrefix(c->key, key);
    if (n == 0) break;  // first-page hash collision
    c->last_access = now;  // a partly matched node too
    if (!visit(c, n)) break;
    node = c;
    key = key.subspan(n);
  }
  return node;
}

CacheNodeRef RadixCache::MatchPrefix(const CacheKey& key, std::vector<int32_t>* slots) {
  Node* split = nullptr;
  Node* last = TouchPath(key, [&](Node* c, size_t n) {
    ++c->hit_count;
    Node* matched = n < c->key.size() ? split = Split(c, n) : c;
    slots->insert(slots->end(), matched->value.begin(), matched->value.end());
    return split == nullptr;
  });
  // Every root locks nothing; a salted one may go away with its last entry, so hand out the shared one.
  if (split == nullptr && last->parent == nullptr) return Ref(root_);
  return Ref(split != nullptr ? split : last);
}

void RadixCache::TouchPrefix(const CacheKey& key) {
  // No split and no hit: only the access times change (splitting would give both halves this time).
  TouchPath(key, [](Node* c, size_t n) { return n == c->key.size(); });
}

int32_t RadixCache::PeekMatch(const CacheKey& k, CacheNodeRef* out) const {
  std::span<const int32_t> key = k.tokens;
  if (page_ > 1) key = key.first(key.size() / page_ * page_);
  const Node* node = RootOf(k.ns);
  if (node == nullptr) {
    if (out) *out = Ref(root_);
    return 0;
  }
  int32_t total = 0;
  while (!key.empty()) {
    const Node* c = node->children.Find(ChildKey(key.data()));
    if (c == nullptr) break;
    size_t n = CommonPrefix(c->key, key);
    if (n == 0) break;
    total += static_cast<int32_t>(n);
    node = c;
    if (n < c->key.size()) break;
    key = key.subspan(n);
  }
  if (node->parent == nullptr) node = root_;  // as MatchPrefix: roots are interchangeable
  if (out) *out = Ref(const_cast<Node*>(node));
  return total;
}

int32_t RadixCache::Insert(const CacheKey& k, std::span<const int32_t> value, int64_t priority) {
  std::span<const int32_t> key = k.tokens;
  CHECK_EQ(key.size(), value.size());
  if (page_ > 1) {
    CHECK_EQ(key.size() % page_, 0u) << "radix keys must be page-aligned";
  }
  if (key.empty()) return 0;
  Node* node = RootOf(k.ns);
  if (node == nullptr) {  // the namespace's first entry: its own root, never shared
    node = NewNode();
    node->lock_ref = 1;
    node->priority = INT64_MIN;
    node->root = node;
    node->ns_name = &salted_roots_.emplace(std::string(k.ns), node).first->first;
  }
  const uint64_t now = ++clock_;
  node->last_access = now;
  int32_t total = 0;
  while (!key.empty()) {
    Node* c = node->children.Find(ChildKey(key.data()));
    if (c == nullptr) break;
    size_t n = CommonPrefix(c->key, key);
    CHECK_GT(n, 0u) << "first-page hash collision in the radix tree";
    c->last_access = now;
    total += static_cast<int32_t>(n);
    key = key.subspan(n);
    value = value.subspan(n);
    if (n < c->key.size()) c = Split(c, n);
    c->priority = std::max(c->priority, priority);
    node = c;
  }
  if (!key.empty()) {
    Node* leaf = NewNode();
    leaf->parent = node;
    leaf->key.assign(key.begin(), key.end());
    leaf->value.assign(value.begin(), value.end());
    leaf->priority = priority;
    leaf->root = node->root;
    node->children.Put(ChildKey(leaf->key.data()), leaf);
    evictable_size_ += static_cast<int64_t>(key.size());
    node->root->ns_tokens += static_cast<int64_t>(key.size());
    UpdateLeaf(node);
    UpdateLeaf(leaf);
    if (ctx_.events)
      ctx_.events->OnCacheEvent({CacheEvent::Kind::kStored, k.ns, k.tokens, static_cast<int32_t>(key.size())});
  }
  return total;
}

void RadixCache::IncLockRef(CacheNodeRef ref) {
  for (Node* n = N(ref); n != nullptr && n->parent != nullptr; n = n->parent) {
    if (n->lock_ref == 0) {
      evictable_size_ -= static_cast<int64_t>(n->key.size());
      protected_size_ += static_cast<int64_t>(n->key.size());
    }
    ++n->lock_ref;
    UpdateLeaf(n);
  }
}

void RadixCache::DecLockRef(CacheNodeRef ref) {
  for (Node* n = N(ref); n != nullptr && n->parent != nullptr; n = n->parent) {
    CHECK_GT(n->lock_ref, 0) << "radix lock_ref underflow";
    if (n->lock_ref == 1) {
      evictable_size_ += static_cast<int64_t>(n->key.size());
      protected_size_ -= static_cast<int64_t>(n->key.size());
    }
    --n->lock_ref;
    UpdateLeaf(n);
  }
}

std::pair<int64_t, int64_t> RadixCache::EvictKey(const Node* n) const {
  const int64_t la = static_cast<int64_t>(n->last_access), cr = static_cast<int64_t>(n->creation);
  switch (order_) {
    case EvictionOrder::kLru: return {la, 0};
    case EvictionOrder::kLfu: return {n->hit_count, la};
    case EvictionOrder::kFifo: return {cr, 0};
    case EvictionOrder::kMru: return {-la, 0};
    case EvictionOrder::kFilo: return {-cr, 0};
    case EvictionOrder::kPriority: return {n->priority, la};
    case EvictionOrder::kSlru: return {n->hit_count >= 2 ? 1 : 0, la};
  }
  return {la, 0};
}

int64_t RadixCache::Evict(int64_t num_tokens) {
  if (num_tokens <= 0 || evictable_leaves_.empty()) return 0;
  using Item = std::pair<std::pair<int64_t, int64_t>, Node*>;
  auto cmp = [](const Item& a, const Item& b) { return a.first > b.first; };  // min-heap
  heap_.clear();
  for (Node* n : evictable_leaves_) heap_.emplace_back(EvictKey(n), n);
  std::make_heap(heap_.begin(), heap_.end(), cmp);
  int64_t freed = 0;
  while (freed < num_tokens && !heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), cmp);
    Node* x = heap_.back().second;
    heap_.pop_back();
    if (ctx_.events) EmitRemoved(x);
    FreeSlots(x->value);
    freed += static_cast<int64_t>(x->value.size());
    evictable_size_ -= static_cast<int64_t>(x->key.size());
    x->root->ns_tokens -= static_cast<int64_t>(x->key.size());
    Node* parent = x->parent;
    parent->children.Erase(ChildKey(x->key.data()));
    x->lock_ref = 1;  // force out of the leaf set
    UpdateLeaf(x);
    ReleaseNode(x);
    if (parent->parent == nullptr && parent != root_ && parent->children.empty()) {
      // A salted namespace's last entry: its root goes too, so idle tenants cost nothing.
      salted_roots_.erase(salted_roots_.find(*parent->ns_name));
      ReleaseNode(parent);
      continue;
    }
    UpdateLeaf(parent);
    if (parent->leaf_pos >= 0) {  // cascade upward
      heap_.emplace_back(EvictKey(parent), parent);
      std::push_heap(heap_.begin(), heap_.end(), cmp);
    }
  }
  return freed;
}

Status RadixCache::Reset() {
  if (protected_size_ != 0) return Status::FailedPrecondition("radix cache reset refused: nodes are locked");
  Evict(INT64_MAX);
  if (evictable_size_ != 0 || live_nodes_ != 1)
    return Status::Internal("radix cache reset left " + std::to_string(evictable_size_) + " tokens");
  return Status::Ok();
}

int32_t RadixCache::lock_ref(CacheNodeRef node) const { return N(node)->lock_ref; }

bool RadixCache::DfsWeightOrder(std::span<const CacheNodeRef> last_nodes, std::vector<int32_t>* order) const {
  // weight[node] = requests whose last node is in node's subtree; requests chained per node.
  dfs_weight_.clear();
  dfs_next_.assign(last_nodes.size(), -1);
  for (int32_t i = static_cast<int32_t>(last_nodes.size()) - 1; i >= 0; --i) {
    const Node* n = last_nodes[i] ? N(last_nodes[i]) : root_;
    auto& own = dfs_weight_[n];
    dfs_next_[i] = own.first == 0 && own.second == 0 ? -1 : own.second - 1;
    own.second = i + 1;  // 1-based head of this node's request chain (in queue order)
    for (const Node* a = n; a != nullptr; a = a->parent) ++dfs_weight_[a].first;
  }
  order->clear();
  std::vector<std::pair<int32_t, const Node*>> kids;
  std::function<void(const Node*)> dfs = [&](const Node* node) {
    std::vector<std::pair<int32_t, const Node*>> mine;
    node->children.ForEach([&](Node* c) {
      auto it = dfs_weight_.find(c);
      if (it != dfs_weight_.end() && it->second.first > 0) mine.emplace_back(it->second.first, c);
    });
    std::stable_sort(mine.begin(), mine.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [w, c] : mine) dfs(c);
    auto it = dfs_weight_.find(node);
    if (it != dfs_weight_.end() && it->second.second > 0)
      for (int32_t i = it->second.second - 1; i >= 0; i = dfs_next_[i]) order->push_back(i);
  };
  dfs(root_);
  // Salted namespaces after the shared one, by name, so the order does not depend on hashing.
  std::vector<std::pair<std::string_view, const Node*>> salted(salted_roots_.begin(), salted_roots_.end());
  std::sort(salted.begin(), salted.end());
  for (const auto& [name, root] : salted) dfs(root);
  CHECK_EQ(order->size(), last_nodes.size());
  return true;
}

Status RadixCache::SelfCheck() const {
  int64_t evictable = 0, prot = 0, leaves = 0, nodes = 0;
  std::vector<const Node*> stack{root_};
  for (const auto& [name, root] : salted_roots_) {
    if (root->lock_ref != 1 || root->parent != nullptr || root->root != root || root->ns_name != &name)
      return Status::Internal("radix namespace root '" + name + "' is malformed");
    if (root->children.empty()) return Status::Internal("radix namespace '" + name + "' kept an empty root");
    stack.push_back(root);
  }
  std::unordered_map<const Node*, int64_t> ns_tokens;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    ++nodes;
    if (n->parent != nullptr) {
      if (n->root != n->parent->root) return Status::Internal("radix node outside its parent's namespace");
      ns_tokens[n->root] += static_cast<int64_t>(n->key.size());
      if (n->key.size() != n->value.size()) return Status::Internal("radix node key/value length mismatch");
      if (n->key.empty()) return Status::Internal("radix node with an empty key");
      if (page_ > 1 && n->key.size() % page_ != 0) return Status::Internal("radix node not page-aligned");
      (n->lock_ref > 0 ? prot : evictable) += static_cast<int64_t>(n->key.size());
      if (n->lock_ref > n->parent->lock_ref && n->parent->parent != nullptr)
        return Status::Internal("radix child locked more than its parent");
      for (int32_t s : n->value)
        if (ctx_.slots.is_free && ctx_.slots.is_free(s)) return Status::Internal("radix node holds a free KV slot " + std::to_string(s));
      bool leaf = n->lock_ref == 0 && n->children.empty();
      if (leaf != (n->leaf_pos >= 0)) return Status::Internal("radix evictable-leaf set out of date");
      leaves += leaf;
    }
    n->children.ForEach([&](Node* c) {
      stack.push_back(c);
    });
  }
  if (evictable != evictable_size_ || prot != protected_size_)
    return Status::Internal("radix sizes: counted evictable " + std::to_string(evictable) + " protected " +
                            std::to_string(prot) + ", tracked " + std::to_string(evictable_size_) + " / " +
                            std::to_string(protected_size_));
  if (leaves != static_cast<int64_t>(evictable_leaves_.size())) return Status::Internal("radix leaf count mismatch");
  if (nodes != live_nodes_) return Status::Internal("radix node count mismatch");
  if (root_->lock_ref != 1) return Status::Internal("radix root lock changed");
  if (ns_tokens[root_] != root_->ns_tokens) return Status::Internal("radix shared namespace size out of date");
  for (const auto& [name, root] : salted_roots_)
    if (ns_tokens[root] != root->ns_tokens) return Status::Internal("radix namespace '" + name + "' size out of date");
  return Status::Ok();
}

}  // namespace radixserve::sched
