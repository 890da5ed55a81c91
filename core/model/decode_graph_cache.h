// DecodeGraphCache: which decode steps run from a captured graph, for a backend that captures
// them (CudaModel's decode graphs). A shape's first step runs eagerly (it loads every kernel the
// step needs), its second is captured, later ones replay. At capacity the least recently run
// graph gives way (and is captured again at its shape's next step), so a server whose batch
// sizes and context widths drift keeps graphs for the shapes it runs now, not the first it met.
// DropGraphs() is for when the buffers the graphs name were freed.
// Graph: any movable type; the cache owns the graphs it holds. Not thread-safe.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <list>
#include <map>
#include <set>
#include <utility>

namespace radixserve::model {

struct DecodeShape {
  int64_t sequences = 0;  // one new token each
  int64_t row_width = 0;  // slot-row width, padded so that one shape serves many steps
  auto operator<=>(const DecodeShape&) const = default;
};

template <typename Graph>
class DecodeGraphCache {
 public:
  // Shapes met once and not captured yet, at most; past it they are forgotten (each such shape
  // then runs eagerly once more before its capture), so the record stays bounded.
  static constexpr size_t kMaxShapesSeen = 1024;

  explicit DecodeGraphCache(size_t capacity) : capacity_(capacity) {}

  // The graph of `shape`, now the most recently run; nullptr when there is none.
  Graph* Find(const DecodeShape& shape) {
    auto it = index_.find(shape);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);  // no allocation: the node moves
    return &it->second->second;
  }

  // For a shape without a graph: whether its step is captured now (true from its second step on).
  bool DueForCapture(const DecodeShape& shape) {
    if (capacity_ == 0) return false;
    if (seen_.erase(shape) == 1) return true;
    Remember(shape);
    return false;
  }

  // Keeps `graph` for `shape` (which has none) as the most recently run, the least recently run
  // one giving way at capacity; returns it.
  Graph* Insert(const DecodeShape& shape, Graph graph) {
    if (capacity_ == 0) return nullptr;
    if (lru_.size() >= capacity_) {  // the evicted shape has run: its next step is captured again
      const DecodeShape evicted = lru_.back().first;
      index_.erase(evicted);
      lru_.pop_back();
      Remember(evicted);
    }
    lru_.emplace_front(shape, std::move(graph));
    index_[shape] = lru_.begin();
    return &lru_.front().second;
  }

  // Drops every graph; their shapes have run, so each is captured again at its next step.
  void DropGraphs() {
    for (const Entry& e : lru_) Remember(e.first);
    index_.clear();
    lru_.clear();
  }

  size_t size() const { return lru_.size(); }
  size_t shapes_seen() const { return seen_.size(); }

 private:
  void Remember(const DecodeShape& shape) {
    if (seen_.size() >= kMaxShapesSeen) seen_.clear();
    seen_.insert(shape);
  }

  using Entry = std::pair<DecodeShape, Graph>;
  size_t capacity_;
  std::list<Entry> lru_;  // most recently run first
  std::map<DecodeShape, typename std::list<Entry>::iterator> index_;
  std::set<DecodeShape> seen_;
};

}  // namespace radixserve::model
