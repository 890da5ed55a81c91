// KV slot allocators (page_size 1 and paged, SCHEDULER_SPEC 5.2) and ReqToTokenPool.
#include <gtest/gtest.h>

#include "core/scheduler/kv_allocator.h"
#include "core/scheduler/req_to_token_pool.h"

namespace radixserve::sched {
namespace {

using V = std::vector<int32_t>;

TEST(TokenKvAllocator, ReservesSlotZeroAndTakesFromTheHead) {
  TokenKvAllocator a(8);
  EXPECT_EQ(a.available_size(), 8);
  V out;
  ASSERT_TRUE(a.Alloc(3, &out));
  EXPECT_EQ(out, (V{1, 2, 3}));
  EXPECT_FALSE(a.IsSlotFree(0));
  EXPECT_EQ(a.available_size(), 5);
  EXPECT_FALSE(a.Alloc(6, &out));  // all or nothing
  EXPECT_EQ(out.size(), 3u);
  a.Free(V{2});  // freed slots go to the tail
  out.clear();
  ASSERT_TRUE(a.Alloc(6, &out));
  EXPECT_EQ(out, (V{4, 5, 6, 7, 8, 2}));
  EXPECT_EQ(a.available_size(), 0);
}

TEST(TokenKvAllocator, FreeGroupAppliesAtEnd) {
  TokenKvAllocator a(4);
  V out;
  ASSERT_TRUE(a.Alloc(4, &out));
  a.FreeGroupBegin();
  a.Free(V{1, 2});
  a.Free(V{4});
  EXPECT_EQ(a.available_size(), 0);
  a.FreeGroupEnd();
  EXPECT_EQ(a.available_size(), 3);
  EXPECT_TRUE(a.IsSlotFree(4));
}

TEST(PagedKvAllocator, PagesStartAtOneAndAllocIsPageAligned) {
  PagedKvAllocator a(4, 16);  // pages 1..4, slots 4..19
  EXPECT_EQ(a.available_size(), 16);
  V out;
  ASSERT_TRUE(a.Alloc(8, &out));
  EXPECT_EQ(out, (V{4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(a.available_size(), 8);
}

TEST(PagedKvAllocator, AllocExtendFillsPartialPageThenWholePagesThenTail) {
  PagedKvAllocator a(4, 64);
  V first;
  // A request with 6 prefix tokens: pages 1 (slots 4..7) and 2 (slots 8..9 used).
  ASSERT_TRUE(a.AllocExtend(V{0}, V{6}, V{-1}, &first));
  EXPECT_EQ(first, (V{4, 5, 6, 7, 8, 9}));
  // Extend it from 6 to 13: slots 10, 11 (rest of page 2), page 3 whole, page 4 for the tail.
  V out;
  ASSERT_TRUE(a.AllocExtend(V{6}, V{13}, V{9}, &out));
  EXPECT_EQ(out, (V{10, 11, 12, 13, 14, 15, 16}));
  EXPECT_EQ(a.available_size(), 64 - 4 * 4);
}

TEST(PagedKvAllocator, AllocExtendIsAllOrNothing) {
  PagedKvAllocator a(4, 8);
  V out;
  EXPECT_FALSE(a.AllocExtend(V{0, 0}, V{5, 4}, V{-1, -1}, &out));  // needs 3 pages, has 2
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(a.available_size(), 8);
}

TEST(PagedKvAllocator, AllocDecodeTakesANewPageOnlyAtPageStart) {
  PagedKvAllocator a(4, 32);
  V rows;
  ASSERT_TRUE(a.AllocExtend(V{0, 0}, V{8, 6}, V{-1, -1}, &rows));  // r0: pages 1,2; r1: pages 3,4
  V out;
  // r0 grows to 9 (position 8 starts a page), r1 to 7 (position 6 continues its page).
  ASSERT_TRUE(a.AllocDecode(V{9, 7}, V{rows[7], rows[13]}, &out));
  EXPECT_EQ(out[0] % 4, 0);
  EXPECT_EQ(out[1], rows[13] + 1);
}

TEST(PagedKvAllocator, FreedPagesArePrependedAndDeduplicated) {
  PagedKvAllocator a(4, 16);
  V out;
  ASSERT_TRUE(a.Alloc(16, &out));
  a.Free(V{9, 8, 10, 11});  // page 2, listed once
  a.Free(V{14});            // page 3 (tail page, one slot in use)
  EXPECT_EQ(a.available_size(), 8);
  V again;
  ASSERT_TRUE(a.Alloc(4, &again));
  EXPECT_EQ(again[0], 12);  // the most recently freed page comes first
}

TEST(ReqToTokenPool, RowsAreAllocatedAndFreed) {
  ReqToTokenPool pool(3, 16);
  int32_t a = pool.Alloc(), b = pool.Alloc(), c = pool.Alloc();
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(c, 2);
  EXPECT_EQ(pool.Alloc(), -1);
  pool.Row(b)[5] = 42;
  EXPECT_EQ(pool.Row(b)[5], 42);
  pool.Free(b);
  EXPECT_EQ(pool.available_size(), 1);
  EXPECT_EQ(pool.Alloc(), b);
}

}  // namespace
}  // namespace radixserve::sched
