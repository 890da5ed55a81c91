#include "kernels/cpu/thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RS_CPU_RELAX() _mm_pause()
#else
#define RS_CPU_RELAX() ((void)0)
#endif

namespace radixserve::kernels {
namespace {
// Waiting: spin first (decode steps issue loops microseconds apart and a futex
// wake-up costs tens of microseconds on a VM), then yield the core (when other
// processes compete for it, the thread we wait for may need it), then sleep.
constexpr int kSpinRounds = 2000;
constexpr int kYieldRounds = 2000 + 100;

// Returns true when the caller should block on the futex now.
inline bool Backoff(int round) {
  if (round < kSpinRounds) {
    RS_CPU_RELAX();
    return false;
  }
  if (round < kYieldRounds) {
    std::this_thread::yield();
    return false;
  }
  return true;
}
}  // namespace

ThreadPool::ThreadPool(int num_threads) : num_threads_(num_threads < 1 ? 1 : num_threads) {
  workers_.reserve(num_threads_ - 1);
  for (int t = 1; t < num_threads_; ++t) workers_.emplace_back([this, t] { WorkerLoop(t); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::DrainTasks(int thread) {
  for (;;) {
    int64_t task = next_task_.fetch_add(1, std::memory_order_relaxed);
    if (task >= num_tasks_) return;
    fn_(ctx_, task, thread);
  }
}

void ThreadPool::Run(int64_t num_tasks, TaskFn fn, void* ctx) {
  if (num_tasks <= 0) return;
  if (workers_.empty() || num_tasks == 1) {
    for (int64_t t = 0; t < num_tasks; ++t) fn(ctx, t, 0);
    return;
  }
  fn_ = fn;
  ctx_ = ctx;
  num_tasks_ = num_tasks;
  next_task_.store(0, std::memory_order_relaxed);
  busy_workers_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  DrainTasks(0);
  // Wait for workers to finish their last task; spin first, then sleep.
  for (int round = 0;; ++round) {
    int busy = busy_workers_.load(std::memory_order_acquire);
    if (busy == 0) break;
    if (Backoff(round)) busy_workers_.wait(busy, std::memory_order_acquire);
  }
}

void ThreadPool::WorkerLoop(int thread) {
  uint32_t seen = 0;  // generation_ at construction: a Run() may start before this thread does
  for (;;) {
    for (int round = 0;; ++round) {
      uint32_t g = generation_.load(std::memory_order_acquire);
      if (g != seen) {
        seen = g;
        break;
      }
      if (Backoff(round)) generation_.wait(g, std::memory_order_acquire);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    DrainTasks(thread);
    if (busy_workers_.fetch_sub(1, std::memory_order_acq_rel) == 1) busy_workers_.notify_one();
  }
}

}  // namespace radixserve::kernels
