// The scheduler with the real CPU model (stories260K): greedy outputs are identical whether
// requests run alone or concurrently, with or without prefix hits, chunked or not, retracted
// or not, paged or not, in the normal or the overlap loop; and over a backend that chooses greedy
// tokens itself (as a GPU's does), the same tokens as the host sampler's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "core/gguf/gguf_reader.h"
#include "core/scheduler/scheduler.h"
#include "core/worker/model_worker.h"
#include "plugins/cache/radix/radix_cache.h"
#include "plugins/policy/fcfs/fcfs_policy.h"
#include "plugins/policy/lpm/lpm_policy.h"

namespace radixserve {
namespace {

using sched::SchedulerConfig;
using V = std::vector<int32_t>;

std::shared_ptr<model::LlamaModel> Model() {
  static std::shared_ptr<model::LlamaModel> m = [] {
    auto file = gguf::GgufFile::Open(std::string(RADIXSERVE_SHARED_DIR) + "/models/stories260K.gguf");
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    std::shared_ptr<const gguf::GgufFile> shared(std::move(file).value());
    model::ModelOptions opt;
    opt.num_threads = 1;
    auto loaded = model::LlamaModel::Load(shared, opt);
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return std::shared_ptr<model::LlamaModel>(std::move(loaded).value());
  }();
  return m;
}

SchedulerConfig Base() {
  SchedulerConfig c;
  c.max_total_tokens = 4096;
  c.max_running_requests = 16;
  c.max_req_len = 256;
  c.chunked_prefill_size = 512;
  c.max_prefill_tokens = 2048;
  c.check_invariants_every_iteration = true;
  return c;
}

// The CPU backend, choosing greedy tokens itself when asked (ForwardOptions::greedy_ids) as the
// CUDA backend does on its GPU: the lowest-id argmax of the logits and its log-softmax. Counts the
// steps that asked for logits and those that asked for greedy tokens.
class GreedyChoosingBackend final : public model::ModelBackend {
 public:
  GreedyChoosingBackend(std::unique_ptr<model::ModelBackend> inner, int* logit_steps, int* greedy_steps)
      : inner_(std::move(inner)), logit_steps_(logit_steps), greedy_steps_(greedy_steps) {}
  const model::LlamaConfig& config() const override { return inner_->config(); }
  bool last_stage() const override { return true; }
  bool samples_greedy() const override { return true; }
  std::string Describe() const override { return "greedy-choosing " + inner_->Describe(); }
  Status Forward(std::span<const model::SequenceInput> seqs, std::span<float> logits,
                 const model::ForwardOptions& options) override {
    if (options.greedy_ids.empty()) {
      ++*logit_steps_;
      return inner_->Forward(seqs, logits, options);
    }
    ++*greedy_steps_;
    EXPECT_TRUE(logits.empty());
    EXPECT_EQ(options.greedy_logprobs.size(), options.greedy_ids.size());
    const int64_t vocab = config().vocab_size, rows = static_cast<int64_t>(options.greedy_ids.size());
    all_.resize(rows * vocab);
    model::ForwardOptions plain = options;
    plain.greedy_ids = {};
    plain.greedy_logprobs = {};
    if (Status s = inner_->Forward(seqs, all_, plain); !s.ok()) return s;
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = all_.data() + r * vocab;
      const int64_t best = std::max_element(row, row + vocab) - row;  // the first of equal maxima
      double sum = 0.0;
      for (int64_t i = 0; i < vocab; ++i) sum += std::exp(static_cast<double>(row[i] - row[best]));
      options.greedy_ids[r] = static_cast<int32_t>(best);
      options.greedy_logprobs[r] = static_cast<float>(-std::log(sum));
    }
    return Status::Ok();
  }

