// tp_decode_bench [model.gguf] [steps]: decode speed of one worker with 2 threads against two
// tensor-parallel ranks (processes, 1 thread each, all-gathering over shared memory), the same
// total thread count, and the all-gathers' cost per step; batches of 1 and 8 sequences after a
// 32-token prompt each. Greedy tokens must agree (it says so). Default model: the generated
// medium q8_0 (768 dim, 12 layers), written to /tmp/radixserve-bench on first use. Not a test.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/model/llama_model.h"
#include "core/model/shm_collective.h"
#include "core/modelgen/model_generator.h"

using namespace radixserve;
using Clock = std::chrono::steady_clock;

namespace {

struct Result_ {
  double decode_s = 0;
  double allreduce_s = 0;
  std::vector<int32_t> ids;
};

// Prefills `batch` prompts of 32 tokens, then decodes `steps` tokens for all of them.
Status Decode(model::LlamaModel& m, model::ShmCollective* c, int batch, int steps, Result_* out) {
  const int64_t cap = 32 + steps + 1;
  RS_ASSIGN_OR_RETURN(auto kv, m.CreateKvCache(batch * cap));
  const int32_t vocab = m.config().vocab_size;
  std::vector<std::vector<int32_t>> next(batch), slots(batch);
  for (int b = 0; b < batch; ++b) {
    for (int i = 0; i < 32; ++i) next[b].push_back((7 * b + 13 * i + 1) % vocab);
    for (int64_t i = 0; i < cap; ++i) slots[b].push_back(static_cast<int32_t>(b * cap + i));
  }
  std::vector<int32_t> cached(batch, 0);
  std::vector<float> logits(static_cast<size_t>(batch) * vocab);
  Clock::time_point start;
  for (int step = 0; step <= steps; ++step) {
    if (step == 1) {  // the prefill is not timed
      start = Clock::now();
      if (c) c->TakeSeconds();
    }
    std::vector<model::SequenceInput> in(batch);
    for (int b = 0; b < batch; ++b)
      in[b] = {cached[b], next[b], std::span<const int32_t>(slots[b].data(), cached[b] + next[b].size())};
    model::ForwardOptions fo;
    fo.step = static_cast<uint64_t>(step) + 1;
    RS_RETURN_IF_ERROR(m.Forward(in, *kv, logits, fo));
    for (int b = 0; b < batch; ++b) {
      cached[b] += static_cast<int32_t>(next[b].size());
      const float* row = logits.data() + static_cast<size_t>(b) * vocab;
      next[b] = {static_cast<int32_t>(std::max_element(row, row + vocab) - row)};
      out->ids.push_back(next[b][0]);
    }
  }
  out->decode_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (c) out->allreduce_s = c->TakeSeconds();
  return Status::Ok();
}

std::shared_ptr<const gguf::GgufFile> Open(const std::string& path) {
  auto f = gguf::GgufFile::Open(path);
  if (!f.ok()) {
    std::fprintf(stderr, "%s\n", f.status().ToString().c_str());
    std::exit(1);
  }
  return std::shared_ptr<const gguf::GgufFile>(std::move(f).value());
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : "/tmp/radixserve-bench/medium-q8_0.gguf";
  const int steps = argc > 2 ? std::atoi(argv[2]) : 64;
  if (argc <= 1 && !std::filesystem::exists(path)) {
    std::filesystem::create_directories("/tmp/radixserve-bench");
    auto spec = modelgen::SpecForSize("medium");
    auto types = modelgen::ParseWeightType("q8_0");
    spec->weights = *types;
    if (Status s = modelgen::GenerateModel(*spec, path); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
  }
  auto file = Open(path);
  std::printf("%s, %d decode steps after a 32-token prompt per sequence\n", path.c_str(), steps);
  std::printf("%-8s%-22s%12s%14s%18s\n", "batch", "layout", "tok/s", "ms/step", "all-gathers/step");
  for (int batch : {1, 8}) {
    model::ModelOptions whole;
    whole.num_threads = 2;
    auto m = model::LlamaModel::Load(file, whole);
    if (!m.ok()) return std::fprintf(stderr, "%s\n", m.status().ToString().c_str()), 1;
    Result_ one;
    if (Status s = Decode(**m, nullptr, batch, steps, &one); !s.ok()) return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;
    std::printf("%-8d%-22s%12.1f%14.2f%18s\n", batch, "tp 1 (2 threads)", batch * steps / one.decode_s,
                1e3 * one.decode_s / steps, "-");
    const std::string group = "bench_" + std::to_string(::getpid());
    pid_t child = ::fork();
    if (child == 0) {
      auto c = model::ShmCollective::Open(group, 1, 2, std::chrono::seconds(30));
      model::ModelOptions o;
      o.num_threads = 1;
      o.collective = c.ok() ? c->get() : nullptr;
      auto r1 = c.ok() ? model::LlamaModel::Load(file, o) : Result<std::unique_ptr<model::LlamaModel>>(c.status());
      Result_ out;
      ::_exit(r1.ok() && Decode(**r1, c->get(), batch, steps, &out).ok() ? 0 : 2);
    }
    auto c = model::ShmCollective::Open(group, 0, 2, std::chrono::seconds(30));
    if (!c.ok()) return std::fprintf(stderr, "%s\n", c.status().ToString().c_str()), 1;
    model::ModelOptions o;
    o.num_threads = 1;
    o.collective = c->get();
    auto r0 = model::LlamaModel::Load(file, o);
    if (!r0.ok()) return std::fprintf(stderr, "%s\n", r0.status().ToString().c_str()), 1;
    Result_ two;
    Status s = Decode(**r0, c->get(), batch, steps, &two);
    int st = 0;
    ::waitpid(child, &st, 0);
    if (!s.ok() || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
      return std::fprintf(stderr, "tp 2 failed: %s\n", s.ToString().c_str()), 1;
    std::printf("%-8d%-22s%12.1f%14.2f%15.0f us   tokens %s\n", batch, "tp 2 (1 thread each)", batch * steps / two.decode_s,
                1e3 * two.decode_s / steps, 1e6 * two.allreduce_s / steps, two.ids == one.ids ? "equal" : "DIFFER");
  }
  return 0;
}
