#include "transport/fan_out_communicator.h"

namespace radixserve::transport {

Result<std::vector<control::ControlReply>> FanOutCommunicator::Call(control::ControlRequest request,
                                                                    std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t ticket = next_ticket_++;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  // Wait for our turn: callers are served strictly in arrival order.
  while (serving_ticket_ != ticket) {
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && serving_ticket_ != ticket) {
      // Give up our place without blocking those behind us: they skip finished tickets.
      abandoned_.push_back(ticket);
      return Status::Unavailable("control call timed out waiting for earlier calls to finish");
    }
  }
  const uint64_t call_id = next_call_id_++;
  request.set_call_id(call_id);
  inflight_call_id_ = call_id;
  replies_.clear();
  lock.unlock();
  Status sent = send_(request);
  lock.lock();
  Result<std::vector<control::ControlReply>> result = Status::Internal("unset");
  if (!sent.ok()) {
    result = sent;
  } else if (!cv_.wait_until(lock, deadline, [&] { return static_cast<int>(replies_.size()) >= fan_out_; })) {
    result = Status::Unavailable("control call timed out: " + std::to_string(replies_.size()) + " of " +
                                 std::to_string(fan_out_) + " replies arrived");
  } else {
    result = std::move(replies_);
  }
  replies_.clear();
  inflight_call_id_ = 0;
  AdvanceLocked();
  cv_.notify_all();
  return result;
}

void FanOutCommunicator::AdvanceLocked() {
  ++serving_ticket_;
  // Skip the tickets of callers that timed out while queued.
  for (bool skipped = true; skipped;) {
    skipped = false;
    for (auto it = abandoned_.begin(); it != abandoned_.end(); ++it) {
      if (*it == serving_ticket_) {
        abandoned_.erase(it);
        ++serving_ticket_;
        skipped = true;
        break;
      }
    }
  }
}

void FanOutCommunicator::HandleReply(const control::ControlReply& reply) {
  std::lock_guard<std::mutex> lock(mu_);
  if (inflight_call_id_ == 0 || reply.call_id() != inflight_call_id_) return;
  replies_.push_back(reply);
  if (static_cast<int>(replies_.size()) >= fan_out_) cv_.notify_all();
}

control::ControlReply FanOutCommunicator::Merge(const std::vector<control::ControlReply>& replies) {
  control::ControlReply merged;
  bool success = !replies.empty();
  int32_t code = 0;
  std::string message;
  for (const auto& r : replies) {
    success = success && r.success();
    if (!r.success() && code == 0) code = r.code() != 0 ? r.code() : static_cast<int32_t>(StatusCode::kInternal);
    if (!r.message().empty()) {
      if (!message.empty()) message += " | ";
      message += r.message();
    }
  }
  merged.set_success(success);
  merged.set_code(success ? 0 : (code != 0 ? code : static_cast<int32_t>(StatusCode::kUnavailable)));
  merged.set_message(message);
  if (!replies.empty()) {
    merged.set_call_id(replies.front().call_id());
    merged.set_json(replies.front().json());
    merged.set_responder(replies.front().responder());
  }
  return merged;
}

}  // namespace radixserve::transport
