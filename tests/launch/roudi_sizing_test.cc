// RouDi sizing: limits come from the plan and the model file, bounds follow the documented
// formulas, and the pool configuration carries the largest message.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "core/builtin_model/builtin_model.h"
#include "core/gguf/gguf_reader.h"
#include "core/modelgen/model_generator.h"
#include "core/model/served_context.h"
#include "launch/launch_plan.h"
#include "launch/roudi_sizing.h"

#include "core/scheduler/scheduler_config.h"
#include "core/scheduler/worker.h"
#include "transport/messages.h"

namespace radixserve::launch {
namespace {

namespace fs = std::filesystem;
using transport::MessageSize;

class RouDiSizingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/radixserve-sizing-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    modelgen::ModelSpec spec;
    spec.dim = 32, spec.layers = 1, spec.heads = 2, spec.kv_heads = 1, spec.ffn = 64, spec.context = 512;
    model_ = dir_ + "/small.gguf";
    ASSERT_TRUE(modelgen::GenerateModel(spec, model_).ok());
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  LaunchPlan Plan(const std::string& scheduler_params) {
    std::string path = dir_ + "/launch.yaml";
    std::ofstream(path) << "launch:\n"
                           "  - arg: {name: model}\n"
                           "  - node: {component: worker, name: worker, parameters: {model: \"$(var model)\"}}\n"
                           "  - node: {component: scheduler, name: scheduler, parameters: {model: \"$(var model)\""
                        << scheduler_params << "}}\n";
    auto plan = PlanLaunch(path, {"model:=" + model_});
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    return plan.ok() ? *plan : LaunchPlan{};
  }

  static std::string dir_, model_;
};
std::string RouDiSizingTest::dir_, RouDiSizingTest::model_;

TEST_F(RouDiSizingTest, LimitsComeFromTheModelAndTheSchedulerParameters) {
  auto file = gguf::GgufFile::Open(model_);
  ASSERT_TRUE(file.ok());
  auto tokens = (*file)->GetStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok());
  size_t longest = 0;
  for (const auto& t : *tokens) longest = std::max(longest, t.size());

  auto limits = PipelineLimitsFromPlan(Plan(", max_running_requests: 8, chunked_prefill_size: 128, "
                                            "max_prefill_tokens: 256, max_total_tokens: 1024"));
  ASSERT_TRUE(limits.ok()) << limits.status().message();
  EXPECT_EQ(limits->model, model_);
  EXPECT_EQ(limits->context_length, 512);
  EXPECT_EQ(limits->vocab_size, static_cast<int64_t>(tokens->size()));
  EXPECT_EQ(limits->max_token_bytes, static_cast<int64_t>(longest));
  EXPECT_EQ(limits->max_running_requests, 8);
  EXPECT_EQ(limits->chunked_prefill_size, 128);
  EXPECT_EQ(limits->max_prefill_tokens, 256);
  EXPECT_EQ(limits->max_total_tokens, 1024);
}

// Without scheduler parameters RouDi is sized for the defaults the scheduler node runs with: both
// read them from SchedulerConfig (the sizing once used SGLang's 4096/16384 while the node ran 2048/8192).
TEST_F(RouDiSizingTest, SchedulerDefaultsWhenParametersAreAbsent) {
  auto limits = PipelineLimitsFromPlan(Plan(""));
  ASSERT_TRUE(limits.ok()) << limits.status().message();
  const sched::SchedulerConfig served;
  EXPECT_EQ(limits->max_running_requests, served.max_running_requests);
  EXPECT_EQ(limits->chunked_prefill_size, served.chunked_prefill_size);
  EXPECT_EQ(limits->max_prefill_tokens, served.max_prefill_tokens);
  EXPECT_EQ(limits->max_total_tokens, served.max_total_tokens);
  EXPECT_EQ(served.chunked_prefill_size, 2048);
  EXPECT_EQ(served.max_prefill_tokens, 8192);
}

