#include "core/scheduler/async_worker.h"

namespace radixserve::sched {

AsyncWorker::AsyncWorker(Worker* worker)
    : worker_(worker), pipelined_(worker->pipeline_depth() > 1), thread_([this] { Loop(); }) {
  if (pipelined_) receiver_ = std::thread([this] { ReceiveLoop(); });
}

AsyncWorker::~AsyncWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (receiver_.joinable()) receiver_.join();
}

void AsyncWorker::Submit(Job* job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    job->done = false;
    queue_.push_back(job);
  }
  cv_.notify_all();
}

Status AsyncWorker::Wait(Job* job) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return job->done; });
  return job->status;
}

void AsyncWorker::Loop() {
  for (;;) {
    Job* job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      job = queue_.front();
      queue_.pop_front();
      sending_ = pipelined_;
    }
    if (pipelined_) {
      Status s = worker_->Send(*job->batch);
      {
        std::lock_guard<std::mutex> lock(mu_);
        sending_ = false;
        if (s.ok()) {
          sent_.push_back(job);
        } else {  // never reached the worker: no result will come for it
          job->status = std::move(s);
          job->done = true;
        }
      }
      cv_.notify_all();
      continue;
    }
    Status s = worker_->Forward(*job->batch, job->result);
    {
      std::lock_guard<std::mutex> lock(mu_);
      job->status = std::move(s);
      job->done = true;
    }
    cv_.notify_all();
  }
}

void AsyncWorker::ReceiveLoop() {
  for (;;) {
    Job* job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return (stop_ && queue_.empty() && !sending_) || !sent_.empty(); });
      if (sent_.empty()) return;
      job = sent_.front();
    }
    Status s = worker_->Receive(*job->batch, job->result);
    {
      std::lock_guard<std::mutex> lock(mu_);
      sent_.pop_front();
      job->status = std::move(s);
      job->done = true;
    }
    cv_.notify_all();
  }
}

}  // namespace radixserve::sched
