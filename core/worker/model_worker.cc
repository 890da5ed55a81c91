#include "core/worker/model_worker.h"

#include <glog/logging.h>

#include <algorithm>
#include <limits>
#include <string>

namespace radixserve {

Result<std::unique_ptr<ModelWorker>> ModelWorker::Create(std::unique_ptr<model::ModelBackend> backend, int32_t num_rows,
                                                         int32_t max_context_len) {
  if (!backend) return Status::InvalidArgument("ModelWorker: no model backend");
  std::unique_ptr<ModelWorker> w(new ModelWorker());
  w->sampler_ = std::make_unique<sampling::Sampler>(backend->config().vocab_size);
  w->model_ = std::move(backend);
  w->num_rows_ = num_rows;
  w->max_context_len_ = max_context_len;
  w->rows_.assign(static_cast<size_t>(num_rows) * max_context_len, 0);
  w->last_sampled_.assign(num_rows, 0);
  return w;
}

Result<std::unique_ptr<ModelWorker>> ModelWorker::Create(std::shared_ptr<model::LlamaModel> model, int64_t num_slots,
                                                         int32_t num_rows, int32_t max_context_len) {
  RS_ASSIGN_OR_RETURN(std::unique_ptr<model::ModelBackend> backend, model::MakeCpuBackend(std::move(model), num_slots));
  return Create(std::move(backend), num_rows, max_context_len);
}

Result<ModelWorker::RequestState*> ModelWorker::StateFor(const sched::ForwardBatch& batch, const sched::ForwardReq& f,
                                                         std::span<const int32_t> new_tokens) {
  if (!f.new_state) {
    auto it = states_.find(f.rid);
    if (it != states_.end()) return it->second.get();
    return Status::FailedPrecondition("request " + std::to_string(f.rid) +
                                      " has no sampling state here: its first sampled step never reached this worker");
  }
  SamplingParams p = f.sampling;
  if (Status s = p.Validate(); !s.ok())
    return Status::InvalidArgument("request " + std::to_string(f.rid) + ": " + s.message());
  if (f.history_offset < 0 || f.history_len < 0 ||
      size_t(f.history_offset) + size_t(f.history_len) > batch.history_ids.size())
    return Status::OutOfRange("request " + std::to_string(f.rid) + ": history outside the batch");
  // The penalty history: the tokens before this step (sent with the record) and this step's inputs.
  prompt_scratch_.assign(batch.history_ids.begin() + f.history_offset,
                         batch.history_ids.begin() + f.history_offset + f.history_len);
  for (int32_t t : new_tokens)
    if (t != sched::kFutureToken) prompt_scratch_.push_back(t);
  uint64_t seed = p.has_seed ? p.seed : f.rid;
  auto state = std::make_unique<RequestState>(p, seed, prompt_scratch_);
  if (f.grammar_kind != grammar::GrammarKind::kNone) {
    if (!grammars_)
      return Status::Unsupported("request " + std::to_string(f.rid) +
                                 ": structured output needs the model's tokenizer, which this worker has not loaded");
    if (f.grammar_offset < 0 || f.grammar_len < 0 ||
        size_t(f.grammar_offset) + size_t(f.grammar_len) > batch.grammar_text.size())
      return Status::OutOfRange("request " + std::to_string(f.rid) + ": grammar outside the batch");
    grammar::GrammarSpec spec{f.grammar_kind,
                              std::string(batch.grammar_text.data() + f.grammar_offset, f.grammar_len)};
    auto compiled = grammars_->Get(spec);
    if (!compiled.ok())
      return Status::InvalidArgument("request " + std::to_string(f.rid) + ": " + compiled.status().message());
    if ((*compiled)->vocab().size() > model_->config().vocab_size)
      return Status::FailedPrecondition("the tokenizer's " + std::to_string((*compiled)->vocab().size()) +
                                        " tokens outnumber the model's " + std::to_string(model_->config().vocab_size));
    if (f.output_begin < 0)
      return Status::InvalidArgument("request " + std::to_string(f.rid) + ": a grammar without its output's position");
    state->matcher = std::make_unique<grammar::GrammarMatcher>(*compiled);
    state->output_begin = f.output_begin;
    // A resumed request replays the output it made before (the tokens from output_begin on).
    for (size_t i = f.output_begin; i < prompt_scratch_.size(); ++i, ++state->accepted)
      if (!state->matcher->AcceptToken(prompt_scratch_[i]))
        return Status::Internal("request " + std::to_string(f.rid) + ": its earlier output breaks its grammar");
  }
  RequestState* raw = state.get();
  states_[f.rid] = std::move(state);
  return raw;
}

bool ModelWorker::ApplyGrammar(RequestState& st, std::span<float> logits) {
  grammar::GrammarMatcher& m = *st.matcher;
  if (m.terminated()) return false;
  const grammar::TokenVocab& v = m.grammar().vocab();
  mask_.resize(v.mask_words());
  m.FillNextTokenBitmask(mask_.data());
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const int32_t vocab = static_cast<int32_t>(logits.size());
  bool any = false;
  for (int32_t w = 0; w < v.mask_words(); ++w) {
    const uint32_t bits = mask_[w];
    if (bits == 0xFFFFFFFFu) {
      any = true;
      continue;
    }
    any |= bits != 0;
    const int32_t end = std::min(vocab, (w + 1) * 32);
    for (int32_t id = w * 32; id < end; ++id)
      if (!((bits >> (id & 31)) & 1)) logits[id] = kNegInf;
  }
  // Model rows past the tokenizer's vocabulary (padding) are never allowed.
  for (int32_t id = v.size(); id < vocab; ++id) logits[id] = kNegInf;
  return any;
}

Status ModelWorker::SyncGrammar(RequestState& st, const sched::ForwardReq& f) {
  const int32_t held = f.prefix_len + f.extend_len - st.output_begin;  // output tokens the scheduler has
  if (held == st.accepted) return Status::Ok();
  if (held < st.accepted) {
    RS_RETURN_IF_ERROR(st.matcher->Rollback(st.accepted - held));
    st.accepted = held;
    return Status::Ok();
  }
  // The missing output is among this step's inputs.
  for (int32_t p = st.output_begin + st.accepted; p < f.prefix_len + f.extend_len; ++p, ++st.accepted) {
    if (p < f.prefix_len || !st.matcher->AcceptToken(tokens_[f.token_offset + p - f.prefix_len]))
      return Status::Internal("request " + std::to_string(f.rid) + ": its grammar cannot follow output position " +
                              std::to_string(p));
  }
  return Status::Ok();
}

Status ModelWorker::AdvanceGrammar(RequestState& st, uint64_t rid, int32_t* token) {
  grammar::GrammarMatcher& m = *st.matcher;
  if (!m.terminated() && m.AcceptToken(*token)) {
    ++st.accepted;
    return Status::Ok();
  }
  const auto eos = m.grammar().vocab().eos_ids();
  if (m.terminated() || m.MustEnd()) {
    // The grammar ended on EOS (the overlap loop ran one step past it): the token is discarded.
    *token = eos.empty() ? 0 : eos[0];
    return Status::Ok();
  }
  bool allowed_any = false;
  mask_.resize(m.grammar().vocab().mask_words());
  m.FillNextTokenBitmask(mask_.data());
  for (uint32_t w : mask_) allowed_any |= w != 0;
  if (!allowed_any) {
    // No token of the vocabulary spells what the grammar needs next: EOS ends the request.
    LOG(WARNING) << "request " << rid << ": no token of the vocabulary continues its grammar; ending it";
    *token = eos.empty() ? 0 : eos[0];
    return Status::Ok();
  }
  return Status::Internal("request " + std::to_string(rid) + ": sampled token " + std::to_string(*token) +
                          " outside its grammar's mask");
}

Status ModelWorker::ForwardStage(const sched::ForwardBatch& batch, std::span<const float> hidden_in,
                                 std::vector<float>* hidden_out, sched::ForwardResult* result) {
  Status s = RunStep(batch, hidden_in, hidden_out, result);
  // Releases apply whatever the step's outcome: the scheduler recycles those requests either way.
  ApplyReleases(batch);
  return s;
}

Status ModelWorker::RunStep(const sched::ForwardBatch& batch, std::span<const float> hidden_in,
                            std::vector<float>* hidden_out, sched::ForwardResult* result) {
  result->batch_id = batch.batch_id;
  if (!model_->last_stage() && hidden_out == nullptr)
    return Status::FailedPrecondition("model worker: a pipeline stage before the last needs somewhere to put its output");
  if (hidden_out) hidden_out->clear();
  if (batch.reqs.empty()) {  // a batch that only carries releases
    result->next_token_ids.clear();
    result->logprobs.clear();
    result->top_n = 0;
    result->top_ids.clear();
    result->top_logprobs.clear();
    return Status::Ok();
  }
  const int32_t vocab = model_->config().vocab_size;
  seqs_.clear();
  tokens_.assign(batch.input_ids.begin(), batch.input_ids.end());
  for (const sched::ForwardReq& f : batch.reqs) {
    if (f.row < 0 || f.row >= num_rows_ || f.prefix_len < 0 || f.extend_len < 0 ||
        f.prefix_len + f.extend_len > max_context_len_)
      return Status::OutOfRange("model worker: row " + std::to_string(f.row) + " or length out of range");
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
  model::ForwardOptions fo;
  fo.step = batch.batch_id;  // tensor-parallel ranks match their all-reduces by it
  fo.hidden_in = hidden_in;
  if (!model_->last_stage()) {  // the stages after this one sample
    hidden_out->resize(tokens_.size() * static_cast<size_t>(model_->config().dim));
    fo.hidden_out = *hidden_out;
    result->next_token_ids.clear();
    return model_->Forward(seqs_, {}, fo);
  }
  bool any_logprob = false;
  int32_t top_n = 0;
  for (const auto& f : batch.reqs) {
    any_logprob |= f.return_logprob;
    if (f.return_logprob) top_n = std::max(top_n, std::clamp(f.top_logprobs_num, 0, sampling::kMaxTopLogprobs));
  }
  // Each sampled request's state; the parameters each output row samples with.
  const size_t n = batch.reqs.size();
  step_states_.assign(n, nullptr);
  auto params_of = [&](size_t i) {
    SamplingParams p = step_states_[i]->params;
    const sched::ForwardReq& f = batch.reqs[i];
    if (f.return_logprob) p.logprobs = std::max(p.logprobs, std::clamp(f.top_logprobs_num, 0, top_n));
    return p;
  };
  for (size_t i = 0; i < n; ++i) {
    const sched::ForwardReq& f = batch.reqs[i];
    if (!f.sample) continue;  // a non-final chunk: its token is discarded by the scheduler
    RS_ASSIGN_OR_RETURN(step_states_[i],
                        StateFor(batch, f, std::span<const int32_t>(tokens_.data() + f.token_offset, f.extend_len)));
    if (step_states_[i]->matcher && !f.new_state) RS_RETURN_IF_ERROR(SyncGrammar(*step_states_[i], f));
  }
  bool constrained = false;
  for (size_t i = 0; i < n; ++i) constrained |= step_states_[i] != nullptr && step_states_[i]->matcher != nullptr;
  const bool on_device = model_->samples_on_device();
  if (on_device) {
    // Rows that sample nothing take a plain argmax (discarded); the others draw from their
    // request's generator here, in request order, as the host sampler would.
    device_rows_.assign(n, sampling::RowSampling{});
    device_counts_.clear();
    device_suppressed_.clear();
    // Constrained rows' grammar masks go down with the rows (the others allow every token).
    const int64_t words = (vocab + 31) / 32;
    device_masks_.clear();
    if (constrained) device_masks_.assign(n * words, 0xFFFFFFFFu);
    for (size_t i = 0; i < n; ++i) {
      RequestState* st = step_states_[i];
      if (st == nullptr) continue;
      bool suppress = Suppressing(*st);
      if (st->matcher) {
        uint32_t* row = device_masks_.data() + i * words;
        std::fill(row, row + words, 0u);
        if (!st->matcher->terminated()) st->matcher->FillNextTokenBitmask(row);
        suppress = suppress && !st->matcher->MustEnd();
      }
      device_rows_[i] = sampling::MakeRowSampling(
          params_of(i), st->sampler, suppress ? std::span<const int32_t>(eog_ids_) : std::span<const int32_t>(),
          &device_counts_, &device_suppressed_);
    }
    device_out_.resize(n);
    model::DeviceSampling ds{device_rows_, device_counts_, device_suppressed_, device_out_};
    if (constrained) {
      ds.token_masks = device_masks_;
      ds.mask_words = words;
    }
    fo.sampling = &ds;
    RS_RETURN_IF_ERROR(model_->Forward(seqs_, {}, fo));
  } else {
    logits_.resize(n * vocab);
    RS_RETURN_IF_ERROR(model_->Forward(seqs_, logits_, fo));
  }

  result->next_token_ids.resize(n);
  result->logprobs.assign(any_logprob ? n : 0, 0.0f);
  result->top_n = top_n;
  result->top_ids.assign(n * top_n, -1);
  result->top_logprobs.assign(n * top_n, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    const sched::ForwardReq& f = batch.reqs[i];
    RequestState* st = step_states_[i];
    if (st == nullptr) {
      result->next_token_ids[i] = 0;
      continue;
    }
    sampling::SampleResult r;
    if (on_device) {
      const sampling::RowSample& d = device_out_[i];
      r.token = d.token;
      r.logprob = d.logprob;
      r.num_top = device_rows_[i].top_logprobs;
      for (int32_t k = 0; k < r.num_top; ++k) r.top[k] = {d.top_ids[k], d.top_logprobs[k]};
      if (st->matcher) RS_RETURN_IF_ERROR(AdvanceGrammar(*st, f.rid, &r.token));
    } else if (st->matcher) {
      std::span<float> row(logits_.data() + i * vocab, vocab);
      if (ApplyGrammar(*st, row)) {
        // EOS stays allowed where the grammar must end, whatever min_new_tokens says.
        const bool suppress = Suppressing(*st) && !st->matcher->MustEnd();
        r = sampler_->Sample(params_of(i), row, st->sampler,
                             suppress ? std::span<const int32_t>(eog_ids_) : std::span<const int32_t>());
      }
      RS_RETURN_IF_ERROR(AdvanceGrammar(*st, f.rid, &r.token));
    } else {
      r = sampler_->Sample(params_of(i), std::span<float>(logits_.data() + i * vocab, vocab), st->sampler,
                           Suppressing(*st) ? std::span<const int32_t>(eog_ids_) : std::span<const int32_t>());
    }
    st->sampler.Accept(r.token);
    ++st->generated;
    result->next_token_ids[i] = r.token;
    last_sampled_[f.row] = r.token;
    if (f.return_logprob) {
      result->logprobs[i] = r.logprob;
      for (int32_t k = 0; k < std::min(r.num_top, top_n); ++k) {
        result->top_ids[i * top_n + k] = r.top[k].token;
        result->top_logprobs[i * top_n + k] = r.top[k].logprob;
      }
    }
  }
  return Status::Ok();
}

}  // namespace radixserve
