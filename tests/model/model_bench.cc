// model_bench: Foundation speed figures of the CPU model (a program, not a test).
//
// Generates the 'medium' synthetic llama (dim 768, 12 layers, 12 heads,
// 4 kv heads, ffn 2048, vocab 32000, untied) with the project's model
// generator, then measures prefill tok/s of one 512-token prompt and decode
// tok/s (all sequences together) at several batch sizes and cached lengths.
// KV contents do not change the cost, so decode runs over a cache that holds
// zeros rather than prefilling thousands of tokens first.
//
// usage: model_bench [--types f32,f16,q8_0] [--threads 2] [--prefill 512]
//                    [--batches 1,4,16,32] [--cached 128,512] [--dir /tmp] [--size medium] [--kv f32|f16|q8_0|q4_0]
//                    [--repeat N] [--files a.gguf,b.gguf] [--bandwidth-mib 1024]
// --files measures the given GGUF files (for example llama-quantize's) instead of generating.
// One-sequence decode reads every weight once per token, so it is bounded by the memory read
// bandwidth: the program measures that first (a streaming read of --bandwidth-mib MiB on the same
// threads; 0 skips it) and ends each row with the weight bytes a token reads and the bound they give
// (of a mixture of experts: the bytes of the experts a token uses, not of all of them).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/model/llama_model.h"
#include "core/model/moe.h"
#include "core/model/weights.h"
#include "kernels/cpu/cpu_features.h"
#include "core/modelgen/model_generator.h"

namespace {

using namespace radixserve;
using Clock = std::chrono::steady_clock;

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Bytes per second that `threads` threads read from a buffer of `mib` MiB (well beyond the
// caches), best of 3 passes. Sums of 64-bit words: the compiler vectorises them, and the sum
// is printed so that the reads cannot be dropped.
double ReadBandwidth(int threads, int64_t mib) {
  const size_t words = static_cast<size_t>(mib) << 17;
  std::vector<uint64_t> buf(words);
  for (size_t i = 0; i < words; ++i) buf[i] = i;  // touched: every page is mapped before timing
  std::vector<uint64_t> sums(threads);
  double best = 1e30;
  for (int pass = 0; pass < 3; ++pass) {
    const auto t0 = Clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const size_t begin = words * t / threads, end = words * (t + 1) / threads;
        uint64_t s = 0;
        for (size_t i = begin; i < end; ++i) s += buf[i];
        sums[t] += s;
      });
    for (auto& th : pool) th.join();
    best = std::min(best, Seconds(t0, Clock::now()));
  }
  uint64_t all = 0;
  for (uint64_t s : sums) all += s;
  std::fprintf(stderr, "(read check %llu)\n", static_cast<unsigned long long>(all));
  return static_cast<double>(words * sizeof(uint64_t)) / best;
}

// The weight bytes one token reads: every tensor but the embedding table (one row per token),
// unless the output projection is that table (tied embeddings); of a mixture of experts, only the
// experts_used experts' slabs of each layer (moe.h MoeWeightBytes), not all experts.
uint64_t WeightBytesPerToken(const gguf::GgufFile& file) {
  const bool tied = file.FindTensor("output.weight") == nullptr;
  uint64_t bytes = 0;
  for (const gguf::TensorInfo& t : file.tensors())
    if (tied || t.name != "token_embd.weight") bytes += t.num_bytes();
  auto config = model::LlamaConfig::FromGguf(file);
  if (config.ok() && config->moe()) {
    auto weights = model::LoadLlamaWeights(file, *config);
    if (weights.ok()) {
      for (const model::LayerWeights& l : weights->layers) {
        const model::MoeWeights moe{l.router, l.exp_gate, l.exp_up, l.exp_down,
                                    config->num_experts, config->experts_used, config->expert_ffn_dim};
        const model::MoeBytes b = model::MoeWeightBytes(moe);
        bytes = bytes - static_cast<uint64_t>(b.all) + static_cast<uint64_t>(b.active);
      }
    }
  }
  return bytes;
}

int Fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string types = "f32,f16,q8_0", batches = "1,4,16,32", cached = "128,512", dir = "/tmp", size = "medium";
  int threads = 2, prefill = 512;
  std::string kv = "f32";
  std::string files;  // given model files instead of generated ones
  int repeat = 1;  // more timed windows per figure; the best is kept (noise only slows things down)
  int64_t bandwidth_mib = 1024;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--types") types = v;
    else if (k == "--threads") threads = std::atoi(v.c_str());
    else if (k == "--prefill") prefill = std::atoi(v.c_str());
    else if (k == "--batches") batches = v;
    else if (k == "--cached") cached = v;
    else if (k == "--dir") dir = v;
    else if (k == "--size") size = v;
    else if (k == "--kv") kv = v;
    else if (k == "--repeat") repeat = std::max(1, std::atoi(v.c_str()));
    else if (k == "--files") files = v;
    else if (k == "--bandwidth-mib") bandwidth_mib = std::atoll(v.c_str());
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  const Result<model::KvType> kv_type = model::ParseKvType(kv);
  if (!kv_type.ok()) {
    std::fprintf(stderr, "--kv: %s\n", kv_type.status().message().c_str());
    return 2;
  }
  std::printf("%s\n", kernels::SystemInfo().c_str());
  const double bandwidth = bandwidth_mib > 0 ? ReadBandwidth(threads, bandwidth_mib) : 0.0;
  if (bandwidth > 0)
    std::printf("memory read bandwidth: %.1f GB/s (%d threads, %lld MiB, best of 3)\n", bandwidth / 1e9, threads,
                static_cast<long long>(bandwidth_mib));
  std::printf("| type | threads | kv | prefill %d tok/s |", prefill);
  for (const auto& c : Split(cached))
    for (const auto& b : Split(batches)) std::printf(" decode b=%s c=%s |", b.c_str(), c.c_str());
  std::printf(" weights MB/token | b=1 bound tok/s |\n");
  std::fflush(stdout);

  // Each entry is a type to generate, or with --files a file to measure.
  for (const std::string& entry : Split(files.empty() ? types : files)) {
    std::string path = entry, type_name = std::filesystem::path(entry).stem().string();
    if (files.empty()) {
      type_name = entry;
      auto spec = modelgen::SpecForSize(size);
      if (!spec.ok()) return Fail(spec.status());
      auto wt = modelgen::ParseWeightType(type_name);
      if (!wt.ok()) return Fail(wt.status());
      spec->weights = *wt;
      // The README's reference models carry the llama-spm vocabulary (32000 tokens).
      const std::string vocab = std::string(RADIXSERVE_SHARED_DIR) + "/vocab/ggml-vocab-llama-spm.gguf";
      if (std::filesystem::exists(vocab)) spec->tokenizer_from = vocab;
      path = dir + "/radixserve_bench_" + size + "_" + type_name + ".gguf";
      if (!std::filesystem::exists(path)) {
        std::fprintf(stderr, "generating %s ...\n", path.c_str());
        Status st = modelgen::GenerateModel(*spec, path);
        if (!st.ok()) return Fail(st);
      }
    }
    auto file = gguf::GgufFile::Open(path);
    if (!file.ok()) return Fail(file.status());
    const uint64_t weight_bytes = WeightBytesPerToken(**file);
    auto model = model::LlamaModel::Load(std::shared_ptr<const gguf::GgufFile>(std::move(file).value()),
                                         model::ModelOptions{threads, *kv_type});
    if (!model.ok()) return Fail(model.status());
    model::LlamaModel& m = **model;
    const int vocab_size = m.config().vocab_size;
    std::printf("| %s | %d | %s |", type_name.c_str(), threads, kv.c_str());
    std::fflush(stdout);

    // Prefill: one prompt, warm-up run first.
    {
      auto kv = m.CreateKvCache(prefill);
      if (!kv.ok()) return Fail(kv.status());
      std::vector<int32_t> toks(prefill), slots(prefill);
      for (int i = 0; i < prefill; ++i) {
        toks[i] = 1 + (i * 7919) % (vocab_size - 1);
        slots[i] = i;
      }
      std::vector<float> logits(vocab_size);
      model::SequenceInput in{0, toks, slots};
      double best = 1e30;
      for (int rep = 0; rep < 1 + 2 * repeat; ++rep) {
        auto t0 = Clock::now();
        Status st = m.Forward(std::span<const model::SequenceInput>(&in, 1), **kv, logits);
        if (!st.ok()) return Fail(st);
        if (rep > 0) best = std::min(best, Seconds(t0, Clock::now()));
      }
      std::printf(" %.0f |", prefill / best);
      std::fflush(stdout);
    }

    // Decode: B sequences, each with C cached tokens, one new token per step.
    for (const auto& cs : Split(cached)) {
      for (const auto& bs : Split(batches)) {
        const int B = std::atoi(bs.c_str()), C = std::atoi(cs.c_str());
        // 3 * repeat timed windows after a warm-up step; the best one is reported (others compile here too).
        // Each window decodes positions C+1 .. C+window again (overwriting its KV slots), so every
        // window sees the same context, whatever --repeat is.
        const int window = std::max(4, 32 / B), steps = 3 * repeat * window;
        const int per_seq = C + window + 1;
        auto kv = m.CreateKvCache(static_cast<int64_t>(B) * per_seq);
        if (!kv.ok()) return Fail(kv.status());
        std::vector<std::vector<int32_t>> slots(B);
        for (int b = 0; b < B; ++b) {
          slots[b].resize(per_seq);
          for (int i = 0; i < per_seq; ++i) slots[b][i] = b * per_seq + i;
        }
        std::vector<int32_t> toks(B);
        std::vector<model::SequenceInput> seqs(B);
        std::vector<float> logits(static_cast<size_t>(B) * vocab_size);
        Clock::time_point t0;
        double secs = 1e30;
        for (int step = 0; step <= steps; ++step) {
          if (step >= 1 && (step - 1) % window == 0) {  // a window starts
            if (step > 1) secs = std::min(secs, Seconds(t0, Clock::now()));
            t0 = Clock::now();
          }
          const int pos = step == 0 ? C : C + 1 + (step - 1) % window;
          for (int b = 0; b < B; ++b) {
            toks[b] = 1 + (b * 131 + step * 17) % (vocab_size - 1);
            seqs[b] = {pos, std::span<const int32_t>(&toks[b], 1), std::span<const int32_t>(slots[b].data(), pos + 1)};
          }
          Status st = m.Forward(seqs, **kv, logits);
          if (!st.ok()) return Fail(st);
        }
        secs = std::min(secs, Seconds(t0, Clock::now()));
        std::printf(" %.1f |", static_cast<double>(B) * window / secs);
        std::fflush(stdout);
      }
    }
    std::printf(" %.1f |", weight_bytes / 1e6);
    if (bandwidth > 0) std::printf(" %.0f |", bandwidth / static_cast<double>(weight_bytes));
    else std::printf(" - |");
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
