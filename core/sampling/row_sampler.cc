#include "core/sampling/row_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace radixserve::sampling {

RowSampling MakeRowSampling(const SamplingParams& p, SamplerState& state, std::span<const int32_t> suppress,
                            std::vector<TokenCount>* counts, std::vector<int32_t>* suppressed) {
  RowSampling r;
  r.temperature = p.is_greedy() ? 0.0f : p.temperature;
  r.top_p = p.top_p;
  r.min_p = p.min_p;
  r.top_k = p.top_k;
  r.repetition_penalty = p.repetition_penalty;
  r.frequency_penalty = p.frequency_penalty;
  r.presence_penalty = p.presence_penalty;
  r.top_logprobs = std::clamp(p.logprobs, 0, kMaxTopLogprobs);
  r.counts_begin = static_cast<int32_t>(counts->size());
  if (p.has_penalties()) state.AppendCounts(counts);
  r.counts_size = static_cast<int32_t>(counts->size()) - r.counts_begin;
  r.suppressed_begin = static_cast<int32_t>(suppressed->size());
  suppressed->insert(suppressed->end(), suppress.begin(), suppress.end());
  r.suppressed_size = static_cast<int32_t>(suppress.size());
  if (!p.is_greedy()) r.uniform = state.rng().Uniform();
  return r;
}

RowSampler::RowSampler(int32_t vocab_size) : vocab_size_(vocab_size), order_(vocab_size) {}

RowSample RowSampler::Sample(const RowSampling& row, std::span<float> l, std::span<const TokenCount> counts,
                             std::span<const int32_t> suppressed) {
  const int32_t V = vocab_size_;
  for (const TokenCount& c : counts.subspan(row.counts_begin, row.counts_size))
    if (c.token >= 0 && c.token < V)
      l[c.token] = PenalisedLogit(l[c.token], row.repetition_penalty, row.frequency_penalty, row.presence_penalty,
                                  c.generated);
  for (int32_t t : suppressed.subspan(row.suppressed_begin, row.suppressed_size))
    if (t >= 0 && t < V) l[t] = -std::numeric_limits<float>::infinity();
  std::iota(order_.begin(), order_.end(), 0);
  std::sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
  const float mx = l[order_[0]];
  double sum = 0.0;
  for (int32_t i = 0; i < V; ++i) sum += std::exp(static_cast<double>(l[i] - mx));
  const float lse = mx + static_cast<float>(std::log(sum));

  RowSample out;
  if (row.temperature == 0.0f) {
    out.token = order_[0];
  } else if (mx == -std::numeric_limits<float>::infinity()) {
    out.token = 0;
  } else {
    const float inv_t = 1.0f / row.temperature;
    auto prob = [&](int32_t i) { return std::exp((l[i] - mx) * inv_t); };
    double total = 0.0;
    for (int32_t i = 0; i < V; ++i) total += prob(i);
    int32_t n = std::min(row.top_k, V);
    if (row.top_p < 1.0f) {
      const double limit = static_cast<double>(row.top_p) * total;
      double before = 0.0;
      int32_t keep = 0;
      while (keep < n && before <= limit) before += prob(order_[keep++]);
      n = std::max(keep, 1);
    }
    if (row.min_p > 0.0f) {
      int32_t keep = 0;
      while (keep < n && prob(order_[keep]) >= row.min_p) ++keep;
      n = keep;
    }
    // Kept: sorted before or at the n-th, i.e. above its logit, or equal to it at no higher id.
    const int32_t last = order_[n - 1];
    auto kept = [&](int32_t i) { return l[i] > l[last] || (l[i] == l[last] && i <= last); };
    double mass = 0.0;
    int32_t highest = 0;
    for (int32_t i = 0; i < V; ++i)
      if (kept(i)) {
        mass += prob(i);
        highest = i;
      }
    double u = row.uniform * mass;
    out.token = highest;
    for (int32_t i = 0; i < V; ++i) {
      if (!kept(i)) continue;
      u -= prob(i);
      if (u < 0.0) {
        out.token = i;
        break;
      }
    }
  }
  out.logprob = l[out.token] - lse;
  const int32_t top = std::min(row.top_logprobs, V);
  for (int32_t j = 0; j < top; ++j) {
    out.top_ids[j] = order_[j];
    out.top_logprobs[j] = l[order_[j]] - lse;
  }
  return out;
}

}  // namespace radixserve::sampling
