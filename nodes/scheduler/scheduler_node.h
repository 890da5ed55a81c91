// SchedulerNode: runs the scheduler loop in the pipeline: the transport
// around a SchedulerService (which holds the scheduler and answers control).
//
// Its thread drains the request and control topics without blocking while
// work runs and blocks on a WaitSet when idle; the worker is reached through
// a RemoteWorker, and every BatchTokenIdOut goes to the detokenizer. Control
// replies go out on control_reply. Lifecycle calls come from the container thread.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/scheduler/scheduler.h"
#include "core/tokenizer/tokenizer.h"
#include "nodes/node.h"
#include "nodes/node_loop.h"
#include "nodes/scheduler/cache_event_publisher.h"
#include "nodes/scheduler/remote_worker.h"
#include "nodes/scheduler/scheduler_service.h"
#include "transport/channel.h"
#include "transport/control.pb.h"

namespace radixserve::nodes {

class SchedulerNode : public Node {
 public:
  explicit SchedulerNode(NodeContext ctx);
  ~SchedulerNode() override;
  const char* component() const override { return "scheduler"; }
  bool Ready() const override;

 protected:
  Status OnConfigure() override;
  Status OnActivate() override;
  Status OnDeactivate() override;
  Status OnCleanup() override;
  Status OnParameterChanged(const std::string& name) override;

 private:
  void Loop();
  void LoopUntilStopped();
  void DrainRequests();
  void DrainControl();
  void HandleTokenizedRequest(const void* data, size_t size);
  void HandleControl(const void* data, size_t size);
  void Reply(uint64_t call_id, control::ControlReply reply);
  void SendOutputs(const sched::BatchTokenIdOut& out);
  sched::SchedulerConfig BuildConfig() const;

  std::unique_ptr<Tokenizer> tokenizer_;
  int32_t context_length_ = 0;
  std::unique_ptr<RemoteWorker> worker_;
  std::unique_ptr<CacheEventPublisher> cache_events_;  // declared first: outlives the service's cache
  std::unique_ptr<SchedulerService> service_;
  std::unique_ptr<transport::Subscriber> requests_, control_;
  std::unique_ptr<transport::Publisher> out_, control_reply_;
  std::unique_ptr<transport::Waiter> waiter_;
  NodeLoop loop_;  // stopped by OnDeactivate, which the destructor runs through Shutdown()
  std::atomic<bool> worker_connected_{false};
  std::optional<std::chrono::steady_clock::time_point> worker_absent_since_;  // loop thread only
  uint64_t dropped_messages_ = 0;
};

}  // namespace radixserve::nodes
