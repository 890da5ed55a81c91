// AsyncWorker: runs a Worker on its own thread for the overlap loop. Batches
// are executed strictly in submission order; Wait returns one batch's status
// once its result is ready. Submit/Wait are called from the scheduler thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "core/scheduler/worker.h"

namespace radixserve::sched {

class AsyncWorker {
 public:
  explicit AsyncWorker(Worker* worker);
  ~AsyncWorker();

  struct Job {
    const ForwardBatch* batch = nullptr;
    ForwardResult* result = nullptr;
    Status status;
    bool done = false;
  };
  // *job must stay alive until Wait(job) returns.
  void Submit(Job* job);
  Status Wait(Job* job);

 private:
  void Loop();

  Worker* worker_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job*> queue_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace radixserve::sched
