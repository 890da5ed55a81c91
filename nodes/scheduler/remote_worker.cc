#include "nodes/scheduler/remote_worker.h"

#include <glog/logging.h>

#include <algorithm>

namespace radixserve::nodes {

Result<std::unique_ptr<RemoteWorker>> RemoteWorker::Create(const transport::Topic& batch_topic,
                                                           const transport::Topic& result_topic,
                                                           const transport::Topic& status_topic,
                                                           const transport::ChannelOptions& options,
                                                           std::chrono::milliseconds timeout,
                                                           int pipeline_depth) {
  std::unique_ptr<RemoteWorker> w(new RemoteWorker());
  RS_ASSIGN_OR_RETURN(w->pub_, transport::Publisher::Create(batch_topic, options));
  RS_ASSIGN_OR_RETURN(w->sub_, transport::Subscriber::Create(result_topic, options));
  RS_ASSIGN_OR_RETURN(w->waiter_, transport::Waiter::Create());
  RS_RETURN_IF_ERROR(w->waiter_->Attach(*w->sub_));
  transport::ChannelOptions status_options = options;
  status_options.block_when_full = false;
  RS_ASSIGN_OR_RETURN(w->status_, transport::Subscriber::Create(status_topic, status_options));
  w->timeout_ = timeout;
  w->pipeline_depth_ = std::max(1, pipeline_depth);
  return w;
}

bool RemoteWorker::WorkerRestarted() {
  std::lock_guard<std::mutex> l(status_mu_);
  bool restarted = false;
  while (transport::Received r = status_->TryTake()) {
    auto m = transport::ValidateNodeStatus(r.data(), r.size());
    if (!m.ok() || std::string_view((*m)->component) != "worker") continue;
    // By name: tensor-parallel ranks are several workers, and any one restarting loses its KV shard.
    int32_t& pid = worker_pids_[(*m)->name];
    if (pid != 0 && (*m)->pid != pid) restarted = true;
    pid = (*m)->pid;
  }
  return restarted;
}

bool RemoteWorker::TakeWorkerLost() {
  if (WorkerRestarted()) MarkLost();
  bool connected = pub_->HasSubscribers();
  if (was_connected_ && !connected) MarkLost();
  was_connected_ = connected;
  return lost_.exchange(false);
}

Status RemoteWorker::Send(const sched::ForwardBatch& batch) {
  size_t bytes = ForwardBatchBytes(batch);
  RS_ASSIGN_OR_RETURN(void* chunk, pub_->Loan(bytes));
  Status enc = EncodeForwardBatch(batch, chunk, bytes);
  if (!enc.ok()) {
    pub_->Release(chunk);
    return enc;
  }
  pub_->Publish(chunk);
  last_sent_.store(batch.batch_id);
  return Status::Ok();
}

Status RemoteWorker::Forward(const sched::ForwardBatch& batch, sched::ForwardResult* result) {
  const auto sent_at = std::chrono::steady_clock::now();
  const bool continuous = !idle_.exchange(false) && have_last_;
  RS_RETURN_IF_ERROR(Send(batch));
  Status s = Receive(batch, result);
  const auto now = std::chrono::steady_clock::now();
  if (continuous) {  // the worker waited from the previous result until this batch was sent
    double gap = std::max(0.0, std::chrono::duration<double, std::micro>(sent_at - last_result_).count());
    double step = std::chrono::duration<double, std::micro>(now - last_result_).count();
    std::lock_guard<std::mutex> l(overhead_mu_);
    if (samples_.size() < kSamples) {
      samples_.emplace_back(float(gap), float(step));
    } else {
      samples_[next_sample_] = {float(gap), float(step)};
      next_sample_ = (next_sample_ + 1) % kSamples;
    }
  }
  last_result_ = now;
  have_last_ = true;
  return s;
}

void RemoteWorker::MarkLost() {
  lost_.store(true);
  lost_through_.store(last_sent_.load());
}

Status RemoteWorker::Receive(const sched::ForwardBatch& batch, sched::ForwardResult* result) {
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (true) {
    while (transport::Received r = held_ ? std::move(held_) : sub_->TryTake()) {
      auto m = transport::ValidateForwardResult(r.data(), r.size());
      if (!m.ok()) {
        ++dropped_;
        LOG(ERROR) << "dropped a malformed forward result: " << m.status().ToString();
        continue;
      }
      if ((*m)->batch_id < batch.batch_id) {  // a late answer to a batch that already failed
        ++dropped_;
        continue;
      }
      if ((*m)->batch_id > batch.batch_id) {  // answers come in order: this batch's never will
        held_ = std::move(r);
        return Status::Unavailable("the worker answered batch " + std::to_string((*m)->batch_id) +
                                   " but never batch " + std::to_string(batch.batch_id));
      }
      Status s = DecodeForwardResult(*m, result);
      worker_request_states_.store(result->request_states, std::memory_order_relaxed);
      if (s.ok() && result->next_token_ids.size() != batch.reqs.size())
        return Status::Corrupt("worker answered " + std::to_string(result->next_token_ids.size()) +
                               " tokens for a batch of " + std::to_string(batch.reqs.size()));
      return s;
    }
    // Pipelined: a loss seen while receiving an earlier batch took this one (sent by then) too.
    if (batch.batch_id <= lost_through_.load())
      return Status::Unavailable("the worker was lost with batch " + std::to_string(batch.batch_id) + " in hand");
    if (WorkerRestarted()) {  // a new worker process: the batch died with the old one
      MarkLost();
      return Status::Unavailable("the worker restarted while running batch " + std::to_string(batch.batch_id));
    }
    if (!pub_->HasSubscribers()) {  // the worker died with this batch in hand
      MarkLost();
      return Status::Unavailable("the worker is gone (it stopped while running batch " +
                                 std::to_string(batch.batch_id) + ")");
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      MarkLost();  // its state is unknown: treat it as lost
      return Status::Unavailable("worker did not answer batch " + std::to_string(batch.batch_id) + " within " +
                                 std::to_string(timeout_.count()) + " ms");
    }
    waiter_->Wait(std::chrono::duration_cast<std::chrono::microseconds>(
        std::min<std::chrono::steady_clock::duration>(deadline - now, std::chrono::milliseconds(100))));
  }
}

RemoteWorker::Overhead RemoteWorker::overhead() const {
  std::vector<std::pair<float, float>> v;
  {
    std::lock_guard<std::mutex> l(overhead_mu_);
    v = samples_;
  }
  Overhead o;
  o.samples = v.size();
  if (v.empty()) return o;
  auto pct = [](std::vector<double> x, double q) {
    std::sort(x.begin(), x.end());
    double pos = q * double(x.size() - 1);
    size_t lo = static_cast<size_t>(pos);
    size_t hi = std::min(lo + 1, x.size() - 1);
    return x[lo] + (x[hi] - x[lo]) * (pos - double(lo));
  };
  std::vector<double> share, gap, step;
  for (auto [g, st] : v) {
    share.push_back(st > 0 ? g / st : 0);
    gap.push_back(g);
    step.push_back(st);
  }
  o.share_p50 = pct(share, 0.5);
  o.share_p90 = pct(share, 0.9);
  o.gap_us_p50 = pct(gap, 0.5);
  o.step_us_p50 = pct(step, 0.5);
  return o;
}

}  // namespace radixserve::nodes
