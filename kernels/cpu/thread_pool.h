// ThreadPool: a small persistent pool that runs data-parallel loops.
//
// The calling thread takes part in every loop, so a pool of N threads starts
// N-1 workers once and never creates threads per call. Tasks are handed out
// dynamically through an atomic counter. Waiters spin briefly, yield, then sleep
// on a futex (std::atomic::wait), so an idle pool costs no CPU.
// Thread-safety: ParallelFor may be called from one thread at a time; it is
// not reentrant (a task must not call ParallelFor on the same pool).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

namespace radixserve::kernels {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Runs fn(task, thread) for task in [0, num_tasks); thread is in [0, num_threads()).
  // Returns when every task has finished. No allocation.
  template <typename F>
  void ParallelFor(int64_t num_tasks, F&& fn) {
    using Fn = std::remove_reference_t<F>;
    Run(num_tasks,
        [](void* ctx, int64_t task, int thread) { (*static_cast<Fn*>(ctx))(task, thread); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }

 private:
  using TaskFn = void (*)(void* ctx, int64_t task, int thread);
  void Run(int64_t num_tasks, TaskFn fn, void* ctx);
  void WorkerLoop(int thread);
  void DrainTasks(int thread);

  const int num_threads_;
  std::vector<std::thread> workers_;
  // Job description, published by bumping generation_.
  TaskFn fn_ = nullptr;
  void* ctx_ = nullptr;
  int64_t num_tasks_ = 0;
  std::atomic<int64_t> next_task_{0};
  std::atomic<uint32_t> generation_{0};
  std::atomic<int> busy_workers_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace radixserve::kernels
