// CacheEventPublisher: the scheduler node's CacheEventSink. It collects the
// events of the prefix cache during a scheduler iteration and publishes them
// as one CacheEventsMsg (sooner when they pass the message's target size),
// for a data-parallel router to keep its view of this group's cache exact.
// While nobody subscribes it collects nothing. Messages are numbered; one that
// cannot be sent still takes its number, so the reader sees the gap.
// Not thread-safe: the scheduler thread owns it.
#pragma once

#include <cstdint>
#include <memory>

#include "core/scheduler/cache_event.h"
#include "nodes/cache_event_codec.h"
#include "transport/channel.h"

namespace radixserve::nodes {

class CacheEventPublisher final : public sched::CacheEventSink {
 public:
  explicit CacheEventPublisher(std::unique_ptr<transport::Publisher> publisher);
  void OnCacheEvent(const sched::CacheEvent& event) override;
  // Publishes what was collected; called once per scheduler iteration.
  void Flush();
  uint64_t published() const { return published_; }
  uint64_t lost() const { return lost_; }

 private:
  std::unique_ptr<transport::Publisher> publisher_;
  CacheEventBatch batch_;
  const uint64_t epoch_;
  uint64_t seq_ = 0;
  uint64_t published_ = 0, lost_ = 0;
};

}  // namespace radixserve::nodes
