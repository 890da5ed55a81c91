// SchedulerNode: runs the scheduler loop (core/scheduler) in the pipeline.
//
// Its thread drains the request and control topics without blocking while
// work runs and blocks on a WaitSet when idle; the worker is reached through
// a RemoteWorker, and every BatchTokenIdOut goes to the detokenizer. Control
// requests (policy/cache swap, flush, stats, server info, parameters) are
// answered on control_reply. Lifecycle calls come from the container thread.
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

#include "core/scheduler/plugin_host.h"
#include "core/scheduler/scheduler.h"
#include "core/tokenizer/tokenizer.h"
#include "nodes/node.h"
#include "nodes/scheduler/remote_worker.h"
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

 private:
  void Loop();
  void LoopUntilStopped();
  void DrainRequests();
  void DrainControl();
  // The worker died: its KV is gone, so the cache and every running request's KV are invalid.
  void HandleWorkerLoss();
  void HandleTokenizedRequest(const void* data, size_t size);
  void HandleControl(const void* data, size_t size);
  // The reply, or nullopt for a cache swap, which replies when it completes.
  std::optional<control::ControlReply> Execute(const control::ControlRequest& req);
  void Reply(uint64_t call_id, control::ControlReply reply);
  static control::ControlReply Failure(const Status& s);
  void SendOutputs(const sched::BatchTokenIdOut& out);
  std::string ServerInfoJson() const;
  std::string StatsJson() const;
  std::string policy_name() const;
  sched::SchedulerConfig BuildConfig() const;

  std::unique_ptr<Tokenizer> tokenizer_;
  int32_t context_length_ = 0;
  std::unique_ptr<sched::PluginHost> host_;
  std::unique_ptr<RemoteWorker> worker_;
  std::unique_ptr<sched::Scheduler> scheduler_;
  std::unique_ptr<transport::Subscriber> requests_, control_;
  std::unique_ptr<transport::Publisher> out_, control_reply_;
  std::unique_ptr<transport::Waiter> waiter_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  std::atomic<bool> worker_connected_{false};
  std::optional<std::chrono::steady_clock::time_point> worker_absent_since_;  // loop thread only

  uint64_t dropped_messages_ = 0;
  uint64_t worker_losses_ = 0;
  std::set<uint64_t> swaps_in_flight_;           // control calls of cache swaps not yet complete (loop thread)
  std::string cache_name_;                       // the active cache plugin and its parameters
  std::map<std::string, std::string> cache_params_;
};

}  // namespace radixserve::nodes
