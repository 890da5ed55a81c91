// DecodeGraphCache: eager first, captured second, replayed after; the least recently run evicted,
// and captured again at its next step, as are graphs dropped together.
#include "core/model/decode_graph_cache.h"

#include <gtest/gtest.h>

#include <memory>

namespace radixserve::model {
namespace {

using Graph = std::unique_ptr<int>;  // move-only, as a real graph is

Graph MakeGraph(int id) { return std::make_unique<int>(id); }

// The step the cache's caller runs for `shape`, as CudaModel's decode step does: 'e' eager,
// 'c' captured (then replayed), 'r' replayed. `next_id` names each captured graph.
char Step(DecodeGraphCache<Graph>& cache, DecodeShape shape, int* next_id) {
  if (cache.Find(shape) != nullptr) return 'r';
  if (!cache.DueForCapture(shape)) return 'e';
  cache.Insert(shape, MakeGraph((*next_id)++));
  return 'c';
}

TEST(DecodeGraphCacheTest, AShapeRunsEagerlyThenIsCapturedThenReplays) {
  DecodeGraphCache<Graph> cache(4);
  int id = 0;
  const DecodeShape s{8, 256};
  EXPECT_EQ(Step(cache, s, &id), 'e');
  EXPECT_EQ(Step(cache, s, &id), 'c');
  EXPECT_EQ(Step(cache, s, &id), 'r');
  EXPECT_EQ(Step(cache, s, &id), 'r');
  ASSERT_NE(cache.Find(s), nullptr);
  EXPECT_EQ(**cache.Find(s), 0);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.shapes_seen(), 0u);  // a captured shape is no longer in the seen-once record
}

TEST(DecodeGraphCacheTest, ShapesDifferingInBatchOrRowWidthAreDistinct) {
  DecodeGraphCache<Graph> cache(4);
  int id = 0;
  const DecodeShape a{8, 256}, wider{8, 512}, bigger{16, 256};
  EXPECT_EQ(Step(cache, a, &id), 'e');
  EXPECT_EQ(Step(cache, wider, &id), 'e');
  EXPECT_EQ(Step(cache, bigger, &id), 'e');
  EXPECT_EQ(Step(cache, a, &id), 'c');
  EXPECT_EQ(cache.Find(wider), nullptr);
  EXPECT_EQ(cache.Find(bigger), nullptr);
  EXPECT_EQ(**cache.Find(a), 0);
}

TEST(DecodeGraphCacheTest, AtCapacityTheLeastRecentlyRunGraphGivesWay) {
  DecodeGraphCache<Graph> cache(2);
  const DecodeShape a{1, 256}, b{2, 256}, c{3, 256};
  ASSERT_TRUE(cache.Insert(a, MakeGraph(1)) != nullptr);
  ASSERT_TRUE(cache.Insert(b, MakeGraph(2)) != nullptr);
  ASSERT_NE(cache.Find(a), nullptr);  // a is now more recent than b
  Graph* g = cache.Insert(c, MakeGraph(3));
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(**g, 3);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Find(b), nullptr);
  ASSERT_NE(cache.Find(a), nullptr);
  EXPECT_EQ(**cache.Find(a), 1);
  ASSERT_NE(cache.Find(c), nullptr);
  EXPECT_EQ(**cache.Find(c), 3);
}

TEST(DecodeGraphCacheTest, AnEvictedShapeIsCapturedAgainAtItsNextStep) {
  DecodeGraphCache<Graph> cache(1);
  int id = 0;
  const DecodeShape a{1, 256}, b{2, 256};
  EXPECT_EQ(Step(cache, a, &id), 'e');
  EXPECT_EQ(Step(cache, a, &id), 'c');
  EXPECT_EQ(Step(cache, b, &id), 'e');
  EXPECT_EQ(Step(cache, b, &id), 'c');  // a gives way
  EXPECT_EQ(cache.Find(a), nullptr);
  EXPECT_EQ(Step(cache, a, &id), 'c');  // its kernels have run: no eager step again
  EXPECT_EQ(**cache.Find(a), 2);
  EXPECT_EQ(cache.Find(b), nullptr);
}

TEST(DecodeGraphCacheTest, DroppedGraphsAreCapturedAgainAtTheirShapesNextStep) {
  DecodeGraphCache<Graph> cache(4);
  int id = 0;
  const DecodeShape a{4, 256}, b{5, 256}, c{6, 256};
  EXPECT_EQ(Step(cache, a, &id), 'e');
  EXPECT_EQ(Step(cache, a, &id), 'c');
  EXPECT_EQ(Step(cache, b, &id), 'e');
  cache.DropGraphs();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Find(a), nullptr);
  EXPECT_EQ(Step(cache, a, &id), 'c');  // it had a graph: its kernels have run
  EXPECT_EQ(**cache.Find(a), 1);
  EXPECT_EQ(Step(cache, b, &id), 'c');  // seen once before the drop
  EXPECT_EQ(Step(cache, c, &id), 'e');  // new
}

TEST(DecodeGraphCacheTest, TheRecordOfShapesSeenOnceStaysBounded) {
  DecodeGraphCache<Graph> cache(4);
  int id = 0;
  for (int64_t s = 1; s <= 3 * static_cast<int64_t>(DecodeGraphCache<Graph>::kMaxShapesSeen); ++s) {
    EXPECT_EQ(Step(cache, {s, 256}, &id), 'e');
    EXPECT_LE(cache.shapes_seen(), DecodeGraphCache<Graph>::kMaxShapesSeen);
  }
  // The last shape is still remembered: its next step is captured.
  EXPECT_EQ(Step(cache, {3 * static_cast<int64_t>(DecodeGraphCache<Graph>::kMaxShapesSeen), 256}, &id), 'c');
  EXPECT_EQ(cache.size(), 1u);
}

TEST(DecodeGraphCacheTest, ACapacityOfZeroKeepsEveryStepEager) {
  DecodeGraphCache<Graph> cache(0);
  int id = 0;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Step(cache, {1, 256}, &id), 'e');
  EXPECT_EQ(cache.Insert({1, 256}, MakeGraph(0)), nullptr);
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace radixserve::model