 private:
  std::unique_ptr<model::ModelBackend> inner_;
  int* logit_steps_;
  int* greedy_steps_;
  std::vector<float> all_;
};

struct Outcome {
  std::map<uint64_t, V> tokens;
  std::map<uint64_t, int32_t> cached;
  sched::SchedulerStats stats;
  int logit_steps = 0, greedy_steps = 0;  // of a GreedyChoosingBackend
};

constexpr int32_t kMaxNew = 20;

// Runs the waves one after another (each wave submitted at once) on one scheduler: greedy
// requests of kMaxNew tokens unless `sampling` gives a request other parameters; over a
// GreedyChoosingBackend if greedy_backend.
Outcome RunWaves(const SchedulerConfig& cfg, const std::vector<std::map<uint64_t, V>>& waves, bool lpm = false,
                 bool greedy_backend = false, const std::map<uint64_t, SamplingParams>& sampling = {}) {
  Outcome o;
  const int64_t slots = cfg.max_total_tokens + cfg.page_size + 1;
  Result<std::unique_ptr<ModelWorker>> worker = Status::Internal("unset");
  if (greedy_backend) {
    auto cpu = model::MakeCpuBackend(Model(), slots);
    EXPECT_TRUE(cpu.ok()) << cpu.status().ToString();
    worker = ModelWorker::Create(
        std::make_unique<GreedyChoosingBackend>(std::move(cpu).value(), &o.logit_steps, &o.greedy_steps),
        cfg.max_running_requests, cfg.max_req_len + 2);
  } else {
    worker = ModelWorker::Create(Model(), slots, cfg.max_running_requests, cfg.max_req_len + 2);
  }
  EXPECT_TRUE(worker.ok()) << worker.status().ToString();
  std::unique_ptr<sched::SchedulePolicy> policy;
  if (lpm) policy = std::make_unique<sched::LpmPolicy>(128, 32, 32); else policy = std::make_unique<sched::FcfsPolicy>();
  sched::Scheduler s(cfg, worker->get(), sched::OwnCache(std::make_unique<sched::RadixCache>()),
                     sched::OwnPolicy(std::move(policy)), [&](const sched::BatchTokenIdOut& m) {
                       for (const auto& out : m.outputs) {
                         V& t = o.tokens[out.rid];
                         t.insert(t.end(), out.output_ids.begin(), out.output_ids.end());
                         o.cached[out.rid] = out.cached_tokens;
                       }
                     });
  for (const auto& wave : waves) {
    for (const auto& [rid, prompt] : wave) {
      sched::TokenizedRequest g;
      g.rid = rid;
      g.input_ids = prompt;
      g.sampling.temperature = 0;
      g.sampling.max_new_tokens = kMaxNew;
      g.sampling.ignore_eos = true;
      if (auto it = sampling.find(rid); it != sampling.end()) g.sampling = it->second;
      s.Submit(std::move(g));
    }
    Status st = s.RunUntilIdle(100000);
    EXPECT_TRUE(st.ok()) << st.ToString();
    // The in-process composition releases too: at idle the worker holds no request state.
    EXPECT_EQ((*worker)->num_request_states(), 0u);
  }
  o.stats = s.stats();
  return o;
}

class ModelWorkerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::mt19937_64 rng(7);
    auto rnd = [&](int n) {
      V v;
      for (int i = 0; i < n; ++i) v.push_back(3 + static_cast<int32_t>(rng() % 400));
      return v;
    };
    V shared = rnd(40);
    for (uint64_t i = 0; i < 8; ++i) {
      V p = i % 2 == 0 ? shared : V{};
      V tail = rnd(10 + static_cast<int>(i) * 7);
      p.insert(p.end(), tail.begin(), tail.end());
      prompts_[i + 1] = p;
    }
    for (const auto& [rid, p] : prompts_) alone_[rid] = RunWaves(Base(), {{{rid, p}}}).tokens[rid];
  }
  static std::map<uint64_t, V> prompts_;
  static std::map<uint64_t, V> alone_;
};
std::map<uint64_t, V> ModelWorkerTest::prompts_;
std::map<uint64_t, V> ModelWorkerTest::alone_;

TEST_F(ModelWorkerTest, AloneOutputsAreFullLength) {
  for (const auto& [rid, t] : alone_) EXPECT_EQ(t.size(), static_cast<size_t>(kMaxNew)) << rid;
}

TEST_F(ModelWorkerTest, ConcurrentEqualsAlone) {
  EXPECT_EQ(RunWaves(Base(), {prompts_}).tokens, alone_);
}

TEST_F(ModelWorkerTest, OverlapLoopEqualsAlone) {
  SchedulerConfig c = Base();
  c.overlap = true;
  EXPECT_EQ(RunWaves(c, {prompts_}).tokens, alone_);
}

