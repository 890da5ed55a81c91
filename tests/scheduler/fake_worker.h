// FakeWorker: a deterministic stand-in for the model, for tests and
// benchmarks. Each KV slot stores (token, position, rolling hash of the whole
// prefix); the next token is a function of the hash at the last position,
// read through the worker's own mirror of the req-to-token rows. So outputs
// depend only on the token sequence, and any slot bookkeeping error (a wrong
// row entry, a slot reused while still needed) changes them. With
// verify = true it also checks every row it reads, position by position, and
// the request lifetime of worker.h: each state created once (new_state), used
// only while it lives, released exactly once, never while in the batch.
// Thread-compatible: one caller at a time (the scheduler or its AsyncWorker).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_set>
#include <vector>

#include "core/scheduler/scheduler_config.h"
#include "core/scheduler/worker.h"

namespace radixserve::sched {

struct FakeWorkerOptions {
  int32_t vocab_size = 1000;
  int32_t eos_id = 2;
  int32_t eos_one_in = 0;  // > 0: EOS whenever hash % eos_one_in == 0
  int64_t num_slots = 1 << 16;   // >= the allocator's highest slot + 1
  int32_t num_rows = 256;
  int32_t max_context_len = 8192;
  bool verify = true;
};

// `o` with its pool and mirror sized for a scheduler with config `c` (slots past the allocator's
// highest, one row per running request, rows a little past the context).
inline FakeWorkerOptions FakeWorkerFor(const SchedulerConfig& c, FakeWorkerOptions o = {}) {
  o.num_slots = c.max_total_tokens + 64;
  o.num_rows = c.max_running_requests;
  o.max_context_len = c.max_req_len + 2;
  return o;
}

class FakeWorker final : public Worker {
 public:
  explicit FakeWorker(const FakeWorkerOptions& opt);
  Status Forward(const ForwardBatch& batch, ForwardResult* result) override;

  // What the worker samples after `tokens` (no KV involved): the reference for tests.
  int32_t Reference(std::span<const int32_t> tokens) const;
  // Greedy generation by Reference until max_new tokens or EOS (unless ignore_eos).
  std::vector<int32_t> ReferenceGenerate(std::span<const int32_t> prompt, int32_t max_new, bool ignore_eos) const;
  int64_t forwards() const { return forwards_; }
  // Request states alive now (created, not released); 0 whenever the scheduler is idle.
  size_t live_states() const { return live_.size(); }
  int32_t request_states() const override { return static_cast<int32_t>(live_.size()); }
  int64_t states_created() const { return created_; }
  int64_t states_released() const { return released_; }

 private:
  struct Kv {
    int32_t token = -1;
    int32_t pos = -1;
    uint64_t hash = 0;
  };
  static uint64_t Chain(uint64_t prev, int32_t token, int32_t pos);
  int32_t TokenFromHash(uint64_t h) const;
  Status CheckLifetime(const ForwardBatch& batch);

  FakeWorkerOptions opt_;
  std::vector<Kv> kv_;
  std::vector<int32_t> rows_;      // mirror: num_rows x max_context_len
  std::vector<int32_t> last_sampled_;
  int64_t forwards_ = 0;
  std::unordered_set<uint64_t> live_;
  std::unordered_set<uint64_t> in_batch_;
  int64_t created_ = 0, released_ = 0;
};

}  // namespace radixserve::sched
