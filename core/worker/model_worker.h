// ModelWorker: the Worker interface (core/scheduler/worker.h) over the CPU
// LlamaModel. Keeps the mirror of req-to-token rows that ForwardBatch patches
// (prefix slots once, new slots every step), resolves future-token
// placeholders from the token it sampled last for a row, runs one Forward over
// all sequences, and samples greedily (argmax; lowest id on ties).
// Non-greedy sampling is refused until the shared sampler is wired in.
// Thread-compatible: one Forward at a time.
#pragma once

#include <memory>
#include <vector>

#include "core/model/kv_cache.h"
#include "core/model/llama_model.h"
#include "core/scheduler/worker.h"

namespace radixserve {

class ModelWorker final : public sched::Worker {
 public:
  // num_slots must exceed the scheduler's highest KV slot (max_total_tokens + page_size).
  static Result<std::unique_ptr<ModelWorker>> Create(std::shared_ptr<model::LlamaModel> model, int64_t num_slots,
                                                     int32_t num_rows, int32_t max_context_len);
  Status Forward(const sched::ForwardBatch& batch, sched::ForwardResult* result) override;

 private:
  ModelWorker() = default;

  std::shared_ptr<model::LlamaModel> model_;
  std::unique_ptr<model::KvCache> kv_;
  int32_t num_rows_ = 0;
  int32_t max_context_len_ = 0;
  std::vector<int32_t> rows_;
  std::vector<int32_t> last_sampled_;
  std::vector<int32_t> tokens_;
  std::vector<model::SequenceInput> seqs_;
  std::vector<float> logits_;
};

}  // namespace radixserve
