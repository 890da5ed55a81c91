// RequestView: what a scheduling policy may read of one request. Policies
// (policy.h) get views, never the scheduler's Req: a view exposes the few
// facts an ordering or preemption decision needs, read-only, and keeps Req's
// layout out of the policy plugin interface. Its accessors are defined in the
// scheduler library (request_view.cc), so a plugin binary does not depend on
// where Req keeps them.
// A view is one pointer, trivially copyable: the scheduler hands out spans of
// them at no cost. It is valid while the request it views is, which for a
// policy means during the call it was passed to.
// Thread-safety: as the Req it views (the scheduler thread only).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

namespace radixserve::sched {

struct Req;

class RequestView {
 public:
  explicit RequestView(const Req* req) : req_(req) {}
  explicit RequestView(const Req& req) : req_(&req) {}

  uint64_t rid() const;
  // Prompt tokens, output tokens generated so far, and both (the length of tokens()).
  int32_t input_len() const;
  int32_t output_len() const;
  int32_t seq_len() const;
  // The prompt followed by the output so far: what a prefix match of the request looks up (a
  // retracted request recomputes its output too).
  std::span<const int32_t> tokens() const;
  // Tokens whose KV the request already has: its matched prefix plus the chunks computed so far
  // (0 while it waits; less than seq_len() while it is being chunk-prefilled).
  int32_t prefix_len() const;
  // The output budget (clipped to what fits the context at arrival).
  int32_t max_new_tokens() const;
  // The client's priority; priority() is 0 when it has none.
  bool has_priority() const;
  int64_t priority() const;
  std::string_view routing_key() const;  // "" when none
  std::string_view cache_salt() const;   // the prefix-cache namespace; "" is the shared one
  // Wait-queue entry order (FCFS key, ties), the scheduler's clock at arrival (seconds, the
  // clock of OrderContext::now_s) and its prefill-token counter then (OrderContext's).
  uint64_t arrival_seq() const;
  double wait_entry_time() const;
  int64_t arrival_processed_tokens() const;
  // Times the request was retracted or preempted back to the queue.
  int32_t retraction_count() const;

 private:
  const Req* req_;
};

// Spans of views cost what spans of pointers do.
static_assert(sizeof(RequestView) == sizeof(void*));
static_assert(std::is_trivially_copyable_v<RequestView>);

}  // namespace radixserve::sched
