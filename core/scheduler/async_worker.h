// AsyncWorker: runs a Worker on its own thread for the overlap loop. Batches
// are executed strictly in submission order; Wait returns one batch's status
// once its result is ready. Submit/Wait are called from the scheduler thread.
// A pipelined worker (pipeline_depth() > 1) gets a second thread: one sends
// each batch as soon as it is submitted, the other receives results in order,
// so that several batches are at the worker's stages at once.
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
  void ReceiveLoop();  // pipelined workers only

  Worker* worker_;
  const bool pipelined_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job*> queue_;
  std::deque<Job*> sent_;  // pipelined: sent, result not yet received
  bool sending_ = false;   // pipelined: a job is between the queue and sent_
  bool stop_ = false;
  std::thread thread_;
  std::thread receiver_;
};

}  // namespace radixserve::sched
