// The bench against the real four-process pipeline on stories260K: every request is counted, and the
// bench's prompt/output token totals equal the server's /metrics counter deltas over the run.
#include <gtest/gtest.h>

#include "tests/pipeline/pipeline_fixture.h"
#include "tools/bench/runner.h"

namespace radixserve::bench {
namespace {

pipeline_test::PipelineEnvironment* const kEnv = pipeline_test::RegisterPipeline(pipeline_test::PipelineOptions{});

BenchConfig PipelineConfig() {
  BenchConfig c;
  c.base_url = kEnv->pipeline().base_url();
  c.num_prompts = 40;
  c.random = RandomDatasetOptions{40, 64, 16, 0.25};
  c.timeout_s = 120;
  c.seed = 7;
  return c;
}

TEST(BenchPipeline, RandomDatasetCountsEveryRequestAndMatchesServerCounters) {
  auto run = RunBench(PipelineConfig());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const BenchReport& r = run->report;
  for (const std::string& e : r.first_errors) ADD_FAILURE() << e;
  EXPECT_EQ(r.sent, 40);
  EXPECT_EQ(r.completed, 40);
  EXPECT_EQ(r.failed, 0);
  ASSERT_TRUE(r.have_metrics);
  ASSERT_TRUE(r.cache.prompt_tokens_delta.has_value());
  ASSERT_TRUE(r.cache.generation_tokens_delta.has_value());
  EXPECT_EQ(static_cast<int64_t>(*r.cache.prompt_tokens_delta), r.total_input_tokens);
  EXPECT_EQ(static_cast<int64_t>(*r.cache.generation_tokens_delta), r.total_output_tokens);
  // ignore_eos: every request generates exactly what it asked for, and its ids are its prompt.
  int64_t asked_in = 0;
  for (const RequestOutcome& o : run->outcomes) {
    EXPECT_GE(o.output_tokens, 4);
    EXPECT_LE(o.output_tokens, 16);
    EXPECT_GE(o.prompt_tokens, 16);
    EXPECT_LE(o.prompt_tokens, 64);
    asked_in += o.prompt_tokens;
  }
  EXPECT_EQ(asked_in, r.total_input_tokens);
  EXPECT_EQ(r.ttft_ms.count, 40u);
  std::printf("%s", FormatReport(r).c_str());
}

// Text prompts through /tokenize and /detokenize come out at the exact token length asked for.
TEST(BenchPipeline, OpenAIBackendTextPromptsHaveExactLengths) {
  BenchConfig c = PipelineConfig();
  c.backend = Backend::kOpenAI;
  c.num_prompts = 8;
  c.random = RandomDatasetOptions{8, 40, 8, 1.0};
  auto run = RunBench(c);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->report.completed, 8);
  EXPECT_EQ(run->report.failed, 0);
  EXPECT_EQ(run->report.total_output_tokens, 8 * 8);
  ASSERT_TRUE(run->report.cache.prompt_tokens_delta.has_value());
  EXPECT_EQ(static_cast<int64_t>(*run->report.cache.prompt_tokens_delta), run->report.total_input_tokens);
  for (const RequestOutcome& o : run->outcomes) EXPECT_EQ(o.prompt_tokens, 40);
}

}  // namespace
}  // namespace radixserve::bench
