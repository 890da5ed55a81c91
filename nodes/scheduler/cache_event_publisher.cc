#include "nodes/scheduler/cache_event_publisher.h"

#include <glog/logging.h>
#include <time.h>
#include <unistd.h>

namespace radixserve::nodes {
namespace {
// Distinct for every scheduler start on this machine: the process id and the start time.
uint64_t NewEpoch() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t(::getpid()) << 40) ^ (uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec));
}
}  // namespace

CacheEventPublisher::CacheEventPublisher(std::unique_ptr<transport::Publisher> publisher)
    : publisher_(std::move(publisher)), epoch_(NewEpoch()) {}

void CacheEventPublisher::OnCacheEvent(const sched::CacheEvent& event) {
  // A clear makes everything collected before it moot.
  if (event.kind == sched::CacheEvent::Kind::kCleared) batch_.Clear();
  batch_.Add(event);
  if (batch_.bytes() >= transport::CacheEventsMsg::kTargetBytes) Flush();
}

void CacheEventPublisher::Flush() {
  if (batch_.empty()) return;
  if (!publisher_->HasSubscribers()) {  // no router: nothing to keep exact
    batch_.Clear();
    return;
  }
  ++seq_;
  const size_t bytes = batch_.bytes();
  auto chunk = publisher_->Loan(bytes);
  Status s = chunk.ok() ? batch_.Encode(epoch_, seq_, *chunk, bytes) : chunk.status();
  if (s.ok()) {
    publisher_->Publish(*chunk);
    ++published_;
  } else {
    if (chunk.ok()) publisher_->Release(*chunk);
    if (lost_++ == 0)
      LOG(WARNING) << "cannot send " << batch_.events() << " cache events (" << s.ToString()
                   << "): the router will see the gap and forget this group's cache";
  }
  batch_.Clear();
}

}  // namespace radixserve::nodes