TEST_F(RouDiSizingTest, BoundsFollowTheDocumentedFormulas) {
  PipelineLimits l;
  l.context_length = 512;
  l.max_token_bytes = 10;
  l.max_running_requests = 8;
  l.chunked_prefill_size = 128;
  l.max_prefill_tokens = 256;
  l.max_total_tokens = 1024;
  MessageBounds b = ComputeMessageBounds(l);
  const size_t R = 8, C = 512, P = 128, T = P + R, Bp = 8, U = 1024;
  const size_t G = 96 << 10;  // a grammar's text at most; a batch's new grammars at most G more
  EXPECT_EQ(b.tokenized_request,
            MessageSize<transport::TokenizedRequestMsg>({C * 4, 64 * 4, 16 * 256, 16 * 4, 256, 256, G}));  // salt, key
  EXPECT_EQ(b.forward_batch, MessageSize<transport::ForwardBatchMsg>({R * sizeof(transport::ForwardReqWire), T * 4,
                                                                      T * 4, Bp * C * 4, R * 8, Bp * C * 4, 2 * G}));
  // Both still fit the 256 KiB chunks RouDi always has (no pool of larger chunks for them).
  EXPECT_LT(b.forward_batch, 256u << 10);
  EXPECT_EQ(b.forward_result, MessageSize<transport::ForwardResultMsg>({R * 4, R * 4, R * 80, R * 80, 4096}));
  EXPECT_EQ(b.batch_token_id_out, MessageSize<transport::BatchTokenIdOutMsg>(
                                      {R * sizeof(transport::OutputEntry), (U + 5 * R) * 4, U * 4, U * 4, R * 256, U * 80, U * 80}));
  EXPECT_EQ(b.batch_str_out, MessageSize<transport::BatchStrOutMsg>(
                                 {R * sizeof(transport::OutputEntry), U * 4, 0, U * 4, (U + 5 * R) * 10 + R * 256, U * 80, U * 80}));
  EXPECT_EQ(b.largest(), std::max({b.tokenized_request, b.forward_batch, b.forward_result, b.batch_token_id_out,
                                   b.batch_str_out}));
  EXPECT_EQ(b.activations, 0u);  // no pipeline stages

  // Pipeline stages pass a batch's hidden state: T tokens of the model's width.
  PipelineLimits staged = l;
  staged.pipeline_stages = true;
  staged.hidden_dim = 2048;
  MessageBounds s = ComputeMessageBounds(staged);
  EXPECT_EQ(s.activations, MessageSize<transport::ActivationsMsg>({T * 2048 * 4, 4096}));
  EXPECT_EQ(s.largest(), s.activations);

  // Without chunking a prefill batch holds max(max_prefill_tokens, context), capped by the KV slots.
  l.chunked_prefill_size = 0;
  MessageBounds nochunk = ComputeMessageBounds(l);
  EXPECT_EQ(nochunk.forward_batch - b.forward_batch, 2 * (512 - 128) * 4u);
  l.max_total_tokens = 300;
  MessageBounds capped = ComputeMessageBounds(l);
  // P = 300 tokens; one request's prefix patch is at most 300 distinct slots; outputs at most 300 ids.
  EXPECT_EQ(capped.forward_batch, MessageSize<transport::ForwardBatchMsg>({R * sizeof(transport::ForwardReqWire),
                                                                           (300 + R) * 4, (300 + R) * 4,
                                                                           Bp * 300 * 4, R * 8, Bp * C * 4, 2 * G}));
  EXPECT_EQ(capped.batch_token_id_out,
            MessageSize<transport::BatchTokenIdOutMsg>(
                {R * sizeof(transport::OutputEntry), (300 + 5 * R) * 4, 300 * 4, 300 * 4, R * 256, 300 * 80, 300 * 80}));

  // Many new requests of a long context: admission caps the prefix ids a prefill batch carries
  // (sched::kMaxBatchPrefixIds, plus a first request whole and a chunked request's resync), not
  // max_running_requests contexts: 256 x 4096 would be 4 MiB of each.
  PipelineLimits many = l;
  many.context_length = 4096;
  many.max_running_requests = 256;
  many.max_total_tokens = 100000;
  const size_t L = sched::kMaxBatchPrefixIds + 3 * 4096, Rm = 256, Tm = 4096 + 256;  // unchunked: P = C
  EXPECT_EQ(ComputeMessageBounds(many).forward_batch,
            MessageSize<transport::ForwardBatchMsg>(
                {Rm * sizeof(transport::ForwardReqWire), Tm * 4, Tm * 4, L * 4, Rm * 8, L * 4, 2 * G}));
}

TEST_F(RouDiSizingTest, ConfigCarriesTheLargestMessage) {
  MessageBounds bounds;
  auto config = RouDiConfigForPlan(Plan(", max_running_requests: 64, max_total_tokens: 4096"), &bounds);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_GE(config->max_payload(), bounds.largest());
  EXPECT_EQ(config->max_payload(), transport::PipelineRouDiConfig(static_cast<uint32_t>(bounds.largest())).max_payload());
  // More running requests never shrink the largest message.
  MessageBounds more;
  ASSERT_TRUE(RouDiConfigForPlan(Plan(", max_running_requests: 128, max_total_tokens: 4096"), &more).ok());
  EXPECT_GT(more.largest(), bounds.largest());
}

TEST_F(RouDiSizingTest, AWorkerWithStagesSizesForTheModelsHiddenState) {
  std::string path = dir_ + "/pp.yaml";
  std::ofstream(path) << "launch:\n"
                         "  - node: {component: worker, name: worker, parameters: {model: \"" << model_
                      << "\", pp_size: \"2\", pp_rank: \"0\"}}\n"
                         "  - node: {component: scheduler, name: scheduler, parameters: {model: \"" << model_ << "\"}}\n";
  auto plan = PlanLaunch(path, {});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  auto limits = PipelineLimitsFromPlan(*plan);
  ASSERT_TRUE(limits.ok()) << limits.status().message();
  EXPECT_TRUE(limits->pipeline_stages);
  EXPECT_EQ(limits->hidden_dim, 32);  // the generated model's width
  EXPECT_GT(ComputeMessageBounds(*limits).activations, 0u);
  EXPECT_FALSE(PipelineLimitsFromPlan(Plan(""))->pipeline_stages);
}

