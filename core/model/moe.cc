#include "core/model/moe.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/vec_ops.h"

namespace radixserve::model {
namespace {

template <typename T>
T* Ensure(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(n);
  return v.data();
}

}  // namespace

void MoeRoute(const float* logits, int64_t T, int E, int k, int32_t* experts, float* weights) {
  constexpr int kMaxExperts = 1024;
  float p[kMaxExperts];
  bool taken[kMaxExperts];
  for (int64_t t = 0; t < T; ++t) {
    const float* l = logits + t * E;
    // ggml's soft_max: max subtracted, exp in float, the sum in double, then scaled by 1/sum.
    float mx = -INFINITY;
    for (int e = 0; e < E; ++e) mx = std::max(mx, l[e]);
    double sum = 0.0;
    for (int e = 0; e < E; ++e) {
      p[e] = std::exp(l[e] - mx);
      sum += p[e];
      taken[e] = false;
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int e = 0; e < E; ++e) p[e] *= inv;
    float chosen = 0.0f;
    for (int j = 0; j < k; ++j) {
      int best = -1;
      for (int e = 0; e < E; ++e)
        if (!taken[e] && (best < 0 || p[e] > p[best])) best = e;
      taken[best] = true;
      experts[t * k + j] = best;
      weights[t * k + j] = p[best];
      chosen += p[best];
    }
    const float denom = std::max(chosen, 6.103515625e-5f);  // llama.cpp's clamp of the sum
    for (int j = 0; j < k; ++j) weights[t * k + j] /= denom;
  }
}

void MoeFfn(const MoeWeights& w, const float* x, int64_t T, int64_t dim, float* out, MoeScratch& s,
            kernels::MatMulScratch& mm, kernels::ThreadPool& pool) {
  const int E = w.num_experts, k = w.experts_used;
  const int64_t fe = w.expert_ffn_dim;
  float* logits = Ensure(s.logits, T * E);
  kernels::MatMul(w.router, x, T, logits, mm, pool);
  int32_t* sel = Ensure(s.experts, T * k);
  float* wsel = Ensure(s.weights, T * k);
  MoeRoute(logits, T, E, k, sel, wsel);

  // The (token, choice) pairs grouped by expert, tokens in order within each group.
  int32_t* counts = Ensure(s.counts, E);
  int32_t* offsets = Ensure(s.offsets, E + 1);
  int32_t* order = Ensure(s.order, T * k);
  std::fill(counts, counts + E, 0);
  for (int64_t i = 0; i < T * k; ++i) ++counts[sel[i]];
  offsets[0] = 0;
  for (int e = 0; e < E; ++e) offsets[e + 1] = offsets[e] + counts[e];
  for (int e = 0; e < E; ++e) counts[e] = 0;
  for (int64_t i = 0; i < T * k; ++i) {
    const int e = sel[i];
    order[offsets[e] + counts[e]++] = static_cast<int32_t>(i);
  }

  float* xg = Ensure(s.xg, T * dim);
  float* g = Ensure(s.g, T * fe);
  float* u = Ensure(s.u, T * fe);
  float* y = Ensure(s.y, T * dim);
  std::fill(out, out + T * dim, 0.0f);
  for (int e = 0; e < E; ++e) {
    const int64_t n = counts[e];
    if (n == 0) continue;  // an expert no token chose: its weights are not read
    const int32_t* group = order + offsets[e];
    for (int64_t i = 0; i < n; ++i) std::memcpy(xg + i * dim, x + (group[i] / k) * dim, dim * sizeof(float));
    const kernels::WeightView ge = w.gate.Rows(e * fe, fe), ue = w.up.Rows(e * fe, fe);
    const kernels::WeightView de = w.down.Rows(e * dim, dim);
    const kernels::MatMulOutput gate_up[] = {{&ge, g}, {&ue, u}};
    kernels::MatMulShared(gate_up, xg, n, mm, pool);
    kernels::SiluMul(g, u, g, n * fe);
    kernels::MatMul(de, g, n, y, mm, pool);
    for (int64_t i = 0; i < n; ++i) kernels::Axpy(wsel[group[i]], y + i * dim, out + (group[i] / k) * dim, dim);
  }
}

MoeBytes MoeWeightBytes(const MoeWeights& w) {
  const int64_t fe = w.expert_ffn_dim, dim = w.down.rows / std::max(1, w.num_experts);
  const int64_t per_expert = fe * w.gate.row_bytes() + fe * w.up.row_bytes() + dim * w.down.row_bytes();
  return {per_expert * w.experts_used, per_expert * w.num_experts};
}

}  // namespace radixserve::model
