// RadixCache: the `radix` prefix cache (SCHEDULER_SPEC 6). A radix tree over
// token ids whose edges hold the KV slot indices of those tokens. Keys are
// page-aligned when page_size > 1 (children keyed by a hash of the first
// page), nodes come from a reusable pool, and the set of evictable leaves is
// maintained incrementally so eviction only heapifies the current leaves.
// Access times are a logical clock, so eviction order is deterministic.
// Each key namespace (cache salt) has its own root, so namespaces share no
// node; eviction is global over all of them, and a salted root goes away with
// its last entry.
// Not thread-safe: scheduler thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/scheduler/prefix_cache.h"

namespace radixserve::sched {

// Which unlocked leaf is evicted first (smallest key first), SCHEDULER_SPEC 6.1.
enum class EvictionOrder { kLru, kLfu, kFifo, kMru, kFilo, kPriority, kSlru };
Status ParseEvictionOrder(const std::string& name, EvictionOrder* out);

class RadixCache final : public PrefixCache {
 public:
  explicit RadixCache(EvictionOrder order = EvictionOrder::kLru);
  ~RadixCache() override;

  std::string_view name() const override { return "radix"; }
  bool shares_prefixes() const override { return true; }
  void Attach(const PrefixCacheContext& ctx) override;

  CacheNodeRef MatchPrefix(const CacheKey& key, std::vector<int32_t>* slots) override;
  void TouchPrefix(const CacheKey& key) override;
  int32_t Insert(const CacheKey& key, std::span<const int32_t> slots, int64_t priority) override;
  void IncLockRef(CacheNodeRef node) override;
  void DecLockRef(CacheNodeRef node) override;
  int64_t Evict(int64_t num_tokens) override;
  int64_t evictable_size() const override { return evictable_size_; }
  int64_t protected_size() const override { return protected_size_; }
  Status Reset() override;

  int32_t PeekMatch(const CacheKey& key, CacheNodeRef* node) const override;
  int64_t namespace_size(std::string_view ns) const override;
  bool DfsWeightOrder(std::span<const CacheNodeRef> last_nodes, std::vector<int32_t>* order) const override;
  Status SelfCheck() const override;

  int64_t num_nodes() const { return live_nodes_; }
  int32_t lock_ref(CacheNodeRef node) const;
  bool is_root(CacheNodeRef node) const { return N(node)->parent == nullptr; }
  // Namespaces with entries, the shared one ("") included.
  size_t num_namespaces() const { return 1 + salted_roots_.size(); }

 private:
  struct Node;
  // Children keyed by first token (or first-page hash); a short vector, plus a hash map when wide.
  struct ChildMap {
    std::vector<std::pair<uint64_t, Node*>> small;
    std::unordered_map<uint64_t, Node*>* big = nullptr;
    Node* Find(uint64_t k) const;
    void Put(uint64_t k, Node* n);
    void Erase(uint64_t k);
    size_t size() const { return big ? big->size() : small.size(); }
    bool empty() const { return size() == 0; }
    void Clear();
    template <typename F> void ForEach(F f) const {
      if (big) { for (auto& kv : *big) f(kv.second); } else { for (auto& kv : small) f(kv.second); }
    }
  };
  struct Node {
    Node* parent = nullptr;
    std::vector<int32_t> key;
    std::vector<int32_t> value;
    ChildMap children;
    int32_t lock_ref = 0;
    int32_t leaf_pos = -1;  // index in evictable_leaves_, or -1
    uint64_t last_access = 0;
    uint64_t creation = 0;
    int64_t hit_count = 0;
    int64_t priority = 0;
    Node* root = nullptr;    // the root of this node's namespace
    int64_t ns_tokens = 0;   // roots only: tokens held in the namespace
    const std::string* ns_name = nullptr;  // salted roots only: their key in salted_roots_
  };
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };

  static CacheNodeRef Ref(Node* n) { return reinterpret_cast<CacheNodeRef>(n); }
  static Node* N(CacheNodeRef r) { return reinterpret_cast<Node*>(r); }
  uint64_t ChildKey(const int32_t* tokens) const;
  size_t CommonPrefix(const std::vector<int32_t>& a, std::span<const int32_t> b) const;
  Node* NewNode();
  void ReleaseNode(Node* n);
  Node* Split(Node* c, size_t n);
  // Follows `key` down from the root, giving the root and every child it enters one new access
  // time; visit(child, matched tokens) returns false to stop at that child. Returns the last node
  // fully matched (where a stopped walk stopped: its parent).
  template <typename Visit>
  Node* TouchPath(const CacheKey& key, Visit&& visit);
  // The root of namespace ns, or nullptr when it holds nothing (the shared root always exists).
  Node* RootOf(std::string_view ns) const;
  void UpdateLeaf(Node* n);
  std::pair<int64_t, int64_t> EvictKey(const Node* n) const;
  void FreeSlots(std::span<const int32_t> slots);
  // Tells ctx_.events that leaf x is going (its whole key from the root).
  void EmitRemoved(const Node* x);

  EvictionOrder order_;
  PrefixCacheContext ctx_;
  int32_t page_ = 1;
  Node* root_ = nullptr;  // the shared namespace ("")
  std::unordered_map<std::string, Node*, NameHash, std::equal_to<>> salted_roots_;
  std::deque<Node> pool_;
  std::vector<Node*> free_nodes_;
  int64_t live_nodes_ = 0;
  uint64_t clock_ = 0;
  int64_t evictable_size_ = 0;
  int64_t protected_size_ = 0;
  std::vector<Node*> evictable_leaves_;
  // Scratch reused across calls (no per-call allocation once warm).
  std::vector<std::pair<std::pair<int64_t, int64_t>, Node*>> heap_;
  mutable std::unordered_map<const Node*, std::pair<int32_t, int32_t>> dfs_weight_;  // weight, first req
  mutable std::vector<int32_t> dfs_next_;
  std::vector<const Node*> event_chain_;  // scratch of EmitRemoved
  std::vector<int32_t> event_tokens_;
};

}  // namespace radixserve::sched
