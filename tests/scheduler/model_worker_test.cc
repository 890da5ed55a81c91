// The scheduler with the real CPU model (stories260K): greedy outputs are identical whether
// requests run alone or concurrently, with or without prefix hits, chunked or not, retracted
// or not, paged or not, in the normal or the overlap loop; and over a backend that samples where
// the logits are (as a GPU's does), the same tokens as the host sampler's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "core/gguf/gguf_reader.h"
#include "core/grammar/compile.h"
#include "core/grammar/grammar_cache.h"
#include "core/grammar/matcher.h"
#include "core/grammar/tokenizer_vocab.h"
#include "core/tokenizer/tokenizer.h"
#include "core/sampling/row_sampler.h"
#include "core/scheduler/scheduler.h"
#include "core/scheduler/step_driver.h"
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

const Tokenizer& Tok() {
  static std::unique_ptr<Tokenizer> t = [] {
    auto file = gguf::GgufFile::Open(std::string(RADIXSERVE_SHARED_DIR) + "/models/stories260K.gguf");
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    auto tok = Tokenizer::FromGguf(**file);
    EXPECT_TRUE(tok.ok()) << tok.status().ToString();
    return std::move(tok).value();
  }();
  return *t;
}

SchedulerConfig Base() {
  SchedulerConfig c;
  c.max_total_tokens = 4096;
  c.max_running_requests = 16;
  c.max_req_len = 256;
  c.chunked_prefill_size = 512;
  c.max_prefill_tokens = 2048;
  c.check_invariants_every_iteration = true;
  c.eos_token_ids = {2};  // stories260K's </s>
  return c;
}

// The CPU backend, sampling "where the logits are" when asked (ForwardOptions::sampling) as the
// CUDA backend does on its GPU, by the contract's host form (RowSampler). Counts the steps that
// asked for logits and those that asked for samples.
class DeviceSamplingBackend final : public model::ModelBackend {
 public:
  DeviceSamplingBackend(std::unique_ptr<model::ModelBackend> inner, int* logit_steps, int* sampled_steps)
      : inner_(std::move(inner)), logit_steps_(logit_steps), sampled_steps_(sampled_steps),
        row_sampler_(inner_->config().vocab_size) {}
  const model::LlamaConfig& config() const override { return inner_->config(); }
  bool last_stage() const override { return true; }
  bool samples_on_device() const override { return true; }
  std::string Describe() const override { return "device-sampling " + inner_->Describe(); }
  Status Forward(std::span<const model::SequenceInput> seqs, std::span<float> logits,
                 const model::ForwardOptions& options) override {
    if (options.sampling == nullptr) {
      ++*logit_steps_;
      return inner_->Forward(seqs, logits, options);
    }
    ++*sampled_steps_;
    EXPECT_TRUE(logits.empty());
    const model::DeviceSampling& ds = *options.sampling;
    EXPECT_EQ(ds.rows.size(), ds.out.size());
    const int64_t vocab = config().vocab_size, rows = static_cast<int64_t>(ds.rows.size());
    all_.resize(rows * vocab);
    model::ForwardOptions plain = options;
    plain.sampling = nullptr;
    if (Status s = inner_->Forward(seqs, all_, plain); !s.ok()) return s;
    for (int64_t r = 0; r < rows; ++r) {
      float* row = all_.data() + r * vocab;
      if (!ds.token_masks.empty())  // what cuda::ApplyTokenBitmask does before SampleRows
        for (int64_t i = 0; i < vocab; ++i)
          if (i >= ds.mask_words * 32 || !((ds.token_masks[r * ds.mask_words + i / 32] >> (i % 32)) & 1u))
            row[i] = -std::numeric_limits<float>::infinity();
      ds.out[r] = row_sampler_.Sample(ds.rows[r], std::span<float>(row, vocab), ds.counts, ds.suppressed);
    }
    return Status::Ok();
  }

 private:
  std::unique_ptr<model::ModelBackend> inner_;
  int* logit_steps_;
  int* sampled_steps_;
  sampling::RowSampler row_sampler_;
  std::vector<float> all_;
};

struct Outcome {
  std::map<uint64_t, V> tokens;
  std::map<uint64_t, int32_t> cached;
  sched::SchedulerStats stats;
  int logit_steps = 0, sampled_steps = 0;  // of a DeviceSamplingBackend
};

constexpr int32_t kMaxNew = 20;

