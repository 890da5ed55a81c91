// The bench against the real HTTP server (core/api) over a counting fake backend: every request counted,
// token totals equal to the server's counters, text prompts of exact length, failures by kind,
// the concurrency cap, conversations carrying their history, and unbuffered streaming.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <future>

#include "core/api/http_server.h"
#include "tests/bench/counting_backend.h"
#include "tools/bench/runner.h"
#include "tools/bench/sse_parser.h"

namespace radixserve::bench {
namespace {

class BenchServerTest : public ::testing::Test {
 protected:
  void StartServer(int32_t tokens_per_step = 1) {
    backend_ = std::make_unique<testing::CountingBackend>(tokens_per_step);
    api::HttpServerOptions o;
    o.port = 0;
    server_ = std::make_unique<api::HttpServer>(o, backend_.get());
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  BenchConfig Config() {
    BenchConfig c;
    c.base_url = "http://127.0.0.1:" + std::to_string(server_->port());
    c.num_prompts = 40;
    c.random = RandomDatasetOptions{40, 48, 12, 0.25};
    c.timeout_s = 60;
    return c;
  }
  std::unique_ptr<testing::CountingBackend> backend_;
  std::unique_ptr<api::HttpServer> server_;
};

TEST_F(BenchServerTest, RandomDatasetEveryRequestCountedAndTokensMatchTheServer) {
  StartServer();
  BenchConfig c = Config();
  auto run = RunBench(c);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const BenchReport& r = run->report;
  EXPECT_EQ(r.sent, 40);
  EXPECT_EQ(r.completed, 40);
  EXPECT_EQ(r.failed, 0);
  ASSERT_TRUE(r.have_metrics);
  ASSERT_TRUE(r.cache.prompt_tokens_delta && r.cache.generation_tokens_delta);
  EXPECT_EQ(static_cast<int64_t>(*r.cache.prompt_tokens_delta), r.total_input_tokens);
  EXPECT_EQ(static_cast<int64_t>(*r.cache.generation_tokens_delta), r.total_output_tokens);
  // Token ids go as they are: 40 prompts of 12..48 tokens, outputs of 3..12.
  EXPECT_GE(r.total_input_tokens, 40 * 12);
  EXPECT_LE(r.total_input_tokens, 40 * 48);
  int64_t itl = 0;
  for (const RequestOutcome& o : run->outcomes) {
    EXPECT_GE(o.output_tokens, 3);
    EXPECT_LE(o.output_tokens, 12);
    EXPECT_LE(o.ttft_s, o.latency_s);
    itl += o.output_tokens - 1;
  }
  EXPECT_EQ(r.ttft_ms.count, 40u);
  EXPECT_EQ(static_cast<int64_t>(r.itl_ms.count), itl);
  ASSERT_TRUE(r.cache.cached_token_ratio.has_value());
  EXPECT_NEAR(*r.cache.cached_token_ratio, 0.5, 0.05);  // the fake caches half of each prompt
  EXPECT_DOUBLE_EQ(*r.cache.hit_rate_gauge, 0.5);
  EXPECT_TRUE(r.scheduler_overhead.empty());
  EXPECT_NE(FormatReport(r).find("Scheduler overhead:                      n/a"), std::string::npos);
}

TEST_F(BenchServerTest, EventsWithSeveralTokensGiveOneGapPerToken) {
  StartServer(/*tokens_per_step=*/3);
  BenchConfig c = Config();
  c.num_prompts = 10;
  auto run = RunBench(c);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->report.completed, 10);
  for (const RequestOutcome& o : run->outcomes) {
    // The first event holds up to 3 tokens (no gaps), every later token one gap.
    EXPECT_EQ(static_cast<int32_t>(o.itl_s.size()), o.output_tokens - std::min(o.output_tokens, 3));
  }
}

TEST_F(BenchServerTest, OpenAIBackendSendsTextOfExactLength) {
  StartServer();
  BenchConfig c = Config();
  c.backend = Backend::kOpenAI;
  c.num_prompts = 12;
  c.random = RandomDatasetOptions{12, 30, 5, 1.0};
  auto run = RunBench(c);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->report.completed, 12);
  EXPECT_EQ(run->report.total_input_tokens, 12 * 30);  // BOS plus 29 text tokens, re-tokenized by the server
  EXPECT_EQ(run->report.total_output_tokens, 12 * 5);
  EXPECT_EQ(static_cast<int64_t>(*run->report.cache.prompt_tokens_delta), 12 * 30);
  for (const std::string& t : backend_->texts()) EXPECT_FALSE(t.empty());  // text prompts, not ids
}

TEST_F(BenchServerTest, SharedPrefixTextPromptsShareTheirSystemPrompt) {
  StartServer();
  BenchConfig c = Config();
  c.text_prompts = true;
  c.dataset = DatasetKind::kSharedPrefix;
  c.gsp = SharedPrefixDatasetOptions{3, 4, 40, 8, 2};
  auto run = RunBench(c);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->report.completed, 12);
  EXPECT_EQ(run->report.total_input_tokens, 12 * 48);
  std::set<std::string> prefixes;
  auto texts = backend_->texts();
  ASSERT_EQ(texts.size(), 13u);  // warm-up + 12
  for (size_t i = 1; i < texts.size(); ++i) prefixes.insert(texts[i].substr(0, 40));  // the system prompt
  EXPECT_EQ(prefixes.size(), 3u);
}

