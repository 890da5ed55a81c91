// Carries prefix-cache events (sched::CacheEvent) over shared memory
// (transport::CacheEventsMsg): the scheduler node collects one iteration's
// events in a CacheEventBatch and publishes them as one message; a router
// reads them back with ForEachCacheEvent.
// CacheEventBatch is not thread-safe (the scheduler thread owns it);
// ForEachCacheEvent is stateless.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/scheduler/cache_event.h"
#include "core/util/status.h"
#include "transport/messages.h"

namespace radixserve::nodes {

class CacheEventBatch {
 public:
  CacheEventBatch();
  void Add(const sched::CacheEvent& event);
  bool empty() const { return events_.empty(); }
  size_t events() const { return events_.size(); }
  // The message size these events need.
  size_t bytes() const;
  // Writes them as message `seq` of scheduler instance `epoch`; OutOfRange when `cap` is short.
  Status Encode(uint64_t epoch, uint64_t seq, void* buf, size_t cap) const;
  void Clear();

 private:
  std::vector<transport::CacheEventWire> events_;
  std::vector<int32_t> tokens_;
  std::string ns_;
};

// Calls `fn` with each event of a validated message, in order (the spans point into the message).
void ForEachCacheEvent(const transport::CacheEventsMsg* m, const std::function<void(const sched::CacheEvent&)>& fn);

}  // namespace radixserve::nodes
