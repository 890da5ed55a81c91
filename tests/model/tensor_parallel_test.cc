// Tensor parallelism of the forward pass (core/model/tensor_parallel.h): each rank holds its
// heads, FFN columns and projection rows, the ranks all-gather around the two projections, and
// the greedy tokens of a two-sequence batch are the whole model's (its logits bit for bit with
// quantised weights; see ExpectSameAsTheWholeModel), for stories260K and llama.cpp's reference files (llama in F32, Q8_0 and
// Q4_K_M; llama-3 rope; qwen2 with biases; phi3 with fused tensors; gemma), at tp 2 and 4 where
// the model divides. Sizes a model does not divide are refused with a message saying why. Ranks
// are threads (ThreadCollectives) or processes over shared memory (ShmCollective).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "core/model/llama_model.h"
#include "tests/model/open_gguf.h"
#include "core/model/shm_collective.h"
#include "core/modelgen/model_generator.h"

namespace radixserve::model {
namespace {

const std::string kShared = RADIXSERVE_SHARED_DIR;

struct RankRun {
  std::vector<std::vector<int32_t>> ids;  // per sequence
  std::vector<float> last_logits;         // of the last step, both sequences
};

// Greedy decoding of two sequences in one batch per step (the second starts as a longer prompt).
Status Greedy(LlamaModel& m, int steps, RankRun* out) {
  const int32_t vocab = m.config().vocab_size;
  std::vector<std::vector<int32_t>> next = {{1, 7 % vocab, 42 % vocab, 99 % vocab},
                                            {1, 3 % vocab, 5 % vocab, 8 % vocab, 13 % vocab, 21 % vocab}};
  const int64_t cap = 64;
  RS_ASSIGN_OR_RETURN(auto kv, m.CreateKvCache(2 * cap));
  std::vector<std::vector<int32_t>> slots(2);
  for (int s = 0; s < 2; ++s)
    for (int64_t i = 0; i < cap; ++i) slots[s].push_back(static_cast<int32_t>(s * cap + i));
  std::vector<int32_t> cached(2, 0);
  out->ids.assign(2, {});
  out->last_logits.assign(2 * static_cast<size_t>(vocab), 0.0f);
  for (int step = 0; step < steps; ++step) {
    std::vector<SequenceInput> in(2);
    for (int s = 0; s < 2; ++s)
      in[s] = {cached[s], next[s], std::span<const int32_t>(slots[s].data(), cached[s] + next[s].size())};
    ForwardOptions fo;
    fo.step = static_cast<uint64_t>(step) + 1;
    RS_RETURN_IF_ERROR(m.Forward(in, *kv, out->last_logits, fo));
    for (int s = 0; s < 2; ++s) {
      cached[s] += static_cast<int32_t>(next[s].size());
      const float* row = out->last_logits.data() + static_cast<size_t>(s) * vocab;
      next[s] = {static_cast<int32_t>(std::max_element(row, row + vocab) - row)};
      out->ids[s].push_back(next[s][0]);
    }
  }
  return Status::Ok();
}

// The ranks of a tp-size group as threads; each loads its shard and decodes.
Status RunRanks(const std::shared_ptr<const gguf::GgufFile>& file, int tp, int steps, std::vector<RankRun>* runs) {
  auto collectives = MakeThreadCollectives(tp);
  runs->assign(tp, {});
  std::vector<Status> status(tp);
  std::vector<std::thread> ranks;
  for (int r = 0; r < tp; ++r)
    ranks.emplace_back([&, r] {
      ModelOptions o;
      o.num_threads = 1;
      o.collective = collectives[r].get();
      auto m = LlamaModel::Load(file, o);
      if (!m.ok()) {
        status[r] = m.status();
        return;
      }
      status[r] = Greedy(**m, steps, &(*runs)[r]);
    });
  for (auto& t : ranks) t.join();
  for (const Status& s : status) RS_RETURN_IF_ERROR(s);
  return Status::Ok();
}

// Quantised weights run through this engine's own kernels, whose dot products do not depend on
// how many rows a call computes: the ranks' logits are the whole model's bit for bit. F32 prefill
// goes through OpenBLAS's sgemm, whose kernel (and so its summation order) depends on the shape
// of the call: there the logits agree to rounding, |d| <= 1e-4 (1 + |logit|) (a few units in the
// last place of sums over at most 1,024 terms, through the layers), and the greedy tokens exactly.
void ExpectSameAsTheWholeModel(const std::string& path, std::vector<int> sizes, bool f32) {
  SCOPED_TRACE(path);
  auto file = OpenGguf(path);
  ASSERT_TRUE(file);
  constexpr int kSteps = 12;
  ModelOptions whole;
  whole.num_threads = 1;
  auto m = LlamaModel::Load(file, whole);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  RankRun reference;
  ASSERT_TRUE(Greedy(**m, kSteps, &reference).ok());
  for (int tp : sizes) {
    std::vector<RankRun> runs;
    Status s = RunRanks(file, tp, kSteps, &runs);
    ASSERT_TRUE(s.ok()) << "tp " << tp << ": " << s.ToString();
    float max_diff = 0;
    bool within = true;
    for (size_t i = 0; i < reference.last_logits.size(); ++i) {
      const float d = std::fabs(runs[0].last_logits[i] - reference.last_logits[i]);
      max_diff = std::max(max_diff, d);
      within = within && d <= 1e-4f * (1 + std::fabs(reference.last_logits[i]));
    }
    std::printf("%s tp %d: greedy ids %s, last logits %s (max difference %.3g)\n", path.c_str(), tp,
                runs[0].ids == reference.ids ? "equal" : "DIFFER",
                runs[0].last_logits == reference.last_logits ? "equal bit for bit" : "not bit for bit", max_diff);
    for (int r = 0; r < tp; ++r) {
      EXPECT_EQ(runs[r].ids, reference.ids) << "tp " << tp << " rank " << r;
      EXPECT_EQ(runs[r].last_logits, runs[0].last_logits) << "tp " << tp << ": rank " << r << " differs from rank 0";
    }
    if (f32) {
      EXPECT_TRUE(within) << "tp " << tp << ": max difference " << max_diff;
    } else {
      EXPECT_EQ(runs[0].last_logits, reference.last_logits) << "tp " << tp;
    }
  }
}

TEST(TensorParallel, Stories260KGivesTheWholeModelsGreedyTokensAtTp2AndTp4) {
  ExpectSameAsTheWholeModel(kShared + "/models/stories260K.gguf", {2, 4}, /*f32=*/true);
}

TEST(TensorParallel, ReferenceFilesGiveTheWholeModelsGreedyTokens) {
  for (const char* f : {"a_llama.F32", "a_llama.Q8_0", "a_llama.Q4_K_M", "b_llama3rope.F32", "c_qwen2.F32",
                        "c_qwen2.Q4_K_M", "d_phi3.F32", "d_phi3.Q8_0", "e_gemma.F32"})
    ExpectSameAsTheWholeModel(kShared + "/models/ref/models/" + std::string(f) + ".gguf", {2},
                              std::string(f).find("F32") != std::string::npos);
  // Four ranks over a_llama's two K/V heads: each K/V head is held by two ranks.
  ExpectSameAsTheWholeModel(kShared + "/models/ref/models/a_llama.Q8_0.gguf", {4}, /*f32=*/false);
}

TEST(TensorParallel, GeneratedModelsGiveTheWholeModelsGreedyTokensAtTp2AndTp4) {
  for (const char* type : {"f32", "q8_0", "q4_k_m"}) {
    auto spec = modelgen::SpecForSize("small");
    ASSERT_TRUE(spec.ok());
    spec->weights = *modelgen::ParseWeightType(type);
    const std::string path = ::testing::TempDir() + "/tp_small_" + type + "_" + std::to_string(::getpid()) + ".gguf";
    ASSERT_TRUE(modelgen::GenerateModel(*spec, path).ok());
    ExpectSameAsTheWholeModel(path, {2, 4}, std::string(type) == "f32");
    std::remove(path.c_str());
  }
}

TEST(TensorParallel, SizesTheModelDoesNotDivideAreRefusedWithTheReason) {
  auto file = OpenGguf(kShared + "/models/stories260K.gguf");
  ASSERT_TRUE(file);
  std::vector<RankRun> runs;
  Status three = RunRanks(file, 3, 1, &runs);
  EXPECT_EQ(three.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(three.message().find("query heads do not divide"), std::string::npos) << three.message();
  auto a_llama = OpenGguf(kShared + "/models/ref/models/a_llama.F32.gguf");
  ASSERT_TRUE(a_llama);
  Status eight = RunRanks(a_llama, 8, 1, &runs);
  EXPECT_EQ(eight.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(eight.message().find("tensor parallelism of size 8: the model's 4 query heads do not divide by it"),
            std::string::npos)
      << eight.message();
}

// Ranks as processes over shared memory: rank 0 here, the others forked; the same tokens as the
// whole model, and the all-gathers' cost per step.
TEST(TensorParallel, ProcessRanksOverSharedMemoryGiveTheWholeModelsTokens) {
  auto file = OpenGguf(kShared + "/models/stories260K.gguf");
  ASSERT_TRUE(file);
  constexpr int kSteps = 12;
  ModelOptions whole;
  whole.num_threads = 1;
  auto m = LlamaModel::Load(file, whole);
  ASSERT_TRUE(m.ok());
  RankRun reference;
  ASSERT_TRUE(Greedy(**m, kSteps, &reference).ok());
  const std::string group = "test_" + std::to_string(::getpid());
  for (int tp : {2, 4}) {
    std::vector<pid_t> children;
    for (int r = 1; r < tp; ++r) {
      pid_t pid = ::fork();
      if (pid == 0) {
        auto c = ShmCollective::Open(group, r, tp, std::chrono::seconds(20));
        if (!c.ok()) ::_exit(2);
        ModelOptions o;
        o.num_threads = 1;
        o.collective = c->get();
        auto rank_model = LlamaModel::Load(file, o);
        RankRun run;
        ::_exit(rank_model.ok() && Greedy(**rank_model, kSteps, &run).ok() && run.ids == reference.ids ? 0 : 3);
      }
      children.push_back(pid);
    }
    auto c = ShmCollective::Open(group, 0, tp, std::chrono::seconds(20));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ModelOptions o;
    o.num_threads = 1;
    o.collective = c->get();
    auto rank0 = LlamaModel::Load(file, o);
    ASSERT_TRUE(rank0.ok()) << rank0.status().ToString();
    RankRun run;
    Status s = Greedy(**rank0, kSteps, &run);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(run.ids, reference.ids) << "tp " << tp;
    std::printf("stories260K tp %d over shared memory: %.1f us of all-gathers per step (%d layers, 4 each)\n", tp,
                1e6 * (*c)->TakeSeconds() / kSteps, (*rank0)->config().num_layers);
    for (pid_t pid : children) {
      int st = 0;
      ASSERT_EQ(::waitpid(pid, &st, 0), pid);
      EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "tp " << tp << ": a rank's tokens differ (status " << st << ")";
    }
  }
}

// A rank that never comes fails the step after the timeout, with the rank's number; it does not hang.
TEST(TensorParallel, AMissingRankFailsTheStepInsteadOfHanging) {
  auto file = OpenGguf(kShared + "/models/stories260K.gguf");
  ASSERT_TRUE(file);
  auto c = ShmCollective::Open("test_missing_" + std::to_string(::getpid()), 0, 2, std::chrono::milliseconds(300));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ModelOptions o;
  o.num_threads = 1;
  o.collective = c->get();
  auto m = LlamaModel::Load(file, o);
  ASSERT_TRUE(m.ok());
  RankRun run;
  Status s = Greedy(**m, 1, &run);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("tensor-parallel rank 1 did not join step 1 within 300 ms"), std::string::npos)
      << s.message();
  auto other = ShmCollective::Open("test_nobody_" + std::to_string(::getpid()), 1, 2, std::chrono::milliseconds(100),
                                   std::chrono::milliseconds(100));
  EXPECT_EQ(other.status().code(), StatusCode::kUnavailable);  // no rank 0 created the group
}

}  // namespace
}  // namespace radixserve::model
