// NodeLoop: a node's loop thread, the same for every node. Start runs `body`
// on a new thread; the body loops while running() and blocks on its waiter
// when idle; Stop clears the flag, wakes the waiter (so a blocked wait
// returns at once) and joins. Start and Stop come from the lifecycle thread;
// running() may be read from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

#include "transport/channel.h"

namespace radixserve::nodes {

class NodeLoop {
 public:
  NodeLoop() = default;
  NodeLoop(const NodeLoop&) = delete;
  NodeLoop& operator=(const NodeLoop&) = delete;
  ~NodeLoop() { Stop(); }

  void Start(transport::Waiter* waiter, std::function<void()> body) {
    waiter_ = waiter;
    running_.store(true);
    thread_ = std::thread(std::move(body));
  }
  // Idempotent; the waiter is touched only while the thread runs (the node may destroy it after).
  void Stop() {
    running_.store(false);
    if (!thread_.joinable()) return;
    if (waiter_) waiter_->Wake();
    thread_.join();
    waiter_ = nullptr;
  }
  bool running() const { return running_.load(); }

 private:
  std::atomic<bool> running_{false};
  transport::Waiter* waiter_ = nullptr;
  std::thread thread_;
};

}  // namespace radixserve::nodes
