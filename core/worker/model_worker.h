// ModelWorker: the Worker interface (core/scheduler/worker.h) over the CPU
// LlamaModel. Keeps the mirror of req-to-token rows that ForwardBatch patches
// (prefix slots once, new slots every step), resolves future-token
// placeholders from the token it sampled last for a row, runs one Forward over
// all sequences, and samples each request with its own SamplerState
// (penalties, seed, temperature, top-k/p, min-p; EOS suppressed until
// min_new_tokens), returning the chosen token's logprob when asked.
// Thread-compatible: one Forward at a time.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "core/model/kv_cache.h"
#include "core/model/llama_model.h"
#include "core/sampling/sampler.h"
#include "core/scheduler/worker.h"

namespace radixserve {

class ModelWorker final : public sched::Worker {
 public:
  // num_slots must exceed the scheduler's highest KV slot (max_total_tokens + page_size).
  static Result<std::unique_ptr<ModelWorker>> Create(std::shared_ptr<model::LlamaModel> model, int64_t num_slots,
                                                     int32_t num_rows, int32_t max_context_len);
  Status Forward(const sched::ForwardBatch& batch, sched::ForwardResult* result) override;

  // Tokens EOS-like for min_new_tokens: not sampled before that many tokens were generated.
  void set_end_of_generation_ids(std::vector<int32_t> ids) { eog_ids_ = std::move(ids); }
  // Tokens of a request the worker has not seen as inputs (a cached prefix): they count for the
  // repetition penalty. Call before the request's first sampled step.
  void SetHistory(uint64_t rid, std::span<const int32_t> tokens);
  // Forgets a finished request's sampling state.
  void Release(uint64_t rid);
  size_t num_request_states() const { return states_.size(); }

 private:
  struct RequestState {
    SamplingParams params;  // normalised
    sampling::SamplerState sampler;
    int32_t generated = 0;
    RequestState(const SamplingParams& p, uint64_t seed, std::span<const int32_t> prompt)
        : params(p), sampler(seed, prompt) {}
  };
  ModelWorker() = default;
  Result<RequestState*> StateFor(const sched::ForwardReq& f, std::span<const int32_t> new_tokens);

  std::shared_ptr<model::LlamaModel> model_;
  std::unique_ptr<model::KvCache> kv_;
  std::unique_ptr<sampling::Sampler> sampler_;
  int32_t num_rows_ = 0;
  int32_t max_context_len_ = 0;
  std::vector<int32_t> rows_;
  std::vector<int32_t> last_sampled_;
  std::vector<int32_t> tokens_;
  std::vector<model::SequenceInput> seqs_;
  std::vector<float> logits_;
  std::vector<int32_t> eog_ids_;
  std::unordered_map<uint64_t, std::unique_ptr<RequestState>> states_;
  std::unordered_map<uint64_t, std::vector<int32_t>> history_;
  std::vector<int32_t> prompt_scratch_;
};

}  // namespace radixserve
