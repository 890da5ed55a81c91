// CacheEvent: what a prefix cache tells the outside about its contents, so
// that a data-parallel router can keep an exact view of each group's cache
// (issue #16) instead of guessing it from where it sent requests. A cache
// emits kStored when it takes ownership of new tokens and kRemoved when it
// evicts them; `tokens` is always the whole key from the namespace's root, of
// which the last `changed` tokens are the ones stored or removed.
// CacheEventSink is called on the scheduler thread; it must not block.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace radixserve::sched {

struct CacheEvent {
  enum class Kind : uint8_t { kStored, kRemoved, kCleared };
  Kind kind = Kind::kStored;
  std::string_view ns;               // the cache salt ("" shared)
  std::span<const int32_t> tokens;   // from the root to the end of the changed part
  int32_t changed = 0;               // the trailing tokens stored or removed
};

class CacheEventSink {
 public:
  virtual ~CacheEventSink() = default;
  virtual void OnCacheEvent(const CacheEvent& event) = 0;
};

}  // namespace radixserve::sched
