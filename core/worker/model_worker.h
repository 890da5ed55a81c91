// ModelWorker: the Worker interface (core/scheduler/worker.h) over a model backend (the CPU
// LlamaModel, or CudaModel on a GPU: core/model/model_backend.h). Keeps the mirror of req-to-token rows that ForwardBatch patches
// (prefix slots once, new slots every step), resolves future-token
// placeholders from the token it sampled last for a row, runs one Forward over
// all sequences, and samples each request with its own SamplerState
// (penalties, seed, temperature, top-k/p, min-p; EOS suppressed until
// min_new_tokens), returning the chosen token's logprob when asked. With a backend
// that samples where the logits are (a GPU's: samples_on_device()), each row goes
// down as a RowSampling (its parameters, penalty counts and the uniform its
// generator drew here), so no logits cross to the host and the tokens are the
// host sampler's. Request
// states live as worker.h says: created by new_state, dropped after the step
// of the batch that releases them.
// Thread-compatible: one Forward at a time.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "core/grammar/grammar_cache.h"
#include "core/grammar/matcher.h"
#include "core/model/kv_cache.h"
#include "core/model/llama_model.h"
#include "core/model/model_backend.h"
#include "core/sampling/row_sampler.h"
#include "core/sampling/sampler.h"
#include "core/scheduler/worker.h"

namespace radixserve {

// The sizes of a worker's KV pool and row mirror for a scheduler with these limits: slot ids up to
// max_total_tokens plus a page (256 covers every page size), one row per running request plus a
// spare, and rows a little past the context (the overlap loop may allocate a token beyond it).
struct WorkerShape {
  int64_t num_slots = 0;
  int32_t num_rows = 0;
  int32_t max_context_len = 0;
  static WorkerShape For(int64_t max_total_tokens, int32_t max_running_requests, int32_t context) {
    return {max_total_tokens + 256, max_running_requests + 1, context + 8};
  }
};

class ModelWorker final : public sched::Worker {
 public:
  // A backend's KV slots must exceed the scheduler's highest KV slot (max_total_tokens + page_size).
  static Result<std::unique_ptr<ModelWorker>> Create(std::unique_ptr<model::ModelBackend> backend, int32_t num_rows,
                                                     int32_t max_context_len);
  // The CPU backend over `model`, with num_slots KV slots.
  static Result<std::unique_ptr<ModelWorker>> Create(std::shared_ptr<model::LlamaModel> model, int64_t num_slots,
                                                     int32_t num_rows, int32_t max_context_len);
  static Result<std::unique_ptr<ModelWorker>> Create(std::shared_ptr<model::LlamaModel> model, const WorkerShape& s) {
    return Create(std::move(model), s.num_slots, s.num_rows, s.max_context_len);
  }
  Status Forward(const sched::ForwardBatch& batch, sched::ForwardResult* result) override {
    return ForwardStage(batch, {}, nullptr, result);
  }
  // One pipeline stage's step (the model's layer range): a stage after the first starts from
  // `hidden_in` ([new tokens][dim], from the stage before); a stage before the last leaves the
  // residual stream in *hidden_out and samples nothing (result->next_token_ids is empty).
  Status ForwardStage(const sched::ForwardBatch& batch, std::span<const float> hidden_in,
                      std::vector<float>* hidden_out, sched::ForwardResult* result);
  const model::ModelBackend& model() const { return *model_; }
  // Drops the states of the batch's released requests (what a step does after running).
  void ApplyReleases(const sched::ForwardBatch& batch) {
    for (uint64_t rid : batch.released_rids) states_.erase(rid);
  }

  // Grammars of constrained requests (structured output) compile through this cache, over its
  // vocabulary (the model's tokenizer). Without one, a constrained request fails its step.
  void set_grammar_cache(std::shared_ptr<grammar::GrammarCache> cache) { grammars_ = std::move(cache); }
  const grammar::GrammarCache* grammar_cache() const { return grammars_.get(); }

  // Tokens EOS-like for min_new_tokens: not sampled before that many tokens were generated.
  void set_end_of_generation_ids(std::vector<int32_t> ids) { eog_ids_ = std::move(ids); }
  size_t num_request_states() const { return states_.size(); }
  int32_t request_states() const override { return static_cast<int32_t>(states_.size()); }

 private:
  struct RequestState {
    SamplingParams params;  // normalised
    sampling::SamplerState sampler;
    int32_t generated = 0;
    std::unique_ptr<grammar::GrammarMatcher> matcher;  // structured output; null when unconstrained
    int32_t output_begin = 0;  // the position of the first output token (the prompt's length)
    int32_t accepted = 0;      // output tokens the matcher has taken
    RequestState(const SamplingParams& p, uint64_t seed, std::span<const int32_t> prompt)
        : params(p), sampler(seed, prompt) {}
  };
  ModelWorker() = default;
  Result<RequestState*> StateFor(const sched::ForwardBatch& batch, const sched::ForwardReq& f,
                                 std::span<const int32_t> new_tokens);
  // Whether this step's token must not be an end-of-generation id (before min_new_tokens).
  bool Suppressing(const RequestState& st) const {
    return st.generated < st.params.min_new_tokens && !st.params.ignore_eos && !eog_ids_.empty();
  }
  // Masks the row's logits to the tokens the request's grammar allows next (-inf elsewhere).
  // Returns false when it allows none (the grammar is complete, or ended on EOS).
  bool ApplyGrammar(RequestState& st, std::span<float> logits);
  // Feeds the sampled token to the request's matcher. Where the grammar allowed nothing (it ended,
  // or no token spells its next bytes) the token becomes EOS, which ends the request.
  Status AdvanceGrammar(RequestState& st, uint64_t rid, int32_t* token);
  // Brings the matcher to the output the scheduler holds at this step (prefix + new tokens): a
  // retraction can drop the last sampled token (roll back), a resumed step can carry output the
  // matcher has not taken (feed it from the step's inputs).
  Status SyncGrammar(RequestState& st, const sched::ForwardReq& f);
  Status RunStep(const sched::ForwardBatch& batch, std::span<const float> hidden_in, std::vector<float>* hidden_out,
                 sched::ForwardResult* result);

  std::unique_ptr<model::ModelBackend> model_;
  std::unique_ptr<sampling::Sampler> sampler_;
  int32_t num_rows_ = 0;
  int32_t max_context_len_ = 0;
  std::vector<int32_t> rows_;
  std::vector<int32_t> last_sampled_;
  std::vector<int32_t> tokens_;
  std::vector<model::SequenceInput> seqs_;
  std::vector<float> logits_;
  std::vector<RequestState*> step_states_;  // per request of the step; null where it samples nothing
  // A device-sampling step's rows, their lists and results (reused: no allocation once warm).
  std::vector<sampling::RowSampling> device_rows_;
  std::vector<sampling::TokenCount> device_counts_;
  std::vector<int32_t> device_suppressed_;
  std::vector<sampling::RowSample> device_out_;
  std::vector<int32_t> eog_ids_;
  std::unordered_map<uint64_t, std::unique_ptr<RequestState>> states_;
  std::vector<int32_t> prompt_scratch_;
  std::shared_ptr<grammar::GrammarCache> grammars_;
  std::vector<uint32_t> mask_;  // a grammar's bitmask over the vocabulary
  std::vector<uint32_t> device_masks_;  // a device step's rows' masks, [rows][words]
};

}  // namespace radixserve