// Runs the waves one after another (each wave submitted at once) on one scheduler: greedy
// requests of kMaxNew tokens unless `sampling` gives a request other parameters; over a
// DeviceSamplingBackend if device_sampling.
Outcome RunWaves(const SchedulerConfig& cfg, const std::vector<std::map<uint64_t, V>>& waves, bool lpm = false,
                 bool device_sampling = false, const std::map<uint64_t, SamplingParams>& sampling = {},
                 const std::map<uint64_t, grammar::GrammarSpec>& grammars = {}) {
  Outcome o;
  const int64_t slots = cfg.max_total_tokens + cfg.page_size + 1;
  Result<std::unique_ptr<ModelWorker>> worker = Status::Internal("unset");
  if (device_sampling) {
    auto cpu = model::MakeCpuBackend(Model(), slots);
    EXPECT_TRUE(cpu.ok()) << cpu.status().ToString();
    worker = ModelWorker::Create(
        std::make_unique<DeviceSamplingBackend>(std::move(cpu).value(), &o.logit_steps, &o.sampled_steps),
        cfg.max_running_requests, cfg.max_req_len + 2);
  } else {
    worker = ModelWorker::Create(Model(), slots, cfg.max_running_requests, cfg.max_req_len + 2);
  }
  EXPECT_TRUE(worker.ok()) << worker.status().ToString();
  (*worker)->set_grammar_cache(std::make_shared<grammar::GrammarCache>(grammar::TokenVocabOf(Tok())));
  std::unique_ptr<sched::SchedulePolicy> policy;
  if (lpm) policy = std::make_unique<sched::LpmPolicy>(128, 32, 32); else policy = std::make_unique<sched::FcfsPolicy>();
  sched::Scheduler s(cfg, sched::OwnCache(std::make_unique<sched::RadixCache>()),
                     sched::OwnPolicy(std::move(policy)), [&](const sched::BatchTokenIdOut& m) {
                       for (const auto& out : m.outputs) {
                         V& t = o.tokens[out.rid];
                         t.insert(t.end(), out.output_ids.begin(), out.output_ids.end());
                         o.cached[out.rid] = out.cached_tokens;
                       }
                     });
  sched::StepDriver driver(&s, worker->get());
  for (const auto& wave : waves) {
    for (const auto& [rid, prompt] : wave) {
      sched::TokenizedRequest g;
      g.rid = rid;
      g.input_ids = prompt;
      g.spec.sampling.temperature = 0;
      g.spec.sampling.max_new_tokens = kMaxNew;
      g.spec.sampling.ignore_eos = true;
      if (auto it = sampling.find(rid); it != sampling.end()) g.spec.sampling = it->second;
      if (auto it = grammars.find(rid); it != grammars.end()) g.spec.grammar = it->second;
      s.Submit(std::move(g));
    }
    Status st = driver.RunUntilIdle(100000);
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

TEST_F(ModelWorkerTest, ABackendSamplingOnTheDeviceGivesTheHostSamplersGreedyTokens) {
  Outcome o = RunWaves(Base(), {prompts_}, false, /*device_sampling=*/true);
  EXPECT_EQ(o.tokens, alone_);
  EXPECT_GT(o.sampled_steps, 0);
  EXPECT_EQ(o.logit_steps, 0);  // no step brings logits back
}

TEST_F(ModelWorkerTest, ABackendSamplingOnTheDeviceGivesTheHostSamplersDraws) {
  // Seeded draws at temperature with top-k, with top-p and min-p and penalties, and a greedy
  // request with a repetition penalty, among the greedy ones: the same tokens either way.
  std::map<uint64_t, V> wave = prompts_;
  wave[50] = prompts_[2];
  wave[51] = prompts_[3];
  wave[52] = prompts_[4];
  std::map<uint64_t, SamplingParams> sampling;
  SamplingParams drawn;
  drawn.temperature = 0.7f;
  drawn.top_k = 40;
  drawn.seed = 3;
  drawn.has_seed = true;
  drawn.max_new_tokens = 12;
  drawn.ignore_eos = true;
  SamplingParams nucleus = drawn;
  nucleus.temperature = 1.2f;
  nucleus.top_k = -1;
  nucleus.top_p = 0.8f;
  nucleus.min_p = 0.02f;
  nucleus.frequency_penalty = 0.5f;
  nucleus.presence_penalty = 0.3f;
  SamplingParams penalised;
  penalised.temperature = 0;
  penalised.repetition_penalty = 1.3f;
  penalised.max_new_tokens = 12;
  penalised.ignore_eos = true;
  sampling[50] = drawn;
  sampling[51] = nucleus;
  sampling[52] = penalised;
  Outcome host = RunWaves(Base(), {wave}, false, false, sampling);
  Outcome device = RunWaves(Base(), {wave}, false, /*device_sampling=*/true, sampling);
  EXPECT_EQ(device.tokens, host.tokens);
  for (const auto& [rid, p] : prompts_) EXPECT_EQ(device.tokens[rid], alone_[rid]) << rid;
  EXPECT_EQ(device.tokens[50].size(), 12u);
  EXPECT_NE(host.tokens[50], host.tokens[51]);  // the draws are not all one token
  EXPECT_EQ(device.logit_steps, 0);
}

// Structured output in the engine: constrained requests (a regex and a JSON schema, greedy and
// drawn) among unconstrained ones. Each constrained output is in its grammar's language and ends
// with EOS where the grammar may end; the unconstrained ones are unchanged; the constrained ones
// are the same in the normal loop, the overlap loop (step i+1's mask needs step i's token), over
// a backend that samples on the device with the masks, and (greedy ones) after retraction, when
// the worker replays a request's earlier output into a new matcher.
class ConstrainedTest : public ModelWorkerTest {
 protected:
  static constexpr uint64_t kRegexGreedy = 60, kSchemaGreedy = 61, kRegexDrawn = 62, kSchemaDrawn = 63;
  static std::map<uint64_t, grammar::GrammarSpec> Grammars() {
    const grammar::GrammarSpec regex{grammar::GrammarKind::kRegex, "(Tom|Lily|Sue) (is|was) [a-z]{2,6}( [a-z]{2,6}){0,3}\\."};
    const grammar::GrammarSpec schema{
        grammar::GrammarKind::kJsonSchema,
        R"({"type":"object","properties":{"name":{"type":"string","maxLength":6},"age":{"type":"integer","minimum":1,"maximum":99},"pet":{"enum":["cat","dog"]}},"required":["name","age","pet"],"additionalProperties":false})"};
    return {{kRegexGreedy, regex}, {kSchemaGreedy, schema}, {kRegexDrawn, regex}, {kSchemaDrawn, schema}};
  }
  static std::map<uint64_t, SamplingParams> Sampling() {
    SamplingParams greedy;
    greedy.temperature = 0;
    greedy.max_new_tokens = 120;
    SamplingParams drawn = greedy;
    drawn.temperature = 1.0f;
    drawn.seed = 11;
    drawn.has_seed = true;
    return {{kRegexGreedy, greedy}, {kSchemaGreedy, greedy}, {kRegexDrawn, drawn}, {kSchemaDrawn, drawn}};
  }
  static std::map<uint64_t, V> Wave() {
    std::map<uint64_t, V> wave = prompts_;
    for (uint64_t rid : {kRegexGreedy, kSchemaGreedy, kRegexDrawn, kSchemaDrawn}) wave[rid] = prompts_[rid % 8 + 1];
    return wave;
  }
  // Each constrained output: every token accepted by a fresh matcher, the last one EOS.
  static void ExpectInGrammar(const Outcome& o) {
    auto vocab = grammar::TokenVocabOf(Tok());
    for (const auto& [rid, spec] : Grammars()) {
      auto g = grammar::CompileSpec(spec);
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      grammar::GrammarMatcher m(std::make_shared<const grammar::CompiledGrammar>(std::move(g).value(), vocab));
      const V& out = o.tokens.at(rid);
      ASSERT_FALSE(out.empty()) << rid;
      for (int32_t t : out) ASSERT_TRUE(m.AcceptToken(t)) << rid << ": token " << t << " in " << Tok().Decode(out, true);
      EXPECT_TRUE(m.terminated()) << rid << " did not end on EOS: " << Tok().Decode(out, true);
      EXPECT_LT(out.size(), 120u) << rid;
    }
  }
};

TEST_F(ConstrainedTest, OutputsFollowTheirGrammarsAndTheOthersAreUnchanged) {
  Outcome o = RunWaves(Base(), {Wave()}, false, false, Sampling(), Grammars());
  ExpectInGrammar(o);
  for (const auto& [rid, p] : prompts_) EXPECT_EQ(o.tokens[rid], alone_[rid]) << rid;
  const std::string json = Tok().Decode(o.tokens[kSchemaGreedy], true);
  EXPECT_EQ(json.rfind("{\"name\":\"", 0), 0u) << json;  // the schema's order
}

TEST_F(ConstrainedTest, TheOverlapLoopGivesTheSameOutputs) {
  Outcome normal = RunWaves(Base(), {Wave()}, false, false, Sampling(), Grammars());
  SchedulerConfig c = Base();
  c.overlap = true;
  Outcome overlap = RunWaves(c, {Wave()}, false, false, Sampling(), Grammars());
  ExpectInGrammar(overlap);
  EXPECT_EQ(overlap.tokens, normal.tokens);
}

TEST_F(ConstrainedTest, ABackendSamplingOnTheDeviceAppliesTheMasks) {
  Outcome host = RunWaves(Base(), {Wave()}, false, false, Sampling(), Grammars());
  Outcome device = RunWaves(Base(), {Wave()}, false, /*device_sampling=*/true, Sampling(), Grammars());
  ExpectInGrammar(device);
  EXPECT_EQ(device.tokens, host.tokens);
  EXPECT_EQ(device.logit_steps, 0);
}

TEST_F(ConstrainedTest, RetractedRequestsKeepTheirGrammarState) {
  SchedulerConfig c = Base();
  c.max_total_tokens = 250;
  c.clip_max_new_tokens = 2;  // over-admit so decode runs out of KV and retracts
  Outcome o = RunWaves(c, {Wave()}, false, false, Sampling(), Grammars());
  EXPECT_GT(o.stats.retractions, 0);
  // A recomputed prefix may round differently from the decode steps that made it, so a
  // constrained request's later tokens may differ from its unretracted run; they still follow
  // its grammar from where it was.
  ExpectInGrammar(o);
}

// A request whose state the worker lost (a restarted worker) comes back with its history: the
// worker feeds the output part (from output_begin on) to a new matcher before sampling.
TEST_F(ConstrainedTest, ANewStateReplaysTheOutputIntoItsMatcher) {
  auto worker = ModelWorker::Create(Model(), 512, 4, 300);
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  (*worker)->set_grammar_cache(std::make_shared<grammar::GrammarCache>(grammar::TokenVocabOf(Tok())));
  const std::string regex = " ?Tom (is|was)(happy|sad)\\.";  // SPM's space prefix comes first
  const V prompt = Tok().Encode("Once upon a time", true, false);
  const V output_tokens = Tok().Encode("Tom was", false, false);  // " Tom", " was"
  V all = prompt;
  all.insert(all.end(), output_tokens.begin(), output_tokens.end());
  sched::ForwardBatch fb;
  fb.batch_id = 1;
  fb.mode = sched::ForwardMode::kExtend;
  sched::ForwardReq f;
  f.rid = 7;
  f.extend_len = static_cast<int32_t>(all.size());
  f.new_state = true;
  f.output_begin = static_cast<int32_t>(prompt.size());
  f.grammar_kind = grammar::GrammarKind::kRegex;
  f.grammar_len = static_cast<int32_t>(regex.size());
  f.sampling.temperature = 0;
  f.sampling.max_new_tokens = 8;
  fb.grammar_text.assign(regex.begin(), regex.end());
  fb.reqs.push_back(f);
  fb.input_ids = all;
  for (size_t i = 0; i < all.size(); ++i) fb.out_cache_loc.push_back(static_cast<int32_t>(i + 1));
  sched::ForwardResult result;
  ASSERT_TRUE((*worker)->Forward(fb, &result).ok());
  ASSERT_EQ(result.next_token_ids.size(), 1u);
  // The token continues "Tom was": a matcher fed the same output takes it.
  auto g = grammar::CompileSpec({grammar::GrammarKind::kRegex, regex});
  ASSERT_TRUE(g.ok());
  grammar::GrammarMatcher m(std::make_shared<const grammar::CompiledGrammar>(std::move(g).value(), grammar::TokenVocabOf(Tok())));
  for (int32_t t : output_tokens) ASSERT_TRUE(m.AcceptToken(t));
  EXPECT_TRUE(m.AcceptToken(result.next_token_ids[0])) << Tok().TokenToPiece(result.next_token_ids[0]);
  // A fresh matcher (the output not replayed) would not: the grammar starts with "Tom".
  grammar::GrammarMatcher fresh(m.Fork());
  ASSERT_TRUE(fresh.Rollback(static_cast<int>(output_tokens.size()) + 1).ok());
  EXPECT_FALSE(fresh.AcceptToken(result.next_token_ids[0])) << Tok().TokenToPiece(result.next_token_ids[0]);
}

}  // namespace
}  // namespace radixserve