TEST_F(BenchServerTest, FailuresAreCountedByKind) {
  StartServer();
  backend_->fail_every = 5;   // submissions 5, 10, ... 40 refused with 503 (the warm-up is submission 1)
  backend_->abort_every = 7;  // 7, 14, 21, 28 aborted mid-stream (35 is refused first)
  BenchConfig c = Config();
  auto run = RunBench(c);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const BenchReport& r = run->report;
  EXPECT_EQ(r.sent, 40);
  EXPECT_EQ(r.failed, 12);
  EXPECT_EQ(r.completed, 28);
  EXPECT_EQ(r.failures_by_kind.at("http_status 503"), 8);
  EXPECT_EQ(r.failures_by_kind.at("server_abort 500"), 4);
  EXPECT_FALSE(r.first_errors.empty());
  // The server's counters count only what finished, like the bench's totals.
  EXPECT_EQ(static_cast<int64_t>(*r.cache.generation_tokens_delta), r.total_output_tokens);
}

TEST_F(BenchServerTest, ConnectionFailuresAreCounted) {
  StartServer();
  BenchConfig c = Config();
  const std::string url = c.base_url;
  server_->Stop();
  c.num_prompts = 5;
  c.vocab_size = 100;
  auto refused = RunBench(c);  // the warm-up fails: the run does not start
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("connection"), std::string::npos) << refused.status().message();
  c.warmup_requests = 0;
  auto run = RunBench(c);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->report.failed, 5);
  EXPECT_EQ(run->report.failures_by_kind.at("connection"), 5);
  EXPECT_FALSE(run->report.have_metrics);
}

TEST_F(BenchServerTest, PoissonArrivalsRespectTheConcurrencyCap) {
  StartServer();
  BenchConfig c = Config();
  c.num_prompts = 16;
  c.request_rate = 500;
  c.max_concurrency = 2;
  auto run = RunBench(c);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->report.completed, 16);
  EXPECT_LE(backend_->max_active(), 2);
  EXPECT_GE(backend_->max_active(), 1);
}

TEST_F(BenchServerTest, ConversationsCarryTheirHistoryAndOutputFileIsWritten) {
  StartServer();
  const std::string path = ::testing::TempDir() + "/bench_turns.jsonl";
  {
    std::ofstream f(path);
    f << R"({"turns": ["hi", "more"], "output_len": 3})" << "\n" << R"({"prompt": "solo"})" << "\n";
  }
  BenchConfig c = Config();
  c.dataset = DatasetKind::kJsonl;
  c.jsonl_path = path;
  c.jsonl_output_len = 2;
  c.warmup_requests = 0;
  c.max_concurrency = 1;
  auto run = RunBench(c);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->report.completed, 3);
  auto texts = backend_->texts();
  ASSERT_EQ(texts.size(), 3u);
  EXPECT_EQ(texts[0], "hi");
  EXPECT_EQ(texts[1], "hiabc\nmore");  // the first answer is "abc"
  EXPECT_EQ(texts[2], "solo");
  EXPECT_EQ(run->outcomes[2].output_tokens, 2);
  auto j = RunToJson(*run);
  EXPECT_EQ(j["requests"].size(), 3u);
  EXPECT_EQ(j["completed"], 3);
}

TEST_F(BenchServerTest, SchedulerOverheadIsReportedWhenTheServerHasIt) {
  StartServer();
  backend_->report_overhead = true;
  BenchConfig c = Config();
  c.num_prompts = 2;
  auto run = RunBench(c);
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run->report.scheduler_overhead.size(), 1u);
  EXPECT_DOUBLE_EQ(run->report.scheduler_overhead[0].second, 0.125);
  EXPECT_NE(FormatReport(run->report).find("scheduler_overhead_p50"), std::string::npos);
}

// The first event reaches the client while the server still holds the rest of the response: were the
// stream buffered, the gate would never open and the request would time out.
TEST_F(BenchServerTest, StreamedEventsArriveBeforeTheResponseEnds) {
  StartServer();
  backend_->gate_closed = true;
  auto ep = ParseBaseUrl("127.0.0.1:" + std::to_string(server_->port()));
  ASSERT_TRUE(ep.ok());
  HttpCallOptions call;
  call.method = "POST";
  call.path = "/generate";
  call.body = R"({"input_ids": [5, 6, 7], "stream": true, "sampling_params": {"max_new_tokens": 4}})";
  call.timeout_ms = 20000;
  int events = 0;
  SseParser sse;
  HttpCallResult r = HttpCall(*ep, call, [&](std::string_view piece) {
    sse.Feed(piece, [&](std::string_view) {
      ++events;
      backend_->gate_closed = false;
    });
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_GE(events, 2);
}

}  // namespace
}  // namespace radixserve::bench
