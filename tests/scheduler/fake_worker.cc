#include "tests/scheduler/fake_worker.h"

#include <string>

namespace radixserve::sched {

FakeWorker::FakeWorker(const FakeWorkerOptions& opt)
    : opt_(opt),
      kv_(opt.num_slots),
      rows_(static_cast<size_t>(opt.num_rows) * opt.max_context_len, -1),
      last_sampled_(opt.num_rows, -1) {}

uint64_t FakeWorker::Chain(uint64_t prev, int32_t token, int32_t pos) {
  uint64_t h = prev ^ (static_cast<uint64_t>(static_cast<uint32_t>(token)) * 0x9e3779b97f4a7c15ULL) ^
               (static_cast<uint64_t>(pos) << 32);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 29;
  return h;
}

int32_t FakeWorker::TokenFromHash(uint64_t h) const {
  if (opt_.eos_one_in > 0 && (h >> 7) % opt_.eos_one_in == 0) return opt_.eos_id;
  int32_t t = static_cast<int32_t>((h >> 17) % static_cast<uint64_t>(opt_.vocab_size));
  return t == opt_.eos_id ? t + 1 : t;
}

int32_t FakeWorker::Reference(std::span<const int32_t> tokens) const {
  uint64_t h = 0;
  for (size_t i = 0; i < tokens.size(); ++i) h = Chain(h, tokens[i], static_cast<int32_t>(i));
  return TokenFromHash(h);
}

std::vector<int32_t> FakeWorker::ReferenceGenerate(std::span<const int32_t> prompt, int32_t max_new,
                                                   bool ignore_eos) const {
  std::vector<int32_t> seq(prompt.begin(), prompt.end()), out;
  while (static_cast<int32_t>(out.size()) < max_new) {
    int32_t t = Reference(seq);
    out.push_back(t);
    seq.push_back(t);
    if (!ignore_eos && t == opt_.eos_id) break;
  }
  return out;
}

// The contract of worker.h, checked as the batch arrives; releases apply after the step.
Status FakeWorker::CheckLifetime(const ForwardBatch& batch) {
  in_batch_.clear();
  for (const ForwardReq& f : batch.reqs) {
    const std::string who = "fake worker: batch " + std::to_string(batch.batch_id) + ", rid " + std::to_string(f.rid);
    in_batch_.insert(f.rid);
    if (f.new_state) {
      if (!live_.insert(f.rid).second) return Status::Internal(who + ": state created twice");
      ++created_;
    } else if (f.sample && !live_.count(f.rid)) {
      return Status::Internal(who + ": sampled without a state (never created, or used after its release)");
    }
  }
  for (uint64_t rid : batch.released_rids) {
    const std::string who = "fake worker: batch " + std::to_string(batch.batch_id) + ", rid " + std::to_string(rid);
    if (in_batch_.count(rid)) return Status::Internal(who + ": released by the batch that runs it");
    if (!live_.count(rid)) return Status::Internal(who + ": released twice, or never created");
  }
  return Status::Ok();
}

Status FakeWorker::Forward(const ForwardBatch& batch, ForwardResult* result) {
  ++forwards_;
  if (opt_.verify) RS_RETURN_IF_ERROR(CheckLifetime(batch));
  for (uint64_t rid : batch.released_rids) released_ += static_cast<int64_t>(live_.erase(rid));
  result->batch_id = batch.batch_id;
  result->next_token_ids.resize(batch.reqs.size());
  result->logprobs.clear();
  bool any_logprob = false;
  for (const ForwardReq& f : batch.reqs) any_logprob |= f.return_logprob;
  if (any_logprob) result->logprobs.assign(batch.reqs.size(), 0.0f);
  for (size_t i = 0; i < batch.reqs.size(); ++i) {
    const ForwardReq& f = batch.reqs[i];
    if (f.row < 0 || f.row >= opt_.num_rows || f.prefix_len + f.extend_len > opt_.max_context_len)
      return Status::OutOfRange("fake worker: row or length out of range");
    int32_t* row = rows_.data() + static_cast<size_t>(f.row) * opt_.max_context_len;
    // Apply the row patch, then the new tokens' slots.
    for (int32_t p = f.sync_begin; p < f.prefix_len; ++p) row[p] = batch.prefix_slots[f.prefix_offset + p - f.sync_begin];
    if (opt_.verify) {
      for (int32_t p = 0; p < f.prefix_len; ++p) {
        const Kv& kv = kv_[row[p]];
        uint64_t prev = p == 0 ? 0 : kv_[row[p - 1]].hash;
        if (row[p] <= 0 || kv.pos != p || kv.hash != Chain(prev, kv.token, p))
          return Status::Internal("fake worker: rid " + std::to_string(f.rid) + " row " + std::to_string(f.row) +
                                  " position " + std::to_string(p) + " reads slot " + std::to_string(row[p]) +
                                  " holding position " + std::to_string(kv.pos));
      }
    }
    uint64_t h = f.prefix_len == 0 ? 0 : kv_[row[f.prefix_len - 1]].hash;
    for (int32_t k = 0; k < f.extend_len; ++k) {
      const int32_t pos = f.prefix_len + k;
      int32_t token = batch.input_ids[f.token_offset + k];
      if (token == kFutureToken) token = last_sampled_[f.row];
      const int32_t slot = batch.out_cache_loc[f.token_offset + k];
      if (slot <= 0 || slot >= static_cast<int64_t>(kv_.size()))
        return Status::OutOfRange("fake worker: slot " + std::to_string(slot) + " out of range");
      row[pos] = slot;
      h = Chain(h, token, pos);
      kv_[slot] = Kv{token, pos, h};
    }
    const int32_t next = TokenFromHash(h);
    result->next_token_ids[i] = next;
    last_sampled_[f.row] = next;
    if (any_logprob) result->logprobs[i] = -static_cast<float>(h % 1000) / 1000.0f;
  }
  return Status::Ok();
}

}  // namespace radixserve::sched
