// FanOutCommunicator: request/response over one-to-many topics (SCHEDULER_SPEC 8.2).
//
// One control call is in flight at a time; concurrent callers wait in FIFO
// order. A call sends its request once and completes when `fan_out`
// replies carrying its call id have arrived (or the timeout passes).
// Several communicators may share one reply topic (lanes that must not wait
// for each other): each numbers its calls from its own `first_call_id`.
// Thread-safe: Call() from any thread; HandleReply() from the receive thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "core/util/status.h"
#include "transport/control.pb.h"

namespace radixserve::transport {

class FanOutCommunicator {
 public:
  using SendFn = std::function<Status(const control::ControlRequest&)>;

  FanOutCommunicator(SendFn send, int fan_out, uint64_t first_call_id = 1)
      : send_(std::move(send)), fan_out_(fan_out), next_call_id_(first_call_id) {}

  // Sends `request` (its call_id is assigned here) and waits for fan_out replies.
  Result<std::vector<control::ControlReply>> Call(control::ControlRequest request,
                                                  std::chrono::milliseconds timeout);
  // Delivers a reply; replies to calls that are no longer waiting are dropped.
  void HandleReply(const control::ControlReply& reply);

  // Joins replies: success when all succeeded (the code of the first failure), messages joined with " | ".
  static control::ControlReply Merge(const std::vector<control::ControlReply>& replies);

 private:
  void AdvanceLocked();  // hands the turn to the next waiting caller

  SendFn send_;
  const int fan_out_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t next_ticket_ = 0;      // FIFO order of callers
  uint64_t serving_ticket_ = 0;   // the caller whose call is in flight
  uint64_t next_call_id_ = 1;
  uint64_t inflight_call_id_ = 0; // 0 when none
  std::vector<control::ControlReply> replies_;
  std::vector<uint64_t> abandoned_;  // tickets of callers that timed out while queued
};

}  // namespace radixserve::transport
