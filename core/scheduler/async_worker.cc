#include "core/scheduler/async_worker.h"

namespace radixserve::sched {

AsyncWorker::AsyncWorker(Worker* worker) : worker_(worker), thread_([this] { Loop(); }) {}

AsyncWorker::~AsyncWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
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

}  // namespace radixserve::sched
