// Google Benchmark of the CPU kernels: MatMul per weight type and batch size
// (medium-model shapes), and slot-indexed attention.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/matmul_stream.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/quantize.h"

namespace radixserve::kernels {
namespace {

struct Weights {
  std::vector<uint8_t> bytes;
  WeightView view;
};

Weights MakeWeights(WeightType type, int64_t rows, int64_t cols) {
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 0.05f);
  std::vector<float> f(rows * cols);
  for (float& v : f) v = nd(rng);
  Weights w;
  w.view = {type, nullptr, rows, cols};
  w.bytes.resize(w.view.row_bytes() * rows);
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* dst = w.bytes.data() + r * w.view.row_bytes();
    const float* src = f.data() + r * cols;
    QuantizeBlocks(type, src, dst, cols);
  }
  w.view.data = w.bytes.data();
  return w;
}

void BM_MatMul(benchmark::State& state) {
  const auto type = static_cast<WeightType>(state.range(0));
  const int64_t n = state.range(1), rows = state.range(2), cols = state.range(3);
  const int threads = static_cast<int>(state.range(4));
  Weights w = MakeWeights(type, rows, cols);
  std::vector<float> x(n * cols, 0.5f), y(n * rows);
  ThreadPool pool(threads);
  MatMulScratch scratch(threads);
  SetBlasThreads(1);
  for (auto _ : state) {
    MatMul(w.view, x.data(), n, y.data(), scratch, pool);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(w.bytes.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * rows * cols, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// The types benchmarked (the enum's values as benchmark arguments).
const std::vector<int64_t> kTypes = {
    static_cast<int64_t>(WeightType::kF32),  static_cast<int64_t>(WeightType::kF16),
    static_cast<int64_t>(WeightType::kBF16), static_cast<int64_t>(WeightType::kQ8_0),
    static_cast<int64_t>(WeightType::kQ4_0), static_cast<int64_t>(WeightType::kQ4_K),
    static_cast<int64_t>(WeightType::kQ6_K)};

void MatMulArgs(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2})
    for (int64_t type : kTypes)
      for (int n : {1, 4, 8, 16, 32, 512}) b->Args({type, n, 2048, 768, threads});
  b->Args({static_cast<int64_t>(WeightType::kF32), 1, 32000, 768, 2});
  b->Args({static_cast<int64_t>(WeightType::kQ8_0), 1, 32000, 768, 2});
}
BENCHMARK(BM_MatMul)->Apply(MatMulArgs)->UseRealTime()->ArgNames({"type", "n", "rows", "cols", "thr"});

// The streaming kernel alone on one thread, at any batch size (MatMul switches to sgemm above a threshold).
void BM_Stream(benchmark::State& state) {
  const auto type = static_cast<WeightType>(state.range(0));
  const int64_t n = state.range(1), rows = state.range(2), cols = 768;
  Weights w = MakeWeights(type, rows, cols);
  std::vector<float> x(n * cols, 0.5f), y(n * rows);
  std::vector<uint8_t> buffer(QuantizedActivationsBytes(n, cols) + 64);
  const QuantizedActivations xq = QuantizeActivations(
      x.data(), n, cols, reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(buffer.data()) + 63) / 64 * 64),
      ActivationGroupBlocks(type, cols));  // as MatMul quantises them for this type
  for (auto _ : state) {
    internal::StreamRows(w.view, x.data(), xq, n, 0, rows, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * rows * cols, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_Stream)->ArgsProduct({kTypes, {1, 4, 8, 16, 32, 64, 512}, {256, 2048}})->ArgNames({"type", "n", "rows"});
// One token over weights past the AMD machines' 32 MB L3 (Q8_0: 107 MB): the tile fed from DRAM, as in decode.
BENCHMARK(BM_Stream)->ArgsProduct({kTypes, {1}, {131072}})->ArgNames({"type", "n", "rows"});

// One decode token's attention over n_keys cached tokens with a KV cache of each type (F32, F16,
// Q8_0, Q4_0): keys per second, and the bytes of K and V the kernel reads per second.
void BM_Attention(benchmark::State& state) {
  const int64_t n_keys = state.range(0);
  const WeightType type = static_cast<WeightType>(state.range(1));
  const int head_dim = 64, kv_heads = 4, group = 3;
  std::vector<float> k(n_keys * kv_heads * head_dim), v(k.size()), q(group * head_dim, 0.1f);
  for (size_t i = 0; i < k.size(); ++i) k[i] = 0.01f * static_cast<float>(i % 17), v[i] = 0.02f * static_cast<float>(i % 13);
  std::vector<uint8_t> kq(KvBytes(type, k.size())), vq(KvBytes(type, v.size()));
  QuantizeBlocks(type, k.data(), kq.data(), k.size());
  QuantizeBlocks(type, v.data(), vq.data(), v.size());
  std::vector<float> scores(group * n_keys), out(group * head_dim);
  std::vector<int32_t> slots(n_keys);
  for (int64_t i = 0; i < n_keys; ++i) slots[i] = static_cast<int32_t>(i);
  KvLayerView view{kq.data(), vq.data(), kv_heads * head_dim, type};
  for (auto _ : state) {
    AttendSlots(q.data(), group, view, 1, slots.data(), n_keys, head_dim, 0.125f, scores.data(), out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(GetWeightTypeInfo(type).name);
  state.counters["keys/s"] = benchmark::Counter(static_cast<double>(n_keys), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["KV B/s"] = benchmark::Counter(2.0 * static_cast<double>(KvBytes(type, n_keys * head_dim)),
                                                benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Attention)
    ->ArgsProduct({{512, 4096},
                   {int(WeightType::kF32), int(WeightType::kF16), int(WeightType::kQ8_0), int(WeightType::kQ4_0)}})
    ->ArgNames({"keys", "kv"});

}  // namespace
}  // namespace radixserve::kernels

BENCHMARK_MAIN();
