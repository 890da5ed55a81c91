#include "core/worker/model_worker.h"

#include <cmath>
#include <string>

namespace radixserve {

Result<std::unique_ptr<ModelWorker>> ModelWorker::Create(std::shared_ptr<model::LlamaModel> model, int64_t num_slots,
                                                         int32_t num_rows, int32_t max_context_len) {
  std::unique_ptr<ModelWorker> w(new ModelWorker());
  RS_ASSIGN_OR_RETURN(w->kv_, model->CreateKvCache(num_slots));
  w->model_ = std::move(model);
  w->num_rows_ = num_rows;
  w->max_context_len_ = max_context_len;
  w->rows_.assign(static_cast<size_t>(num_rows) * max_context_len, 0);
  w->last_sampled_.assign(num_rows, 0);
  return w;
}

Status ModelWorker::Forward(const sched::ForwardBatch& batch, sched::ForwardResult* result) {
  const int32_t vocab = model_->config().vocab_size;
  seqs_.clear();
  tokens_.assign(batch.input_ids.begin(), batch.input_ids.end());
  for (const sched::ForwardReq& f : batch.reqs) {
    if (f.row < 0 || f.row >= num_rows_ || f.prefix_len + f.extend_len > max_context_len_)
      return Status::OutOfRange("model worker: row " + std::to_string(f.row) + " or length out of range");
    if (!f.sampling.is_greedy())
      return Status::Unsupported("model worker: only greedy sampling is wired in (rid " + std::to_string(f.rid) + ")");
    int32_t* row = rows_.data() + static_cast<size_t>(f.row) * max_context_len_;
    for (int32_t p = f.sync_begin; p < f.prefix_len; ++p) row[p] = batch.prefix_slots[f.prefix_offset + p - f.sync_begin];
    for (int32_t k = 0; k < f.extend_len; ++k) {
      row[f.prefix_len + k] = batch.out_cache_loc[f.token_offset + k];
      int32_t& t = tokens_[f.token_offset + k];
      if (t == sched::kFutureToken) t = last_sampled_[f.row];
    }
  }
  for (const sched::ForwardReq& f : batch.reqs) {
    const int32_t* row = rows_.data() + static_cast<size_t>(f.row) * max_context_len_;
    model::SequenceInput s;
    s.cached_len = f.prefix_len;
    s.new_tokens = std::span<const int32_t>(tokens_.data() + f.token_offset, f.extend_len);
    s.slots = std::span<const int32_t>(row, f.prefix_len + f.extend_len);
    seqs_.push_back(s);
  }
  logits_.resize(static_cast<size_t>(batch.reqs.size()) * vocab);
  RS_RETURN_IF_ERROR(model_->Forward(seqs_, *kv_, logits_));

  result->batch_id = batch.batch_id;
  result->next_token_ids.resize(batch.reqs.size());
  bool any_logprob = false;
  for (const auto& f : batch.reqs) any_logprob |= f.return_logprob;
  result->logprobs.assign(any_logprob ? batch.reqs.size() : 0, 0.0f);
  for (size_t i = 0; i < batch.reqs.size(); ++i) {
    const float* l = logits_.data() + i * vocab;
    int32_t best = 0;
    for (int32_t v = 1; v < vocab; ++v)
      if (l[v] > l[best]) best = v;
    result->next_token_ids[i] = best;
    last_sampled_[batch.reqs[i].row] = best;
    if (batch.reqs[i].return_logprob) {
      double sum = 0;
      for (int32_t v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(l[v] - l[best]));
      result->logprobs[i] = static_cast<float>(-std::log(sum));
    }
  }
  return Status::Ok();
}

}  // namespace radixserve
