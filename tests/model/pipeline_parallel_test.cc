// Pipeline parallelism of the forward pass: each stage holds a contiguous range of layers
// (core/model/pipeline_stage.h), the first embeds the tokens, every stage hands its residual
// stream to the next, and the last computes the logits. Every stage computes its layers exactly
// as the whole model does (the same kernels over the same shapes), so the staged logits equal the
// whole model's bit for bit, for stories260K and llama.cpp's reference files of each
// architecture, at 2 stages and at as many as the model has layers. Bad ranges and missing hidden
// state are refused with a message saying why.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/model/llama_model.h"
#include "tests/model/open_gguf.h"
#include "core/model/pipeline_stage.h"

namespace radixserve::model {
namespace {

const std::string kShared = RADIXSERVE_SHARED_DIR;

// A model as a list of stages (one: the whole model), each with its own KV cache.
struct Staged {
  std::vector<std::unique_ptr<LlamaModel>> stages;
  std::vector<std::unique_ptr<KvCache>> kv;
};

Result<Staged> Load(const std::shared_ptr<const gguf::GgufFile>& file, int pp, int64_t slots) {
  RS_ASSIGN_OR_RETURN(LlamaConfig c, LlamaConfig::FromGguf(*file));
  Staged s;
  for (int r = 0; r < pp; ++r) {
    RS_ASSIGN_OR_RETURN(StageLayers layers, PipelineStageLayers(c.num_layers, r, pp));
    ModelOptions o;
    o.num_threads = 1;
    o.layer_begin = layers.begin;
    o.layer_end = layers.end;
    RS_ASSIGN_OR_RETURN(auto m, LlamaModel::Load(file, o));
    RS_ASSIGN_OR_RETURN(auto kv, m->CreateKvCache(slots));
    s.stages.push_back(std::move(m));
    s.kv.push_back(std::move(kv));
  }
  return s;
}

// One step through every stage in order, as the stage workers run it.
Status Forward(Staged& s, std::span<const SequenceInput> in, int64_t tokens, std::span<float> logits) {
  std::vector<float> hidden_in, hidden_out;
  const int64_t dim = s.stages[0]->config().dim;
  for (size_t r = 0; r < s.stages.size(); ++r) {
    ForwardOptions fo;
    fo.hidden_in = hidden_in;
    const bool last = r + 1 == s.stages.size();
    if (!last) {
      hidden_out.assign(static_cast<size_t>(tokens * dim), 0.0f);
      fo.hidden_out = hidden_out;
    }
    RS_RETURN_IF_ERROR(s.stages[r]->Forward(in, *s.kv[r], last ? logits : std::span<float>(), fo));
    hidden_in.swap(hidden_out);
  }
  return Status::Ok();
}

// Greedy decoding of two sequences in one batch per step (the second starts as a longer prompt);
// every step's logits are kept.
Status Greedy(Staged& s, int steps, std::vector<std::vector<int32_t>>* ids, std::vector<float>* all_logits) {
  const int32_t vocab = s.stages[0]->config().vocab_size;
  std::vector<std::vector<int32_t>> next = {{1, 7 % vocab, 42 % vocab, 99 % vocab},
                                            {1, 3 % vocab, 5 % vocab, 8 % vocab, 13 % vocab, 21 % vocab}};
  const int64_t cap = 64;
  std::vector<std::vector<int32_t>> slots(2);
  for (int q = 0; q < 2; ++q)
    for (int64_t i = 0; i < cap; ++i) slots[q].push_back(static_cast<int32_t>(q * cap + i));
  std::vector<int32_t> cached(2, 0);
  std::vector<float> logits(2 * static_cast<size_t>(vocab));
  ids->assign(2, {});
  for (int step = 0; step < steps; ++step) {
    std::vector<SequenceInput> in(2);
    int64_t tokens = 0;
    for (int q = 0; q < 2; ++q) {
      in[q] = {cached[q], next[q], std::span<const int32_t>(slots[q].data(), cached[q] + next[q].size())};
      tokens += static_cast<int64_t>(next[q].size());
    }
    RS_RETURN_IF_ERROR(Forward(s, in, tokens, logits));
    all_logits->insert(all_logits->end(), logits.begin(), logits.end());
    for (int q = 0; q < 2; ++q) {
      cached[q] += static_cast<int32_t>(next[q].size());
      const float* row = logits.data() + static_cast<size_t>(q) * vocab;
      next[q] = {static_cast<int32_t>(std::max_element(row, row + vocab) - row)};
      (*ids)[q].push_back(next[q][0]);
    }
  }
  return Status::Ok();
}

void ExpectSameAsTheWholeModel(const std::string& path) {
  SCOPED_TRACE(path);
  auto file = OpenGguf(path);
  ASSERT_TRUE(file);
  auto config = LlamaConfig::FromGguf(*file);
  ASSERT_TRUE(config.ok());
  constexpr int kSteps = 10;
  auto whole = Load(file, 1, 128);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  std::vector<std::vector<int32_t>> want_ids;
  std::vector<float> want_logits;
  ASSERT_TRUE(Greedy(*whole, kSteps, &want_ids, &want_logits).ok());
  std::vector<int> sizes = {2};
  if (config->num_layers > 2) sizes.push_back(config->num_layers);  // one layer per stage
  for (int pp : sizes) {
    auto staged = Load(file, pp, 128);
    ASSERT_TRUE(staged.ok()) << "pp " << pp << ": " << staged.status().ToString();
    EXPECT_EQ(staged->stages.back()->layer_end(), config->num_layers);
    EXPECT_EQ(staged->kv[0]->num_layers(), staged->stages[0]->layer_end());  // a stage caches its layers only
    std::vector<std::vector<int32_t>> ids;
    std::vector<float> logits;
    Status s = Greedy(*staged, kSteps, &ids, &logits);
    ASSERT_TRUE(s.ok()) << "pp " << pp << ": " << s.ToString();
    EXPECT_EQ(ids, want_ids) << "pp " << pp;
    EXPECT_TRUE(logits == want_logits) << "pp " << pp << ": logits are not the whole model's bit for bit";
  }
}

TEST(PipelineParallel, Stories260KStagesGiveTheWholeModelsLogitsBitForBit) {
  ExpectSameAsTheWholeModel(kShared + "/models/stories260K.gguf");
}

TEST(PipelineParallel, ReferenceFilesStagesGiveTheWholeModelsLogitsBitForBit) {
  for (const char* f : {"a_llama.F32", "a_llama.Q8_0", "a_llama.Q4_K_M", "b_llama3rope.F32", "c_qwen2.Q4_K_M",
                        "d_phi3.Q8_0", "e_gemma.F32"})
    ExpectSameAsTheWholeModel(kShared + "/models/ref/models/" + std::string(f) + ".gguf");
}

TEST(PipelineParallel, StageLayersSplitEvenlyWithTheRemainderOnLaterStages) {
  std::vector<std::pair<int, int>> got;
  for (int r = 0; r < 3; ++r) {
    auto l = PipelineStageLayers(8, r, 3);
    ASSERT_TRUE(l.ok());
    got.emplace_back(l->begin, l->end);
  }
  EXPECT_EQ(got, (std::vector<std::pair<int, int>>{{0, 2}, {2, 5}, {5, 8}}));
  auto too_many = PipelineStageLayers(2, 0, 3);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("2 layers cannot be split into 3"), std::string::npos);
  EXPECT_FALSE(PipelineStageLayers(8, 3, 3).ok());
}

TEST(PipelineParallel, BadRangesAndMissingHiddenStateAreRefused) {
  auto file = OpenGguf(kShared + "/models/stories260K.gguf");
  ASSERT_TRUE(file);
  ModelOptions o;
  o.num_threads = 1;
  o.layer_begin = 3;
  o.layer_end = 2;
  auto bad = LlamaModel::Load(file, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("layer range [3, 2)"), std::string::npos) << bad.status().ToString();
  o.layer_begin = 1;
  o.layer_end = -1;
  auto second = LlamaModel::Load(file, o);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  auto kv = (*second)->CreateKvCache(16);
  ASSERT_TRUE(kv.ok());
  std::vector<int32_t> tokens = {1, 2}, slots = {0, 1};
  SequenceInput in{0, tokens, slots};
  std::vector<float> logits((*second)->config().vocab_size);
  Status s = (*second)->Forward(std::span<const SequenceInput>(&in, 1), **kv, logits);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("needs " + std::to_string(2 * (*second)->config().dim) + " floats of hidden state"),
            std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace radixserve::model