TEST_F(RouDiSizingTest, BuiltinModelWhenNoModelIsSet) {
  LaunchPlan plan;
  plan.processes.push_back(ProcessPlan{});
  plan.processes[0].nodes.push_back(PlannedNode{"scheduler", "scheduler", {{"max_running_requests", "4"}}});
  auto limits = PipelineLimitsFromPlan(plan);
  ASSERT_TRUE(limits.ok()) << limits.status().message();
  auto builtin = builtin_model::EnsureDefaultModel();
  ASSERT_TRUE(builtin.ok()) << builtin.status().message();
  EXPECT_EQ(limits->model, *builtin);
  EXPECT_EQ(limits->context_length, 512);  // stories260K's llama.context_length
  EXPECT_EQ(limits->max_running_requests, 4);
}

// The served context, not the file's maximum, sizes the messages: Llama 3.1 files declare 131072.
TEST_F(RouDiSizingTest, ContextIsTheServedOneNotTheFilesMaximum) {
  const std::string llama3 = std::string(RADIXSERVE_SHARED_DIR) + "/models/ref/models/b_llama3rope.F32.gguf";
  auto plan_with = [&](std::vector<std::pair<std::string, std::string>> params) {
    LaunchPlan plan;
    plan.processes.push_back(ProcessPlan{});
    params.emplace_back("model", llama3);
    plan.processes[0].nodes.push_back(PlannedNode{"scheduler", "scheduler", {params.begin(), params.end()}});
    return plan;
  };
  auto by_default = PipelineLimitsFromPlan(plan_with({}));
  ASSERT_TRUE(by_default.ok()) << by_default.status().message();
  EXPECT_EQ(by_default->context_length, model::kDefaultServedContext);
  auto chosen = PipelineLimitsFromPlan(plan_with({{"context", "1000"}}));
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  EXPECT_EQ(chosen->context_length, 1000);
  auto whole = PipelineLimitsFromPlan(plan_with({{"context", "131072"}}));
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  EXPECT_EQ(whole->context_length, 131072);
  // A prompt and a batch's prefix patches grow with the context (outputs with the KV pool).
  EXPECT_GT(ComputeMessageBounds(*whole).tokenized_request, ComputeMessageBounds(*by_default).tokenized_request);
  EXPECT_GT(ComputeMessageBounds(*whole).forward_batch, ComputeMessageBounds(*by_default).forward_batch);
  auto too_long = PipelineLimitsFromPlan(plan_with({{"context", "131073"}}));
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.status().message().find("context 131073 exceeds the model's context length 131072"),
            std::string::npos)
      << too_long.status().message();
  // A short model keeps its own context by default.
  auto small = PipelineLimitsFromPlan(Plan(""));
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->context_length, 512);
}

TEST_F(RouDiSizingTest, Errors) {
  LaunchPlan plan;
  plan.processes.push_back(ProcessPlan{});
  plan.processes[0].nodes.push_back(PlannedNode{"scheduler", "scheduler", {{"max_running_requests", "lots"}}});
  auto bad = PipelineLimitsFromPlan(plan);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("scheduler parameter 'max_running_requests' = 'lots' is not an integer"),
            std::string::npos);
  plan.processes[0].nodes[0].params = {{"model", dir_ + "/missing.gguf"}};
  auto missing = PipelineLimitsFromPlan(plan);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("missing.gguf"), std::string::npos);
  // More running requests than a message may carry.
  plan.processes[0].nodes[0].params = {{"max_running_requests", "16385"}};
  auto too_many = RouDiConfigForPlan(plan);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("exceeds the transport's 16384 requests per batch"), std::string::npos);
  // A pipeline whose largest message cannot be a 32-bit chunk size is refused.
  modelgen::ModelSpec spec;
  spec.dim = 32, spec.layers = 1, spec.heads = 2, spec.kv_heads = 1, spec.ffn = 64, spec.context = 1 << 20;
  std::string long_model = dir_ + "/long.gguf";
  ASSERT_TRUE(modelgen::GenerateModel(spec, long_model).ok());
  plan.processes[0].nodes[0].params = {{"model", long_model}, {"max_running_requests", "16384"},
                                       {"max_total_tokens", "100000000"}, {"context", "1048576"}};
  auto huge = RouDiConfigForPlan(plan);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(huge.status().message().find("ForwardBatch"), std::string::npos);
}

}  // namespace
}  // namespace radixserve::launch
