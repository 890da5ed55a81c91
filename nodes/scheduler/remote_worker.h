// RemoteWorker: the scheduler's Worker interface over shared memory, an
// encoder plus a wait. Forward publishes the batch on the forward_batch topic
// and blocks until the worker's ForwardResult with the same batch id arrives
// (or a timeout). It keeps no request state: the batch carries it (worker.h).
// Forward is called from one thread at a time (the scheduler's worker
// thread); the loss and overhead queries may be called from another. With
// pipeline stages, Send and Receive each run on a thread of their own.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <memory>
#include <atomic>
#include <mutex>
#include <vector>

#include "core/scheduler/worker.h"
#include "nodes/forward_codec.h"
#include "transport/channel.h"

namespace radixserve::nodes {

class RemoteWorker final : public sched::Worker {
 public:
  // `status_topic`: the node_status topic, where a worker restart shows as a new pid (iceoryx may
  // let a respawned worker re-register before it notices the old one died).
  static Result<std::unique_ptr<RemoteWorker>> Create(const transport::Topic& batch_topic,
                                                      const transport::Topic& result_topic,
                                                      const transport::Topic& status_topic,
                                                      const transport::ChannelOptions& options,
                                                      std::chrono::milliseconds timeout,
                                                      int pipeline_depth = 1);

  Status Forward(const sched::ForwardBatch& batch, sched::ForwardResult* result) override;
  // Pipeline stages (pipeline_depth > 1): the batch topic reaches every stage, and the last one
  // answers; results come back in the order the batches were sent.
  int pipeline_depth() const override { return pipeline_depth_; }
  Status Send(const sched::ForwardBatch& batch) override;
  Status Receive(const sched::ForwardBatch& batch, sched::ForwardResult* result) override;
  // True once a worker subscribed to the batch topic.
  bool WorkerConnected() const { return pub_->HasSubscribers(); }
  // True once per loss of the worker (its subscription vanished: it died or was restarted) since the
  // last call. The KV it held is gone; the caller must drop whatever refers to it.
  bool TakeWorkerLost();
  uint64_t dropped_results() const { return dropped_; }
  // Per-request states the worker reported holding after its last step (-1 before any): 0 at idle
  // (the scheduler sends its releases before it idles); more is a leak.
  int32_t worker_request_states() const { return worker_request_states_.load(std::memory_order_relaxed); }

  // Scheduler overhead: the worker's idle gap between finishing one step and receiving the next,
  // as a share of the step period, over the last steps of continuous work (p50 and p90; the gap
  // in microseconds). The scheduler thread calls MarkIdle() when it blocks with nothing to do, so
  // idle time is not counted as overhead.
  struct Overhead {
    size_t samples = 0;
    double share_p50 = 0, share_p90 = 0, gap_us_p50 = 0, step_us_p50 = 0;
  };
  Overhead overhead() const;
  void MarkIdle() { idle_.store(true); }

 private:
  RemoteWorker() = default;

  std::unique_ptr<transport::Publisher> pub_;
  std::unique_ptr<transport::Subscriber> sub_;
  std::unique_ptr<transport::Waiter> waiter_;
  std::mutex status_mu_;  // the status subscriber is read from the scheduler and the Forward thread
  std::unique_ptr<transport::Subscriber> status_;
  std::map<std::string, int32_t> worker_pids_;  // by worker name (tensor-parallel ranks are several)
  // Reads node_status; true when a worker (by name) runs in another process than it did before.
  bool WorkerRestarted();
  std::chrono::milliseconds timeout_{60000};
  int pipeline_depth_ = 1;
  std::atomic<uint64_t> last_sent_{0};     // the newest batch id published (Send's thread)
  std::atomic<uint64_t> lost_through_{0};  // batches up to this id went down with a lost worker
  void MarkLost();
  transport::Received held_;  // a result for a later batch than the one awaited (Receive's thread)
  std::atomic<bool> lost_{false};
  std::atomic<int32_t> worker_request_states_{-1};
  bool was_connected_ = false;              // TakeWorkerLost's last observation
  uint64_t dropped_ = 0;

  // Overhead samples (a ring), written by the Forward thread, read by the scheduler thread.
  static constexpr size_t kSamples = 2048;
  mutable std::mutex overhead_mu_;
  std::vector<std::pair<float, float>> samples_;  // (gap us, step us)
  size_t next_sample_ = 0;
  std::chrono::steady_clock::time_point last_result_{};
  bool have_last_ = false;
  std::atomic<bool> idle_{true};
};

}  // namespace radixserve::nodes
