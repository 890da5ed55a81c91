// The mixture-of-experts FFN of qwen3moe, on the CPU: a router picks each token's top experts and
// only those experts' weights are read.
//
// Routing (llama.cpp's build_moe_ffn for qwen3moe): p = softmax(router · x) over all experts, the
// experts_used largest p (the lower index first on a tie), their weights renormalised to sum 1
// (w_j = p_j / max(sum, 6.1e-5)). out = Σ_j w_j · down_j(silu(gate_j · x) ⊙ (up_j · x)).
//
// Each expert is a slab of rows of the 3-D tensors (weights.h GetExpertMatrices), computed with
// the ordinary MatMul. The batch's tokens are grouped by expert: the rows of x that chose expert e
// are gathered, gate/up/down run once over them (one MatMul per used expert, so each expert's
// weights are read once per batch, and a large group takes the GEMM path), and the results are
// added back into each token's row with its router weight. A decode step (one token) thus reads
// experts_used of num_experts experts' weights. Scratch buffers only grow: no allocation once warm.
//
// Thread-safety: a MoeScratch belongs to one caller at a time; the work is split over the pool by
// MatMul.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/matmul.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/weight.h"

namespace radixserve::model {

struct MoeWeights {
  kernels::WeightView router;        // [num_experts][dim]
  kernels::WeightView gate, up;      // [num_experts * expert_ffn_dim][dim]
  kernels::WeightView down;          // [num_experts * dim][expert_ffn_dim]
  int32_t num_experts = 0, experts_used = 0, expert_ffn_dim = 0;
};

struct MoeScratch {
  std::vector<float> logits, weights, xg, g, u, y;
  std::vector<int32_t> experts, counts, offsets, order;
};

// Routes T tokens from their router logits [T][E]: experts[t * k + j] is token t's j-th choice
// (largest probability first), weights[t * k + j] its renormalised weight.
void MoeRoute(const float* logits, int64_t T, int E, int k, int32_t* experts, float* weights);

// out[T][dim] = the MoE FFN of x[T][dim] (out must not alias x).
void MoeFfn(const MoeWeights& w, const float* x, int64_t T, int64_t dim, float* out, MoeScratch& s,
            kernels::MatMulScratch& mm, kernels::ThreadPool& pool);

// The bytes of expert weights one token reads (its experts_used experts' gate, up and down slabs)
// and the bytes of all experts, per layer.
struct MoeBytes {
  int64_t active = 0, all = 0;
};
MoeBytes MoeWeightBytes(const MoeWeights& w);

}  // namespace radixserve::model
