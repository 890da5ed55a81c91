#include "core/sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace radixserve::sampling {
namespace {
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

size_t HashSlot(int32_t token, size_t mask) {
  return (static_cast<uint32_t>(token) * 2654435761u) & mask;
}
}  // namespace

SamplerState::SamplerState(uint64_t seed, std::span<const int32_t> prompt) { Reset(seed, prompt); }

void SamplerState::Reset(uint64_t seed, std::span<const int32_t> prompt) {
  rng_.Seed(seed);
  entries_.clear();
  if (index_.empty()) index_.assign(64, -1);
  std::fill(index_.begin(), index_.end(), -1);
  for (int32_t t : prompt) Upsert(t).in_prompt = true;
}

void SamplerState::Rehash(size_t capacity) {
  index_.assign(capacity, -1);
  const size_t mask = capacity - 1;
  for (size_t i = 0; i < entries_.size(); ++i) {
    size_t h = HashSlot(entries_[i].token, mask);
    while (index_[h] >= 0) h = (h + 1) & mask;
    index_[h] = static_cast<int32_t>(i);
  }
}

SamplerState::Entry& SamplerState::Upsert(int32_t token) {
  if ((entries_.size() + 1) * 2 > index_.size()) Rehash(index_.size() * 2);
  const size_t mask = index_.size() - 1;
  size_t h = HashSlot(token, mask);
  while (index_[h] >= 0) {
    if (entries_[index_[h]].token == token) return entries_[index_[h]];
    h = (h + 1) & mask;
  }
  index_[h] = static_cast<int32_t>(entries_.size());
  entries_.push_back({token, false, 0});
  return entries_.back();
}

const SamplerState::Entry* SamplerState::Find(int32_t token) const {
  const size_t mask = index_.size() - 1;
  size_t h = HashSlot(token, mask);
  while (index_[h] >= 0) {
    if (entries_[index_[h]].token == token) return &entries_[index_[h]];
    h = (h + 1) & mask;
  }
  return nullptr;
}

void SamplerState::Accept(int32_t token) { ++Upsert(token).generated; }

int32_t SamplerState::generated_count(int32_t token) const {
  const Entry* e = Find(token);
  return e ? e->generated : 0;
}

bool SamplerState::seen(int32_t token) const { return Find(token) != nullptr; }

void SamplerState::AppendCounts(std::vector<TokenCount>* out) const {
  for (const Entry& e : entries_) out->push_back({e.token, e.in_prompt ? 1 : 0, e.generated});
}

Sampler::Sampler(int32_t vocab_size) : vocab_size_(vocab_size), candidates_(vocab_size), probs_(vocab_size) {}

void Sampler::ApplyPenalties(const SamplingParams& p, std::span<float> logits, const SamplerState& state) const {
  const bool rep = p.repetition_penalty != 1.0f;
  const bool freq = p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f;
  if (!rep && !freq) return;
  for (const SamplerState::Entry& e : state.entries_) {
    if (e.token < 0 || e.token >= vocab_size_) continue;
    float& l = logits[e.token];
    l = PenalisedLogit(l, p.repetition_penalty, p.frequency_penalty, p.presence_penalty, e.generated);
  }
}

void Sampler::FillLogprobs(const SamplingParams& p, std::span<const float> logits, SampleResult* r) {
  float mx = kNegInf;
  for (float v : logits) mx = std::max(mx, v);
  double sum = 0.0;
  for (float v : logits) sum += std::exp(static_cast<double>(v - mx));
  const float lse = mx + static_cast<float>(std::log(sum));
  r->logprob = logits[r->token] - lse;
  const int n = std::min(p.logprobs, kMaxTopLogprobs);
  r->num_top = std::max(n, 0);
  if (n <= 0) return;
  // Keep the n best in descending order (ties: lower id first).
  int filled = 0;
  auto& top = r->top;
  for (int32_t i = 0; i < vocab_size_; ++i) {
    const float v = logits[i];
    if (filled == n && v <= top[n - 1].logprob) continue;
    int pos = filled < n ? filled++ : n - 1;
    while (pos > 0 && top[pos - 1].logprob < v) {
      top[pos] = top[pos - 1];
      --pos;
    }
    top[pos] = {i, v};
  }
  for (int i = 0; i < filled; ++i) top[i].logprob -= lse;
}

SampleResult Sampler::Sample(const SamplingParams& p, std::span<float> logits, SamplerState& state,
                             std::span<const int32_t> suppress) {
  SampleResult r;
  ApplyPenalties(p, logits, state);
  for (int32_t t : suppress)
    if (t >= 0 && t < vocab_size_) logits[t] = kNegInf;

  if (p.is_greedy()) {
    r.token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  } else {
    const double uniform = state.rng().Uniform();
    const float mx = *std::max_element(logits.begin(), logits.end());
    if (mx == kNegInf) {
      r.token = 0;  // everything suppressed: nothing sensible to draw
    } else {
      // Unnormalised probabilities; the most likely token has probability 1.
      const float inv_t = 1.0f / p.temperature;
      double total = 0.0;
      for (int32_t i = 0; i < vocab_size_; ++i) {
        probs_[i] = std::exp((logits[i] - mx) * inv_t);
        total += probs_[i];
      }
      int32_t n = vocab_size_;
      for (int32_t i = 0; i < n; ++i) candidates_[i] = i;
      auto by_prob = [this](int32_t a, int32_t b) { return probs_[a] > probs_[b] || (probs_[a] == probs_[b] && a < b); };
      if (p.top_k < n) {
        std::nth_element(candidates_.begin(), candidates_.begin() + p.top_k, candidates_.begin() + n, by_prob);
        n = p.top_k;
      }
      if (p.top_p < 1.0f) {
        // Keep the sorted prefix whose probability mass before each token is <= top_p.
        std::sort(candidates_.begin(), candidates_.begin() + n, by_prob);
        const double limit = static_cast<double>(p.top_p) * total;
        double before = 0.0;
        int32_t keep = 0;
        while (keep < n && before <= limit) before += probs_[candidates_[keep++]];
        n = std::max(keep, 1);
      }
      if (p.min_p > 0.0f) {
        int32_t keep = 0;
        for (int32_t i = 0; i < n; ++i)
          if (probs_[candidates_[i]] >= p.min_p) candidates_[keep++] = candidates_[i];
        n = keep;  // the most likely token (probability 1) always stays
      }
      // The draw walks the kept tokens in id order (row_sampling.h); only a top-k or top-p cut
      // leaves them in another.
      if (p.top_k < vocab_size_ || p.top_p < 1.0f) std::sort(candidates_.begin(), candidates_.begin() + n);
      double mass = 0.0;
      for (int32_t i = 0; i < n; ++i) mass += probs_[candidates_[i]];
      double u = uniform * mass;
      r.token = candidates_[n - 1];
      for (int32_t i = 0; i < n; ++i) {
        u -= probs_[candidates_[i]];
        if (u < 0.0) {
          r.token = candidates_[i];
          break;
        }
      }
    }
  }
  if (p.logprobs >= 0) FillLogprobs(p, logits, &r);
  return r;
}

}  // namespace radixserve::sampling
