// Encode/decode speed on a ~2,000-token English prompt, for the llama-spm vocab (SPM,
// 32k tokens) and the gpt-2 vocab (byte-level BPE, 50k tokens).
// Run: build-<name>/bin/tokenizer_benchmark
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>

#include "core/gguf/gguf_reader.h"
#include "core/tokenizer/tokenizer.h"

namespace radixserve {
namespace {

constexpr const char* kParagraph =
    "The scheduler keeps a radix tree of every prompt it has seen, so that a new request which "
    "shares a long prefix with an earlier one can reuse the key and value cache instead of "
    "computing it again. When memory runs short, the least recently used leaves are evicted "
    "first, and requests that are still decoding may be retracted to the waiting queue. "
    "Chunked prefill splits a very long prompt into pieces, which keeps the latency of the "
    "other requests low while the long one is being processed. In practice, this means that "
    "a chat application with a fixed system prompt pays for that prompt only once, and every "
    "later turn starts from the cached state. It's simple, isn't it? Numbers like 3.14159, "
    "2048 and 1,000,000 appear too; so do e-mail addresses (someone@example.com) and code: "
    "for (int i = 0; i < n; ++i) { sum += x[i]; }\n\n";

std::string MakePrompt(const Tokenizer& tok, size_t target_tokens) {
  std::string text;
  while (tok.Encode(text, false, false).size() < target_tokens) text += kParagraph;
  return text;
}

std::unique_ptr<Tokenizer> Load(const std::string& vocab) {
  const std::string path = std::string(RADIXSERVE_SHARED_DIR) + "/vocab/ggml-vocab-" + vocab + ".gguf";
  auto file = gguf::GgufFile::Open(path);
  if (!file.ok()) return nullptr;
  auto tok = Tokenizer::FromGguf(**file);
  if (!tok.ok()) return nullptr;
  return std::move(tok).value();
}

void BM_Encode(benchmark::State& state, const std::string& vocab) {
  auto tok = Load(vocab);
  if (!tok) {
    state.SkipWithError("cannot load vocab");
    return;
  }
  const std::string text = MakePrompt(*tok, 2000);
  size_t n_tokens = 0;
  for (auto _ : state) {
    auto ids = tok->Encode(text, true, false);
    n_tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.counters["tokens"] = static_cast<double>(n_tokens);
  state.counters["bytes"] = static_cast<double>(text.size());
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(n_tokens), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Decode(benchmark::State& state, const std::string& vocab) {
  auto tok = Load(vocab);
  if (!tok) {
    state.SkipWithError("cannot load vocab");
    return;
  }
  const auto ids = tok->Encode(MakePrompt(*tok, 2000), true, false);
  for (auto _ : state) {
    auto text = tok->Decode(ids, true);
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(ids.size()), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Load(benchmark::State& state, const std::string& vocab) {
  const std::string path = std::string(RADIXSERVE_SHARED_DIR) + "/vocab/ggml-vocab-" + vocab + ".gguf";
  auto file = gguf::GgufFile::Open(path);
  if (!file.ok()) {
    state.SkipWithError("cannot open vocab");
    return;
  }
  for (auto _ : state) {
    auto tok = Tokenizer::FromGguf(**file);
    benchmark::DoNotOptimize(tok.ok());
  }
}

BENCHMARK_CAPTURE(BM_Encode, llama_spm, std::string("llama-spm"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Encode, gpt2, std::string("gpt-2"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Decode, llama_spm, std::string("llama-spm"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Load, llama_spm, std::string("llama-spm"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Load, gpt2, std::string("gpt-2"))->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace radixserve

BENCHMARK_MAIN();