TEST_F(ModelWorkerTest, PrefixHitsEqualAlone) {
  // Wave 1 caches the prompts; wave 2 repeats them under new ids and hits the cache.
  std::map<uint64_t, V> again;
  for (const auto& [rid, p] : prompts_) again[rid + 100] = p;
  Outcome o = RunWaves(Base(), {prompts_, again}, /*lpm=*/true);
  for (const auto& [rid, p] : prompts_) {
    EXPECT_EQ(o.tokens[rid + 100], alone_[rid]) << rid;
    EXPECT_GT(o.cached[rid + 100], 0) << rid;
  }
  EXPECT_GT(o.stats.cached_prompt_tokens, 0);
}

TEST_F(ModelWorkerTest, ChunkedPrefillEqualsAlone) {
  SchedulerConfig c = Base();
  c.chunked_prefill_size = 8;
  Outcome o = RunWaves(c, {prompts_});
  EXPECT_EQ(o.tokens, alone_);
  EXPECT_GT(o.stats.prefill_batches, 8);
}

TEST_F(ModelWorkerTest, RetractedEqualsAlone) {
  SchedulerConfig c = Base();
  c.max_total_tokens = 250;
  c.clip_max_new_tokens = 2;  // over-admit so decode runs out of KV and retracts
  Outcome o = RunWaves(c, {prompts_});
  EXPECT_GT(o.stats.retractions, 0);
  EXPECT_EQ(o.tokens, alone_);
}

TEST_F(ModelWorkerTest, PagedEqualsAlone) {
  SchedulerConfig c = Base();
  c.page_size = 16;
  c.chunked_prefill_size = 32;
  std::map<uint64_t, V> again;
  for (const auto& [rid, p] : prompts_) again[rid + 100] = p;
  Outcome o = RunWaves(c, {prompts_, again});
  for (const auto& [rid, p] : prompts_) {
    EXPECT_EQ(o.tokens[rid], alone_[rid]) << rid;
    EXPECT_EQ(o.tokens[rid + 100], alone_[rid]) << rid;
  }
}

TEST_F(ModelWorkerTest, ABackendChoosingGreedyTokensGivesTheHostSamplersTokens) {
  Outcome o = RunWaves(Base(), {prompts_}, false, /*greedy_backend=*/true);
  EXPECT_EQ(o.tokens, alone_);
  EXPECT_GT(o.greedy_steps, 0);
  EXPECT_EQ(o.logit_steps, 0);  // every step's rows take the plain argmax
}

TEST_F(ModelWorkerTest, AStepWithASampledRequestTakesTheLogits) {
  // One request drawn at temperature 0.7 with a seed and top-k, another greedy with a repetition
  // penalty; both end early, after which the steps are plain argmax again.
  std::map<uint64_t, V> wave = prompts_;
  wave[50] = prompts_[2];
  wave[51] = prompts_[3];
  std::map<uint64_t, SamplingParams> sampling;
  SamplingParams drawn;
  drawn.temperature = 0.7f;
  drawn.top_k = 40;
  drawn.seed = 3;
  drawn.has_seed = true;
  drawn.max_new_tokens = 5;
  drawn.ignore_eos = true;
  SamplingParams penalised;
  penalised.temperature = 0;
  penalised.repetition_penalty = 1.3f;
  penalised.max_new_tokens = 5;
  penalised.ignore_eos = true;
  sampling[50] = drawn;
  sampling[51] = penalised;
  Outcome host = RunWaves(Base(), {wave}, false, false, sampling);
  Outcome chosen = RunWaves(Base(), {wave}, false, /*greedy_backend=*/true, sampling);
  EXPECT_EQ(chosen.tokens, host.tokens);
  for (const auto& [rid, p] : prompts_) EXPECT_EQ(chosen.tokens[rid], alone_[rid]) << rid;
  EXPECT_EQ(chosen.tokens[50].size(), 5u);
  EXPECT_GT(chosen.logit_steps, 0);   // while 50 or 51 ran
  EXPECT_GT(chosen.greedy_steps, 0);  // after they ended
}

}  // namespace
}  // namespace radixserve
