// CudaModel against the CPU's LlamaModel and llama.cpp's golden tokens: the whole forward pass on
// a GPU, in prefill, extend and decode batches over scattered KV slots.
// Registered with ctest only where the build machine has a GPU (tests/cuda/CMakeLists.txt).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <nlohmann/json.hpp>

#include "core/model/cuda_model.h"
#include "core/model/llama_model.h"
#include "core/modelgen/model_generator.h"
#include "core/sampling/row_sampler.h"
#include "kernels/cuda/device.h"
#include "tests/model/open_gguf.h"

namespace radixserve::model {
namespace {

// tools/gpu-check.sh runs this program away from the checkout, with the files it needs.
const std::string kShared = std::getenv("RADIXSERVE_SHARED_DIR") ? std::getenv("RADIXSERVE_SHARED_DIR")
                                                                  : RADIXSERVE_SHARED_DIR;

class CudaModelTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GT(cuda::DeviceCount(), 0) << "no CUDA device: " << cuda::NoDeviceReason(); }
};

int32_t ArgMax(std::span<const float> v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

TEST_F(CudaModelTest, Stories260KGreedyIsLlamaCppsGolden) {
  auto file = OpenGguf(kShared + "/models/stories260K.gguf");
  ASSERT_TRUE(file);
  auto model = CudaModel::Load(file, {.device = 0, .kv_type = KvType::kF16, .num_slots = 512});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::printf("device: %s\n", (*model)->device_name().c_str());
  std::ifstream in(kShared + "/models/golden_stories260K.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json golden = nlohmann::json::parse(in);
  const int vocab = (*model)->config().vocab_size;
  for (const auto& tc : golden["cases"]) {
    const auto prompt = tc["prompt_ids"].get<std::vector<int32_t>>();
    const auto expected = tc["completion_ids"].get<std::vector<int32_t>>();
    std::vector<int32_t> slots(prompt.size() + expected.size());
    for (size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<int32_t>(511 - 2 * i);  // not contiguous
    std::vector<float> logits(vocab);
    std::vector<int32_t> got;
    SequenceInput s{0, prompt, std::span<const int32_t>(slots.data(), prompt.size())};
    ASSERT_TRUE((*model)->Forward({&s, 1}, logits, {}).ok());
    int32_t next = ArgMax(logits);
    for (size_t i = 0; i < expected.size(); ++i) {
      got.push_back(next);
      if (i + 1 == expected.size()) break;
      const int32_t len = static_cast<int32_t>(prompt.size() + i);
      SequenceInput d{len, std::span<const int32_t>(&got.back(), 1), std::span<const int32_t>(slots.data(), len + 1)};
      ASSERT_TRUE((*model)->Forward({&d, 1}, logits, {}).ok());
      next = ArgMax(logits);
    }
    EXPECT_EQ(got, expected) << "prompt of " << prompt.size() << " tokens";
  }
}

// The medium generated model in F16, three batches: a prefill of three sequences (every
// position's logits), an extend after a cached prefix mixed with decodes, and a decode of all.
// The bound: the GPU rounds each GEMM's activations to F16 (relative 2^-12 per value, about
// 1.4e-4 of a dot product's size with random signs), the CPU keeps them F32; over the model's
// layers and its two projections per sublayer that compounds to well under 1% of the logits'
// range, which is the bound: |d| <= 0.01 * (1 + max |logit|). Greedy ids must agree wherever the
// CPU's best two logits are further apart than that bound.
TEST_F(CudaModelTest, MediumModelMatchesTheCpuForPrefillExtendAndDecode) {
  const std::string path = std::filesystem::temp_directory_path() / "radixserve_cuda_test_medium_f16.gguf";
  auto spec = modelgen::SpecForSize("medium");
  ASSERT_TRUE(spec.ok());
  spec->weights = modelgen::WeightTypes::All(gguf::TensorType::kF16);
  ASSERT_TRUE(modelgen::GenerateModel(*spec, path).ok());
  auto file = OpenGguf(path);
  ASSERT_TRUE(file);
  constexpr int64_t kSlots = 4096;
  ModelOptions cpu_options;
  cpu_options.num_threads = 4;
  auto cpu = LlamaModel::Load(file, cpu_options);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  auto kv = (*cpu)->CreateKvCache(kSlots);
  ASSERT_TRUE(kv.ok());
  auto gpu = CudaModel::Load(file, {.device = 0, .kv_type = KvType::kF32, .num_slots = kSlots});
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  const int vocab = (*cpu)->config().vocab_size;

  std::mt19937 rng(7);
  std::vector<int32_t> slot_pool(kSlots);
  std::iota(slot_pool.begin(), slot_pool.end(), 0);
  std::shuffle(slot_pool.begin(), slot_pool.end(), rng);
  const int lengths[3] = {37, 5, 64};
  std::vector<std::vector<int32_t>> tokens(3), slots(3);
  size_t next_slot = 0;
  for (int s = 0; s < 3; ++s) {
    std::uniform_int_distribution<int32_t> tok(3, vocab - 1);
    for (int i = 0; i < lengths[s] + 16; ++i) {
      tokens[s].push_back(tok(rng));
      slots[s].push_back(slot_pool[next_slot++]);
    }
  }
  int near_ties = 0;
  auto compare = [&](const char* what, std::span<const SequenceInput> seqs, bool all_logits) {
    SCOPED_TRACE(what);
    int64_t rows = 0;
    for (const auto& s : seqs) rows += all_logits ? static_cast<int64_t>(s.new_tokens.size()) : 1;
    std::vector<float> want(rows * vocab), got(rows * vocab);
    ForwardOptions fo;
    fo.all_logits = all_logits;
    ASSERT_TRUE((*cpu)->Forward(seqs, **kv, want, fo).ok());
    Status st = (*gpu)->Forward(seqs, got, fo);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (int64_t r = 0; r < rows; ++r) {
      std::span<const float> w(want.data() + r * vocab, vocab), g(got.data() + r * vocab, vocab);
      float top = 0, max_d = 0;
      for (int i = 0; i < vocab; ++i) {
        top = std::max(top, std::fabs(w[i]));
        max_d = std::max(max_d, std::fabs(w[i] - g[i]));
      }
      const float bound = 0.01f * (1 + top);
      ASSERT_LE(max_d, bound) << "row " << r;
      std::vector<float> sorted(w.begin(), w.end());
      std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
      if (sorted[0] - sorted[1] > bound) {
        EXPECT_EQ(ArgMax(g), ArgMax(w)) << "row " << r;
      } else {
        ++near_ties;
      }
    }
  };
  auto seq = [&](int s, int cached, int fresh) {
    return SequenceInput{cached, std::span<const int32_t>(tokens[s].data() + cached, fresh),
                         std::span<const int32_t>(slots[s].data(), cached + fresh)};
  };
  const SequenceInput prefill[] = {seq(0, 0, lengths[0]), seq(1, 0, lengths[1]), seq(2, 0, lengths[2])};
  compare("prefill", prefill, /*all_logits=*/true);
  const SequenceInput extend[] = {seq(0, lengths[0], 11), seq(1, lengths[1], 1), seq(2, lengths[2], 1)};
  compare("extend + decode", extend, false);
  const SequenceInput decode[] = {seq(0, lengths[0] + 11, 1), seq(1, lengths[1] + 1, 1), seq(2, lengths[2] + 1, 1)};
  compare("decode", decode, false);
  std::printf("near-ties not compared for greedy ids: %d\n", near_ties);

  // The KV rows the GPU wrote are the CPU's, to the same bound.
  std::vector<float> gk, gv, ck((*cpu)->config().kv_dim()), cv((*cpu)->config().kv_dim());
  for (int layer : {0, (*cpu)->config().num_layers - 1})
    for (int32_t slot : {slots[0][0], slots[2][63], slots[0][lengths[0] + 11]}) {
      ASSERT_TRUE((*gpu)->ReadKv(layer, slot, &gk, &gv).ok());
      (*kv)->ReadK(layer, slot, ck.data());
      (*kv)->ReadV(layer, slot, cv.data());
      for (size_t i = 0; i < ck.size(); ++i) {
        ASSERT_NEAR(gk[i], ck[i], 0.01f * (1 + std::fabs(ck[i]))) << "layer " << layer << " slot " << slot;
        ASSERT_NEAR(gv[i], cv[i], 0.01f * (1 + std::fabs(cv[i]))) << "layer " << layer << " slot " << slot;
      }
    }
  std::filesystem::remove(path);
}

// A step that samples on the device (ForwardOptions::sampling) returns for each row what the
// host's RowSampler gives on the logits the same step returns otherwise (the same step twice: its
// KV writes the same values to the same slots): a plain greedy row, a greedy row with penalties,
// a suppressed token and top logprobs, and a drawn row with top-k, top-p and min-p. Tokens are
// equal (a draw could differ only if its target fell within rounding, ~1e-7 of the mass, of a
// token's edge); log-probabilities within 1e-5: both sum the softmax in double from the same
// float logits, and differ only in the order of the sum and in the last bit of an exponential.
TEST_F(CudaModelTest, ASamplingStepReturnsTheHostSamplersTokensAndLogProbabilities) {
  auto file = OpenGguf(kShared + "/models/stories260K.gguf");
  ASSERT_TRUE(file);
  auto model = CudaModel::Load(file, {.device = 0, .kv_type = KvType::kF16, .num_slots = 256});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_TRUE((*model)->samples_on_device());
  const int vocab = (*model)->config().vocab_size;
  const std::vector<int32_t> p0 = {1, 403, 407, 261}, p1 = {1, 20, 30}, p2 = {1, 300, 301, 302, 303, 99};
  std::vector<int32_t> slots(13);
  for (size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<int32_t>(250 - 7 * i);
  const std::vector<SequenceInput> seqs = {{0, p0, std::span<const int32_t>(slots.data(), 4)},
                                           {0, p1, std::span<const int32_t>(slots.data() + 4, 3)},
                                           {0, p2, std::span<const int32_t>(slots.data() + 7, 6)}};
  std::vector<float> logits(3 * vocab);
  ASSERT_TRUE((*model)->Forward(seqs, logits, {}).ok());

  std::vector<sampling::RowSampling> rows(3);
  const int32_t best1 = ArgMax({logits.data() + vocab, size_t(vocab)});
  const std::vector<sampling::TokenCount> counts = {{20, 1, 0}, {30, 1, 2}, {best1, 0, 1}};
  const std::vector<int32_t> suppressed = {2};
  rows[1].repetition_penalty = 1.3f;
  rows[1].frequency_penalty = 0.5f;
  rows[1].counts_size = 3;
  rows[1].suppressed_size = 1;
  rows[1].top_logprobs = 5;
  rows[2].temperature = 0.8f;
  rows[2].top_k = 40;
  rows[2].top_p = 0.9f;
  rows[2].min_p = 0.01f;
  rows[2].uniform = 0.37;
  std::vector<sampling::RowSample> out(3);
  const DeviceSampling ds{rows, counts, suppressed, out};
  ForwardOptions on_device;
  on_device.sampling = &ds;
  ASSERT_TRUE((*model)->Forward(seqs, {}, on_device).ok());
  sampling::RowSampler host(vocab);
  for (int r = 0; r < 3; ++r) {
    std::vector<float> row(logits.begin() + r * vocab, logits.begin() + (r + 1) * vocab);
    const sampling::RowSample want = host.Sample(rows[r], row, counts, suppressed);
    EXPECT_EQ(out[r].token, want.token) << "row " << r;
    EXPECT_NEAR(out[r].logprob, want.logprob, 1e-5) << "row " << r;
    for (int j = 0; j < rows[r].top_logprobs; ++j) {
      EXPECT_EQ(out[r].top_ids[j], want.top_ids[j]) << "row " << r << " top " << j;
      EXPECT_NEAR(out[r].top_logprobs[j], want.top_logprobs[j], 1e-5) << "row " << r << " top " << j;
    }
  }
  EXPECT_EQ(out[0].token, ArgMax({logits.data(), size_t(vocab)}));
  // Sizes that do not match the step, logits as well, or a range outside the lists are refused.
  const DeviceSampling short_out{rows, counts, suppressed, std::span<sampling::RowSample>(out.data(), 2)};
  on_device.sampling = &short_out;
  EXPECT_EQ((*model)->Forward(seqs, {}, on_device).code(), StatusCode::kInvalidArgument);
  on_device.sampling = &ds;
  EXPECT_EQ((*model)->Forward(seqs, logits, on_device).code(), StatusCode::kInvalidArgument);
  rows[2].counts_begin = 2;
  rows[2].counts_size = 2;
  EXPECT_EQ((*model)->Forward(seqs, {}, on_device).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE((*model)->Forward(seqs, logits, {}).ok());
}

// Decode graphs: a decode step's shape (sequences, slot rows padded to 256) runs eagerly the first
// time, is captured the second and replayed after; a longer context is a new shape, and scratch
// that grows (a long prefill) drops the graphs, to be captured again. Against a model that never
// uses graphs, on the same device: the same kernels with the same arguments in the same order, so
// the logits agree to rounding (cuBLAS may choose another kernel under capture, a different
// summation order of F32 products: |d| <= 1e-4 * (1 + max |logit|)) and the greedy ids are equal.
TEST_F(CudaModelTest, DecodeStepsReplayedFromGraphsGiveTheEagerStepsLogits) {
  auto file = OpenGguf(kShared + "/models/stories260K.gguf");
  ASSERT_TRUE(file);
  auto eager = CudaModel::Load(file, {.device = 0, .kv_type = KvType::kF16, .num_slots = 2048});
  auto graphed = CudaModel::Load(file, {.device = 0, .kv_type = KvType::kF16, .num_slots = 2048, .decode_graphs = true});
  ASSERT_TRUE(eager.ok() && graphed.ok()) << eager.status().ToString() << graphed.status().ToString();
  const int vocab = (*eager)->config().vocab_size;
  constexpr int kSeqs = 3, kPrompt = 250, kSteps = 10;
  std::mt19937 rng(7);
  std::vector<std::vector<int32_t>> tokens(kSeqs), slots(kSeqs);
  for (int s = 0; s < kSeqs; ++s) {
    tokens[s].push_back(1);
    for (int i = 1; i < kPrompt + s; ++i) tokens[s].push_back(static_cast<int32_t>(3 + rng() % (vocab - 3)));
    for (int i = 0; i < 600; ++i) slots[s].push_back(static_cast<int32_t>(2047 - s - 3 * i));  // interleaved
  }
  auto run_both = [&](const std::vector<SequenceInput>& seqs, const char* what) {
    std::vector<float> a(seqs.size() * vocab), b(seqs.size() * vocab);
    ASSERT_TRUE((*eager)->Forward(seqs, a, {}).ok()) << what;
    ASSERT_TRUE((*graphed)->Forward(seqs, b, {}).ok()) << what;
    for (size_t r = 0; r < seqs.size(); ++r) {
      std::span<const float> ra(a.data() + r * vocab, vocab), rb(b.data() + r * vocab, vocab);
      float peak = 0, worst = 0;
      for (int i = 0; i < vocab; ++i) {
        peak = std::max(peak, std::abs(ra[i]));
        worst = std::max(worst, std::abs(ra[i] - rb[i]));
      }
      EXPECT_LE(worst, 1e-4f * (1 + peak)) << what << ", row " << r;
      EXPECT_EQ(ArgMax(ra), ArgMax(rb)) << what << ", row " << r;
      tokens[r].push_back(ArgMax(ra));
    }
  };
  auto decode_step = [&](int step) {
    std::vector<SequenceInput> seqs;
    for (int s = 0; s < kSeqs; ++s) {
      const int32_t len = static_cast<int32_t>(tokens[s].size()) - 1;
      seqs.push_back({len, std::span<const int32_t>(&tokens[s][len], 1), std::span<const int32_t>(slots[s].data(), len + 1)});
    }
    run_both(seqs, ("decode step " + std::to_string(step)).c_str());
  };
  std::vector<SequenceInput> prefill;
  for (int s = 0; s < kSeqs; ++s)
    prefill.push_back({0, tokens[s], std::span<const int32_t>(slots[s].data(), tokens[s].size())});
  run_both(prefill, "prefill");
  // Rows of 251..263 slots: width 256 for the first steps, 512 once the longest row passes 256.
  for (int step = 0; step < kSteps; ++step) decode_step(step);
  const int64_t wide_from = 256 - (kPrompt + kSeqs - 1);  // the step whose longest row first needs 257 slots
  EXPECT_EQ((*graphed)->graphs_captured(), 2);
  EXPECT_EQ((*graphed)->graph_replays(), (wide_from - 1) + (kSteps - wide_from - 1));
  EXPECT_EQ((*eager)->graph_replays(), 0);
  // A prefill of 900 tokens (more than the first one's 753) grows the scratch: the graphs go, and
  // the next repeated shape is captured anew. Its slots 0..899 are none of the sequences'.
  std::vector<int32_t> long_prompt(450, 5), long_slots(900);
  std::iota(long_slots.begin(), long_slots.end(), 0);
  const std::vector<SequenceInput> two_long = {{0, long_prompt, std::span<const int32_t>(long_slots.data(), 450)},
                                               {0, long_prompt, std::span<const int32_t>(long_slots.data() + 450, 450)}};
  std::vector<float> sink(2 * vocab);
  ASSERT_TRUE((*eager)->Forward(two_long, sink, {}).ok());
  ASSERT_TRUE((*graphed)->Forward(two_long, sink, {}).ok());
  decode_step(kSteps);
  EXPECT_EQ((*graphed)->graphs_captured(), 3);
}

TEST_F(CudaModelTest, BadInputsAreRefusedAndLeaveTheModelServing) {
  auto file = OpenGguf(kShared + "/models/stories260K.gguf");
  ASSERT_TRUE(file);
  auto model = CudaModel::Load(file, {.device = 0, .kv_type = KvType::kF16, .num_slots = 64});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_NE((*model)->Describe().find("cuda: "), std::string::npos);
  const int vocab = (*model)->config().vocab_size;
  std::vector<float> logits(vocab);
  const std::vector<int32_t> bad_token = {vocab}, good = {1}, slot = {3}, bad_slot = {64};
  SequenceInput a{0, bad_token, slot};
  EXPECT_EQ((*model)->Forward({&a, 1}, logits, {}).code(), StatusCode::kInvalidArgument);
  SequenceInput b{0, good, bad_slot};
  EXPECT_EQ((*model)->Forward({&b, 1}, logits, {}).code(), StatusCode::kInvalidArgument);
  std::vector<float> short_logits(vocab - 1);
  SequenceInput c{0, good, slot};
  EXPECT_EQ((*model)->Forward({&c, 1}, short_logits, {}).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE((*model)->Forward({&c, 1}, logits, {}).ok());
  EXPECT_EQ(CudaModel::Load(file, {.device = 99, .kv_type = KvType::kF16, .num_slots = 64}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace radixserve::model
