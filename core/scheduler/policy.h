// SchedulePolicy: the interface of policy plugins (SCHEDULER_SPEC 2).
// A policy only orders the waiting queue: it gets read-only views of the
// queued requests (RequestView: the few facts a policy may read, never the
// scheduler's Req), a const cache (dry-run queries only) and the scheduler's
// time, and returns a permutation. It never reads a clock of its own.
// It cannot allocate or free. Priority-style policies may also answer two
// questions the scheduler acts on: which queued request to drop when the
// queue is full, and whether a running request may be preempted.
// Instances are used by the scheduler thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/scheduler/prefix_cache.h"
#include "core/scheduler/request_view.h"

namespace radixserve::sched {

// What a policy sees besides the queue: the cache, for dry-run queries only, and the time.
struct OrderContext {
  const PrefixCache& cache;
  double now_s;  // the scheduler's clock (monotonic seconds), the clock of RequestView::wait_entry_time
  // Prefill tokens the scheduler has launched so far (monotone; RequestView::arrival_processed_tokens
  // is a snapshot of it): HRRN measures waiting in work done, not seconds.
  int64_t processed_prefill_tokens = 0;
  std::span<const RequestView> running = {};  // the running batch (routing-key counts its keys)
  int32_t page_size = 1;
};

class SchedulePolicy {
 public:
  virtual ~SchedulePolicy() = default;
  virtual std::string_view name() const = 0;
  // Writes a permutation of [0, queue.size()) into *order: the admission order.
  virtual void Order(std::span<const RequestView> queue, const OrderContext& ctx, std::vector<int32_t>* order) = 0;
  // Whether the last Order() matched every waiting request against the cache (a cache-aware
  // pass). The scheduler then refreshes those prefixes' access times, as SGLang's match does.
  virtual bool matched_prefixes() const { return false; }

  // A cap, in tokens, on the next chunk of the request being chunk-prefilled, so that part of the
  // pass's chunk budget stays for waiting requests (shortest-prefill-first, SCHEDULER_SPEC 13.2).
  // `queue` is in this pass's admission order; `budget` is the pass's chunk budget. -1: no cap.
  virtual int64_t ChunkedReqLimit(RequestView chunked, std::span<const RequestView> queue, const OrderContext& ctx,
                                  int64_t budget) const {
    return -1;
  }

  // ---- priority scheduling hooks (defaults: no priorities) ----
  // Queue is full and `incoming` arrives: index of the queued request to abort instead, or -1 to
  // reject the incoming one.
  virtual int32_t ChooseQueueVictim(std::span<const RequestView> queue, RequestView incoming) const { return -1; }
  virtual bool preemption_enabled() const { return false; }
  // Whether `running` may be preempted to admit `incoming`.
  virtual bool MayPreempt(RequestView incoming, RequestView running) const { return false; }
  // Order of preemption victims among running requests (least important first).
  virtual bool PreemptBefore(RequestView a, RequestView b) const { return false; }

  // The plugin's own counters as a JSON object (shown by server info and `radixserve ctl policy show`).
  virtual std::string StatsJson() const { return "{}"; }
};

// The part of a waiting request a cache can serve, in its namespace: all but the last token (at
// least one is always computed, SCHEDULER_SPEC 2.2).
inline CacheKey MatchKeyOf(RequestView r) {
  const std::span<const int32_t> t = r.tokens();
  return {t.first(t.empty() ? 0 : t.size() - 1), r.cache_salt()};
}

// Prefill tokens a waiting request still needs: all of its tokens (prompt and any output to
// recompute) past its cached prefix, at least one.
inline int64_t UncachedPrefillWork(RequestView r, int32_t match_len) {
  const int64_t left = static_cast<int64_t>(r.seq_len()) - match_len;
  return left > 1 ? left : 1;
}

// Identity order (arrival order as the queue currently stands).
inline void FcfsOrder(size_t n, std::vector<int32_t>* order) {
  order->resize(n);
  for (size_t i = 0; i < n; ++i) (*order)[i] = static_cast<int32_t>(i);
}

// A policy instance with the deleter of whoever made it (a plugin frees what it allocated).
using PolicyPtr = std::unique_ptr<SchedulePolicy, std::function<void(SchedulePolicy*)>>;
inline PolicyPtr OwnPolicy(std::unique_ptr<SchedulePolicy> p) {
  return PolicyPtr(p.release(), [](SchedulePolicy* x) { delete x; });
}

}  // namespace radixserve::sched
