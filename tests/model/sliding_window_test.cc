// Mistral-style sliding-window attention (<arch>.attention.sliding_window = W: a query at
// position p sees the keys at positions p - W + 1 .. p) against a plain float64 forward pass
// written here from that definition. No reference file has a window that takes effect, so this
// is its check.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/model/llama_model.h"
#include "core/model/weights.h"
#include "kernels/cpu/matmul.h"
#include "tests/model/tiny_llama.h"

namespace radixserve::model {
namespace {

using Vec = std::vector<double>;

// The weights of one matrix as doubles, [rows][cols].
std::vector<Vec> Matrix(const gguf::GgufFile& f, const std::string& name) {
  auto w = GetAnyMatrix(f, name);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  std::vector<float> rows(w->rows * w->cols);
  kernels::DequantizeRows(*w, 0, w->rows, rows.data());
  std::vector<Vec> m(w->rows);
  for (int64_t r = 0; r < w->rows; ++r) m[r].assign(rows.begin() + r * w->cols, rows.begin() + (r + 1) * w->cols);
  return m;
}

Vec MatVec(const std::vector<Vec>& m, const Vec& x) {
  Vec y(m.size(), 0.0);
  for (size_t r = 0; r < m.size(); ++r)
    for (size_t c = 0; c < x.size(); ++c) y[r] += m[r][c] * x[c];
  return y;
}

Vec RmsNorm(const Vec& x, const std::vector<float>& w, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double s = 1.0 / std::sqrt(ss / x.size() + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * s * w[i];
  return y;
}

// Logits at every position of `tokens` with window `window` (0: none), llama layout.
std::vector<Vec> ReferenceForward(const gguf::GgufFile& f, const LlamaConfig& c, const std::vector<int32_t>& tokens,
                                  int window) {
  const int hd = c.head_dim, group = c.num_heads / c.num_kv_heads, T = static_cast<int>(tokens.size());
  const auto embd = Matrix(f, "token_embd.weight"), out_w = Matrix(f, "output.weight");
  std::vector<Vec> x(T);
  for (int t = 0; t < T; ++t) x[t] = embd[tokens[t]];
  auto rope = [&](Vec& v, int heads, int pos) {
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < hd / 2; ++i) {
        const double th = pos * std::pow(static_cast<double>(c.rope_freq_base), -2.0 * i / hd);
        const double a = v[h * hd + 2 * i], b = v[h * hd + 2 * i + 1];
        v[h * hd + 2 * i] = a * std::cos(th) - b * std::sin(th);
        v[h * hd + 2 * i + 1] = a * std::sin(th) + b * std::cos(th);
      }
  };
  for (int l = 0; l < c.num_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const auto wq = Matrix(f, p + "attn_q.weight"), wk = Matrix(f, p + "attn_k.weight"),
               wv = Matrix(f, p + "attn_v.weight"), wo = Matrix(f, p + "attn_output.weight"),
               wg = Matrix(f, p + "ffn_gate.weight"), wu = Matrix(f, p + "ffn_up.weight"),
               wd = Matrix(f, p + "ffn_down.weight");
    const auto attn_norm = *GetVector(f, p + "attn_norm.weight", c.dim), ffn_norm = *GetVector(f, p + "ffn_norm.weight", c.dim);
    std::vector<Vec> q(T), k(T), v(T);
    for (int t = 0; t < T; ++t) {
      const Vec xn = RmsNorm(x[t], attn_norm, c.rms_eps);
      q[t] = MatVec(wq, xn), k[t] = MatVec(wk, xn), v[t] = MatVec(wv, xn);
      rope(q[t], c.num_heads, t), rope(k[t], c.num_kv_heads, t);
    }
    for (int t = 0; t < T; ++t) {
      Vec att(c.q_dim(), 0.0);
      const int first = window > 0 ? std::max(0, t - window + 1) : 0;
      for (int h = 0; h < c.num_heads; ++h) {
        const int kvh = h / group;
        Vec s;
        double mx = -1e300;
        for (int j = first; j <= t; ++j) {
          double d = 0;
          for (int i = 0; i < hd; ++i) d += q[t][h * hd + i] * k[j][kvh * hd + i];
          s.push_back(d / std::sqrt(static_cast<double>(hd)));
          mx = std::max(mx, s.back());
        }
        double sum = 0;
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int j = first; j <= t; ++j)
          for (int i = 0; i < hd; ++i) att[h * hd + i] += s[j - first] / sum * v[j][kvh * hd + i];
      }
      const Vec o = MatVec(wo, att);
      for (int i = 0; i < c.dim; ++i) x[t][i] += o[i];
      const Vec xn = RmsNorm(x[t], ffn_norm, c.rms_eps);
      const Vec g = MatVec(wg, xn), u = MatVec(wu, xn);
      Vec a(g.size());
      for (size_t i = 0; i < g.size(); ++i) a[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
      const Vec dn = MatVec(wd, a);
      for (int i = 0; i < c.dim; ++i) x[t][i] += dn[i];
    }
  }
  const auto out_norm = *GetVector(f, "output_norm.weight", c.dim);
  std::vector<Vec> logits(T);
  for (int t = 0; t < T; ++t) logits[t] = MatVec(out_w, RmsNorm(x[t], out_norm, c.rms_eps));
  return logits;
}

TEST(SlidingWindow, MatchesThePlainDefinition) {
  constexpr int kWindow = 5, kTokens = 24;
  testing_util::TinyLlamaSpec spec;
  spec.sliding_window = kWindow;
  auto file = testing_util::MakeTinyLlama(spec);
  auto model = LlamaModel::Load(file, ModelOptions{});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const LlamaConfig& c = (*model)->config();
  ASSERT_EQ(c.sliding_window, kWindow);
  std::vector<int32_t> tokens(kTokens);
  for (int i = 0; i < kTokens; ++i) tokens[i] = (i * 37 + 11) % c.vocab_size;

  // Prefill half, then decode one token at a time: both paths apply the window.
  auto kv = (*model)->CreateKvCache(kTokens);
  ASSERT_TRUE(kv.ok());
  std::vector<int32_t> slots(kTokens);
  for (int i = 0; i < kTokens; ++i) slots[i] = kTokens - 1 - i;
  std::vector<float> got(kTokens * c.vocab_size);
  const int half = kTokens / 2;
  SequenceInput prefill{0, std::span<const int32_t>(tokens.data(), half), std::span<const int32_t>(slots.data(), half)};
  ForwardOptions all;
  all.all_logits = true;
  ASSERT_TRUE((*model)->Forward(std::span<const SequenceInput>(&prefill, 1), **kv,
                                std::span<float>(got.data(), half * c.vocab_size), all).ok());
  for (int t = half; t < kTokens; ++t) {
    SequenceInput step{t, std::span<const int32_t>(&tokens[t], 1), std::span<const int32_t>(slots.data(), t + 1)};
    ASSERT_TRUE((*model)->Forward(std::span<const SequenceInput>(&step, 1), **kv,
                                  std::span<float>(got.data() + t * c.vocab_size, c.vocab_size)).ok());
  }
  const auto want = ReferenceForward(*file, c, tokens, kWindow);
  const auto unwindowed = ReferenceForward(*file, c, tokens, 0);
  double max_err = 0, max_window_effect = 0;
  for (int t = 0; t < kTokens; ++t)
    for (int i = 0; i < c.vocab_size; ++i) {
      max_err = std::max(max_err, std::abs(got[t * c.vocab_size + i] - want[t][i]));
      max_window_effect = std::max(max_window_effect, std::abs(want[t][i] - unwindowed[t][i]));
    }
  // F32 against float64 over 2 layers of width 64..96: a few hundred float32 roundings of O(1)
  // values, ~1e-5; 1e-4 leaves room. The window itself must move the logits far more than that.
  EXPECT_LT(max_err, 1e-4);
  EXPECT_GT(max_window_effect, 1e-2) << "the test would not notice a missing window";
}

}  // namespace
}  // namespace radixserve::model
