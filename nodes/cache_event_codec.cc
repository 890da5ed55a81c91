#include "nodes/cache_event_codec.h"

#include <cstring>

namespace radixserve::nodes {

static_assert(static_cast<uint8_t>(sched::CacheEvent::Kind::kCleared) == transport::kMaxCacheEventKind,
              "the wire's largest event kind follows sched::CacheEvent::Kind");

CacheEventBatch::CacheEventBatch() {
  // One message's worth up front: collecting an iteration's events does not allocate.
  events_.reserve(256);
  tokens_.reserve(transport::CacheEventsMsg::kTargetBytes / sizeof(int32_t));
}

void CacheEventBatch::Add(const sched::CacheEvent& e) {
  transport::CacheEventWire w{};
  w.kind = static_cast<uint8_t>(e.kind);
  w.changed = e.changed;
  w.tokens_offset = static_cast<uint32_t>(tokens_.size());
  w.tokens_count = static_cast<uint32_t>(e.tokens.size());
  w.ns_offset = static_cast<uint32_t>(ns_.size());
  w.ns_len = static_cast<uint32_t>(e.ns.size());
  tokens_.insert(tokens_.end(), e.tokens.begin(), e.tokens.end());
  ns_.append(e.ns);
  events_.push_back(w);
}

size_t CacheEventBatch::bytes() const {
  return transport::CacheEventsMsg::Bytes({.events = events_.size(), .tokens = tokens_.size(), .ns_bytes = ns_.size()});
}

Status CacheEventBatch::Encode(uint64_t epoch, uint64_t seq, void* buf, size_t cap) const {
  if (cap < bytes()) return Status::OutOfRange("cache events need " + std::to_string(bytes()) + " bytes");
  transport::MessageWriter<transport::CacheEventsMsg> w(buf, cap);
  w.msg()->epoch = epoch;
  w.msg()->seq = seq;
  const bool ok = w.Copy<transport::CacheEventWire>(w.msg()->events, events_) &&
                  w.Copy<int32_t>(w.msg()->tokens, tokens_) &&
                  w.Copy<char>(w.msg()->ns_bytes, std::span<const char>(ns_.data(), ns_.size()));
  return ok ? Status::Ok() : Status::OutOfRange("cache events do not fit their message");
}

void CacheEventBatch::Clear() {
  events_.clear();
  tokens_.clear();
  ns_.clear();
}

void ForEachCacheEvent(const transport::CacheEventsMsg* m, const std::function<void(const sched::CacheEvent&)>& fn) {
  auto tokens = transport::ArrayOf<int32_t>(m, m->tokens);
  auto ns = transport::ArrayOf<char>(m, m->ns_bytes);
  for (const transport::CacheEventWire& w : transport::ArrayOf<transport::CacheEventWire>(m, m->events)) {
    sched::CacheEvent e;
    e.kind = static_cast<sched::CacheEvent::Kind>(w.kind);
    e.changed = w.changed;
    e.tokens = tokens.subspan(w.tokens_offset, w.tokens_count);
    e.ns = std::string_view(ns.data() + w.ns_offset, w.ns_len);
    fn(e);
  }
}

}  // namespace radixserve::nodes
