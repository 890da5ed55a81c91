// PrefixCache: the interface of prefix-cache plugins (radix, chunk)
// (SCHEDULER_SPEC 6): a key -> KV-slot index. A cache maps token sequences
// to KV slot indices it owns; nodes can be locked (a running request's
// prefix), and unlocked leaves can be evicted (their slots go back to the
// allocator). What a request publishes, frees and locks is the scheduler's
// CacheAdapter, the same for every cache: a plugin never touches a request.
// The const methods are dry-run queries: they change nothing (not even
// access times), so policies can use them through a const reference.
// Thread-safety: none; one thread (the scheduler's) calls every method.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/scheduler/cache_event.h"
#include "core/scheduler/cache_node.h"
#include "core/util/status.h"

namespace radixserve::sched {

// What a cache is keyed by: a namespace (a request's cache salt; "" is the shared one) and tokens.
// Entries of different namespaces never match each other: tenants that salt share nothing.
struct CacheKey {
  std::span<const int32_t> tokens;
  std::string_view ns;
  CacheKey(std::span<const int32_t> t, std::string_view n = {}) : tokens(t), ns(n) {}
  CacheKey(const std::vector<int32_t>& t, std::string_view n = {}) : tokens(t), ns(n) {}
};

// What a cache may do with the KV pool: give back the slots it evicts or drops, and (for its
// self-check only) ask whether a slot is free. The scheduler binds both to its allocator
// (CacheContextOf, cache_adapter.h); a cache never sees the allocator itself.
struct KvSlotReturn {
  std::function<void(std::span<const int32_t>)> free;
  std::function<bool(int32_t)> is_free;
};

struct PrefixCacheContext {
  KvSlotReturn slots;                // where evicted slots go back
  int32_t page_size = 1;
  CacheEventSink* events = nullptr;  // told of every store and eviction when set (a router's view)
};

class PrefixCache {
 public:
  virtual ~PrefixCache() = default;
  virtual std::string_view name() const = 0;
  // False for caches that never share (chunk): nothing is inserted or locked, every slot of a
  // finished request is freed, and cache-aware policies fall back to FCFS.
  virtual bool shares_prefixes() const = 0;
  // Binds the pools; must be called before any other method. Starts empty.
  virtual void Attach(const PrefixCacheContext& ctx) = 0;

  // Longest cached prefix of key (page-aligned when paged). Appends its slots to *slots and
  // returns the node it ends at (the root when nothing matches). May split a node.
  virtual CacheNodeRef MatchPrefix(const CacheKey& key, std::vector<int32_t>* slots) = 0;
  // Refreshes the access time of the nodes MatchPrefix(key) would walk, without splitting one or
  // counting a hit: the policy pass's match of a request that stays waiting (SCHEDULER_SPEC 6.2).
  virtual void TouchPrefix(const CacheKey& key) {}
  // Inserts key → slots; returns how many leading tokens were already cached. The cache owns the
  // slots of the tokens it did not have; the caller keeps (and frees) its copies of the others.
  virtual int32_t Insert(const CacheKey& key, std::span<const int32_t> slots, int64_t priority) = 0;
  // Locks the path from the root to `node` against eviction (counted; DecLockRef undoes one).
  virtual void IncLockRef(CacheNodeRef node) = 0;
  virtual void DecLockRef(CacheNodeRef node) = 0;
  // Evicts unlocked leaves until num_tokens are freed or nothing is left; returns tokens freed.
  virtual int64_t Evict(int64_t num_tokens) = 0;
  virtual int64_t evictable_size() const = 0;
  virtual int64_t protected_size() const = 0;
  // Drops everything; refuses while any node is locked.
  virtual Status Reset() = 0;

  // ---- dry-run queries (change nothing) ----
  // Tokens of key that MatchPrefix would return, and the node it would end at (may be inside a
  // node that MatchPrefix would split; the returned node is then the node containing the end).
  virtual int32_t PeekMatch(const CacheKey& key, CacheNodeRef* node) const = 0;
  int32_t PeekMatchLength(const CacheKey& key) const { return PeekMatch(key, nullptr); }
  // Tokens the cache holds in namespace `ns` (-1: the cache does not count by namespace).
  virtual int64_t namespace_size(std::string_view ns) const { return -1; }
  // How many tokens Evict(want) would free right now.
  virtual int64_t PeekEvictable(int64_t want) const { return want < evictable_size() ? want : evictable_size(); }
  // DFS-weight order (SCHEDULER_SPEC 2.3) of requests whose matches end at last_nodes[i];
  // writes a permutation of indices. False when the cache has no tree.
  virtual bool DfsWeightOrder(std::span<const CacheNodeRef> last_nodes, std::vector<int32_t>* order) const {
    return false;
  }
  // Structural self-check (sizes, locks, leaf set); for tests and the idle checker.
  virtual Status SelfCheck() const { return Status::Ok(); }
};

// A cache instance with the deleter of whoever made it (a plugin frees what it allocated).
using CachePtr = std::unique_ptr<PrefixCache, std::function<void(PrefixCache*)>>;
inline CachePtr OwnCache(std::unique_ptr<PrefixCache> c) {
  return CachePtr(c.release(), [](PrefixCache* x) { delete x; });
}

}  // namespace radixserve::sched
