// The radix prefix cache (SCHEDULER_SPEC 6) and the chunk cache (6.8).
#include <gtest/gtest.h>

#include "core/scheduler/kv_allocator.h"
#include "core/scheduler/cache_adapter.h"
#include "core/scheduler/req_to_token_pool.h"
#include "plugins/cache/chunk/chunk_cache.h"
#include "plugins/cache/radix/radix_cache.h"

namespace radixserve::sched {
namespace {

using V = std::vector<int32_t>;

class RadixTest : public ::testing::Test {
 protected:
  void Init(int32_t page, EvictionOrder order = EvictionOrder::kLru) {
    alloc_ = MakeKvAllocator(page, 256);
    pool_ = std::make_unique<ReqToTokenPool>(8, 64);
    cache_ = std::make_unique<RadixCache>(order);
    cache_->Attach(CacheContextOf(alloc_.get(), page));
    adapter_ = std::make_unique<CacheAdapter>(alloc_.get(), pool_.get(), page);
  }
  // Inserts tokens with freshly allocated slots; returns the slots.
  V Put(const V& tokens) {
    V slots;
    EXPECT_TRUE(alloc_->Alloc(static_cast<int64_t>(tokens.size()), &slots));
    int32_t p = cache_->Insert(tokens, slots, 0);
    if (p > 0) alloc_->Free(std::span<const int32_t>(slots).first(p));
    return slots;
  }
  V Match(const V& tokens, CacheNodeRef* node = nullptr) {
    V slots;
    CacheNodeRef n = cache_->MatchPrefix(tokens, &slots);
    if (node) *node = n;
    return slots;
  }
  std::unique_ptr<KvAllocator> alloc_;
  std::unique_ptr<ReqToTokenPool> pool_;
  std::unique_ptr<CacheAdapter> adapter_;  // the request side of caching, the same for every cache
  std::unique_ptr<RadixCache> cache_;
};

TEST_F(RadixTest, InsertAndMatchSplitsAtTheMatchEnd) {
  Init(1);
  V s = Put({1, 2, 3, 4, 5});
  EXPECT_EQ(cache_->evictable_size(), 5);
  EXPECT_EQ(cache_->num_nodes(), 2);
  CacheNodeRef node;
  V m = Match({1, 2, 3, 9}, &node);
  EXPECT_EQ(m, (V{s[0], s[1], s[2]}));
  EXPECT_EQ(cache_->num_nodes(), 3);  // split into [1,2,3] and [4,5]
  EXPECT_EQ(cache_->evictable_size(), 5);
  EXPECT_TRUE(cache_->SelfCheck().ok()) << cache_->SelfCheck().ToString();
  EXPECT_EQ(Match({7}), V{});
}

// Cache salts (SCHEDULER_SPEC 13.5): each namespace has its own tree, so the same tokens under
// two salts are two entries; eviction is global, and a namespace's root goes with its last entry.
TEST_F(RadixTest, NamespacesShareNothingAndVanishWhenEvicted) {
  Init(1);
  const int64_t free_at_start = alloc_->available_size();
  const V prompt = {1, 2, 3, 4};
  V shared = Put(prompt);
  V a_slots;
  ASSERT_TRUE(alloc_->Alloc(4, &a_slots));
  EXPECT_EQ(cache_->Insert(CacheKey(prompt, "tenant-a"), a_slots, 0), 0);  // nothing shared with ""
  EXPECT_EQ(cache_->PeekMatchLength(CacheKey(prompt, "tenant-a")), 4);
  EXPECT_EQ(cache_->PeekMatchLength(CacheKey(prompt, "tenant-b")), 0);
  EXPECT_EQ(cache_->PeekMatchLength(prompt), 4);
  V slots;
  cache_->MatchPrefix(CacheKey(prompt, "tenant-a"), &slots);
  EXPECT_EQ(slots, a_slots);  // the tenant's own KV, not the shared copy
  CacheNodeRef none = cache_->MatchPrefix(CacheKey(prompt, "tenant-b"), &slots);
  EXPECT_TRUE(cache_->is_root(none));
  EXPECT_EQ(cache_->namespace_size("tenant-a"), 4);
  EXPECT_EQ(cache_->namespace_size(""), 4);
  EXPECT_EQ(cache_->namespace_size("tenant-b"), 0);
  EXPECT_EQ(cache_->num_namespaces(), 2u);
  EXPECT_EQ(cache_->evictable_size(), 8);
  EXPECT_TRUE(cache_->SelfCheck().ok()) << cache_->SelfCheck().ToString();

  // Eviction sees both namespaces: LRU takes the shared entry (older), then the tenant's.
  EXPECT_EQ(cache_->Evict(4), 4);
  EXPECT_EQ(cache_->namespace_size(""), 0);
  EXPECT_EQ(cache_->namespace_size("tenant-a"), 4);
  EXPECT_EQ(cache_->Evict(4), 4);
  EXPECT_EQ(cache_->num_namespaces(), 1u);
  EXPECT_EQ(cache_->num_nodes(), 1);
  EXPECT_TRUE(cache_->SelfCheck().ok()) << cache_->SelfCheck().ToString();
  EXPECT_EQ(alloc_->available_size(), free_at_start);  // every slot came back
}

TEST_F(RadixTest, InsertReturnsAlreadyCachedLength) {
  Init(1);
  Put({1, 2, 3});
  V slots;
  ASSERT_TRUE(alloc_->Alloc(5, &slots));
  EXPECT_EQ(cache_->Insert(V{1, 2, 3, 4, 5}, slots, 0), 3);
  alloc_->Free(std::span<const int32_t>(slots).first(3));
  EXPECT_EQ(cache_->evictable_size(), 5);
  EXPECT_EQ(Match({1, 2, 3, 4, 5}).back(), slots[4]);
  EXPECT_TRUE(cache_->SelfCheck().ok());
}

TEST_F(RadixTest, LocksMoveTokensBetweenEvictableAndProtected) {
  Init(1);
  Put({1, 2, 3, 4});
  Put({1, 2, 7, 8, 9});
  CacheNodeRef node;
  Match({1, 2, 7, 8, 9}, &node);
  cache_->IncLockRef(node);
  EXPECT_EQ(cache_->protected_size(), 5);  // [1,2] + [7,8,9]
  EXPECT_EQ(cache_->evictable_size(), 2);  // [3,4]
  // Split of a locked node keeps the lock count: sizes do not change.
  Match({1, 2, 7}, nullptr);
  EXPECT_EQ(cache_->protected_size(), 5);
  EXPECT_TRUE(cache_->SelfCheck().ok()) << cache_->SelfCheck().ToString();
  EXPECT_EQ(cache_->Evict(100), 2);  // only the unlocked leaf goes
  cache_->DecLockRef(node);
  EXPECT_EQ(cache_->protected_size(), 0);
  EXPECT_EQ(cache_->evictable_size(), 5);
  EXPECT_EQ(cache_->Evict(100), 5);  // cascades up to the root
  EXPECT_EQ(cache_->num_nodes(), 1);
  EXPECT_EQ(alloc_->available_size(), 256);
}

TEST_F(RadixTest, LruEvictsTheLeastRecentlyUsedLeafFirst) {
  Init(1);
  Put({1, 1});
  Put({2, 2});
  Put({3, 3});
  Match({1, 1});  // touch: now [2,2] is the oldest
  EXPECT_EQ(cache_->Evict(1), 2);
  EXPECT_EQ(Match({2, 2}), V{});
  EXPECT_EQ(Match({1, 1}).size(), 2u);
  EXPECT_EQ(Match({3, 3}).size(), 2u);
}

TEST_F(RadixTest, OtherEvictionOrders) {
  Init(1, EvictionOrder::kFifo);
  Put({1, 1});
  Put({2, 2});
  Match({1, 1});  // FIFO ignores access
  cache_->Evict(1);
  EXPECT_EQ(Match({1, 1}), V{});

  Init(1, EvictionOrder::kMru);
  Put({1, 1});
  Put({2, 2});
  Match({1, 1});
  cache_->Evict(1);
  EXPECT_EQ(Match({1, 1}), V{});
  EXPECT_EQ(Match({2, 2}).size(), 2u);

  Init(1, EvictionOrder::kLfu);
  Put({1, 1});
  Put({2, 2});
  Match({1, 1});
  Match({1, 1});
  Match({2, 2});
  cache_->Evict(1);
  EXPECT_EQ(Match({2, 2}), V{});

  EvictionOrder o;
  EXPECT_TRUE(ParseEvictionOrder("slru", &o).ok());
  EXPECT_FALSE(ParseEvictionOrder("bogus", &o).ok());
}

TEST_F(RadixTest, PagedMatchAndSplitArePageAligned) {
  Init(4);
  V s = Put({1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(Match({1, 2, 3, 4, 5, 6, 7}).size(), 4u);  // truncated to whole pages
  EXPECT_EQ(Match({1, 2, 3, 4, 5, 6, 0, 0}).size(), 4u);  // mismatch inside page 2
  EXPECT_EQ(cache_->num_nodes(), 3);  // split at the page boundary
  EXPECT_TRUE(cache_->SelfCheck().ok()) << cache_->SelfCheck().ToString();
  EXPECT_EQ(Match({1, 2, 3, 0}).size(), 0u);
}

TEST_F(RadixTest, PeekChangesNothing) {
  Init(1);
  Put({1, 2, 3, 4});
  Put({5, 6});
  CacheNodeRef node = nullptr;
  EXPECT_EQ(cache_->PeekMatch(V{1, 2, 9}, &node), 2);
  EXPECT_EQ(cache_->num_nodes(), 3);  // no split
  EXPECT_EQ(cache_->PeekEvictable(100), 6);
  EXPECT_EQ(cache_->PeekEvictable(3), 3);
  // Access times untouched: LRU still evicts [1,2,3,4] (inserted first).
  cache_->Evict(1);
  EXPECT_EQ(cache_->PeekMatchLength(V{1, 2}), 0);
  EXPECT_EQ(cache_->PeekMatchLength(V{5, 6}), 2);
}

TEST_F(RadixTest, CacheUnfinishedThenFinishedRequest) {
  Init(1);
  Put({1, 2, 3});
  Req r;
  r.tokens = {1, 2, 3, 4, 5, 6};
  r.input_len = 6;
  r.req_pool_idx = pool_->Alloc();
  // Admission: match 3 cached tokens, lock, allocate the rest.
  r.last_node = cache_->MatchPrefix(std::span<const int32_t>(r.tokens).first(5), &r.prefix_indices);
  cache_->IncLockRef(r.last_node);
  r.cache_protected_len = 3;
  auto row = pool_->Row(r.req_pool_idx);
  std::copy(r.prefix_indices.begin(), r.prefix_indices.end(), row.begin());
  V out;
  ASSERT_TRUE(alloc_->Alloc(3, &out));
  std::copy(out.begin(), out.end(), row.begin() + 3);
  r.extend_end = r.kv_len = 6;
  adapter_->CacheUnfinishedReq(*cache_, r);
  EXPECT_EQ(r.cache_protected_len, 6);
  EXPECT_EQ(cache_->protected_size(), 6);
  EXPECT_EQ(r.prefix_indices.size(), 6u);
  // One decode step, then finish: [0, seq_len-1) is committed.
  r.tokens.push_back(7);
  ASSERT_TRUE(alloc_->Alloc(1, &out));
  row[6] = out.back();
  r.kv_len = 7;
  r.tokens.push_back(8);
  adapter_->CacheFinishedReq(*cache_, r, true);
  EXPECT_EQ(cache_->protected_size(), 0);
  EXPECT_EQ(cache_->evictable_size(), 7);
  EXPECT_EQ(alloc_->available_size() + cache_->evictable_size(), 256);
  EXPECT_TRUE(cache_->SelfCheck().ok());
}

TEST_F(RadixTest, DuplicatePrefillRepointsTheRow) {
  Init(1);
  Put({1, 2, 3, 4});  // another request published the same prompt meanwhile
  Req r;
  r.tokens = {1, 2, 3, 4, 5};
  r.input_len = 5;
  r.req_pool_idx = pool_->Alloc();
  auto row = pool_->Row(r.req_pool_idx);
  V out;
  ASSERT_TRUE(alloc_->Alloc(5, &out));
  std::copy(out.begin(), out.end(), row.begin());
  r.last_node = nullptr;
  r.extend_end = r.kv_len = 5;
  r.worker_synced_len = 5;
  adapter_->CacheUnfinishedReq(*cache_, r);
  V tree = Match({1, 2, 3, 4});
  EXPECT_TRUE(std::equal(tree.begin(), tree.end(), row.begin()));
  EXPECT_EQ(r.worker_synced_len, 0);  // the worker's mirror must be patched
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(alloc_->IsSlotFree(out[i]));
  adapter_->CacheFinishedReq(*cache_, r, false);
  EXPECT_EQ(alloc_->available_size() + cache_->evictable_size(), 256);
}

// TouchPrefix is the policy pass's match of a waiting request: it refreshes the access time
// of the nodes a match would walk (a partly matched one too), but splits nothing and counts
// no hit, so LFU counts do not grow with the number of passes a request waits.
TEST_F(RadixTest, TouchPrefixRefreshesAccessTimeOnly) {
  Init(1);
  Put({1, 2, 3, 4});  // older
  Put({5, 6, 7, 8});  // newer
  cache_->TouchPrefix(V{1, 2, 9});
  EXPECT_EQ(cache_->num_nodes(), 3);  // no split
  EXPECT_EQ(cache_->Evict(1), 4);     // the untouched leaf goes first
  EXPECT_EQ(cache_->PeekMatchLength(V{1, 2, 3, 4}), 4);
  EXPECT_EQ(cache_->PeekMatchLength(V{5, 6, 7, 8}), 0);
  EXPECT_TRUE(cache_->SelfCheck().ok()) << cache_->SelfCheck().ToString();

  Init(1, EvictionOrder::kLfu);
  Put({1, 2, 3, 4});
  Put({5, 6, 7, 8});
  Match({5, 6, 7, 8});  // one real hit
  for (int i = 0; i < 3; ++i) cache_->TouchPrefix(V{1, 2, 3, 4});
  EXPECT_EQ(cache_->Evict(1), 4);  // fewer hits goes first, however often it was touched
  EXPECT_EQ(cache_->PeekMatchLength(V{1, 2, 3, 4}), 0);
  EXPECT_EQ(cache_->PeekMatchLength(V{5, 6, 7, 8}), 4);
}

TEST_F(RadixTest, DfsWeightOrderVisitsHeavierSubtreesFirst) {
  Init(1);
  Put({1, 1, 1, 1});
  Put({1, 1, 2, 2});
  Put({9, 9});
  CacheNodeRef a, b, c, root;
  Match({1, 1, 1, 1}, &a);
  Match({1, 1, 2, 2}, &b);
  Match({9, 9}, &c);
  Match({5}, &root);
  // Queue: c, a, root, b, b  → subtree [1,1] has weight 3 (a, b, b), b's branch 2.
  std::vector<CacheNodeRef> nodes{c, a, root, b, b};
  V order;
  ASSERT_TRUE(cache_->DfsWeightOrder(nodes, &order));
  EXPECT_EQ(order, (V{3, 4, 1, 0, 2}));
}

TEST(ChunkCache, NoSharingAndFreesOnFinish) {
  auto alloc = MakeKvAllocator(1, 64);
  ReqToTokenPool pool(2, 32);
  ChunkCache cache;
  cache.Attach(CacheContextOf(alloc.get(), 1));
  CacheAdapter adapter(alloc.get(), &pool, 1);
  Req r;
  r.tokens = {1, 2, 3, 4};
  r.input_len = 4;
  r.req_pool_idx = pool.Alloc();
  V out;
  ASSERT_TRUE(alloc->Alloc(2, &out));  // first chunk of 2
  std::copy(out.begin(), out.end(), pool.Row(r.req_pool_idx).begin());
  r.extend_end = r.kv_len = 2;
  adapter.CacheUnfinishedReq(cache, r);
  EXPECT_EQ(r.prefix_indices, out);
  EXPECT_EQ(cache.evictable_size(), 0);
  V none;
  EXPECT_EQ(cache.PeekMatchLength(V{1, 2}), 0);
  adapter.CacheFinishedReq(cache, r, true);
  EXPECT_EQ(alloc->available_size(), 64);
  EXPECT_FALSE(cache.shares_prefixes());
}

}  // namespace
}  // namespace radixserve::sched
