// Unit tests of the bench's pieces: workloads, arrival process, statistics, SSE and chunked framing,
// stream interpretation, metrics parsing, report figures.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "tools/bench/arrival.h"
#include "tools/bench/dataset.h"
#include "tools/bench/http_client.h"
#include "tools/bench/report.h"
#include "tools/bench/request_client.h"
#include "tools/bench/server_probe.h"
#include "tools/bench/sse_parser.h"
#include "tools/bench/stats.h"

namespace radixserve::bench {
namespace {

using Clock = std::chrono::steady_clock;

TEST(LengthSampling, BoundsFollowTheRatio) {
  EXPECT_EQ(RandomLengthBounds(1024, 0.0), std::make_pair(1, 1024));
  EXPECT_EQ(RandomLengthBounds(1024, 1.0), std::make_pair(1024, 1024));
  EXPECT_EQ(RandomLengthBounds(1000, 0.25), std::make_pair(250, 1000));
  EXPECT_EQ(RandomLengthBounds(10, 0.05), std::make_pair(1, 10));  // floor(0.5) = 0 -> at least 1
}

TEST(LengthSampling, RandomDatasetDrawsWithinBoundsAndCoversThem) {
  std::mt19937_64 rng(7);
  RandomDatasetOptions o{2000, 64, 16, 0.5};
  VocabRange vocab{3, 100, 1};
  auto reqs = MakeRandomDataset(o, vocab, rng);
  ASSERT_EQ(reqs.size(), 2000u);
  std::set<int32_t> in_lens, out_lens;
  for (const BenchRequest& r : reqs) {
    ASSERT_EQ(r.segments.size(), 1u);
    in_lens.insert(r.prompt_ids_len());
    out_lens.insert(r.output_len);
    for (int32_t id : r.PromptIds()) {
      ASSERT_GE(id, 3);
      ASSERT_LT(id, 100);
    }
  }
  EXPECT_EQ(*in_lens.begin(), 32);
  EXPECT_EQ(*in_lens.rbegin(), 64);
  EXPECT_EQ(in_lens.size(), 33u);  // every length in [32, 64] shows up in 2000 draws
  EXPECT_EQ(*out_lens.begin(), 8);
  EXPECT_EQ(*out_lens.rbegin(), 16);
}

TEST(LengthSampling, RatioOneGivesFixedLengthsAndSeedsReproduce) {
  VocabRange vocab{3, 50, 1};
  std::mt19937_64 a(3), b(3), c(4);
  RandomDatasetOptions o{20, 12, 5, 1.0};
  auto ra = MakeRandomDataset(o, vocab, a), rb = MakeRandomDataset(o, vocab, b), rc = MakeRandomDataset(o, vocab, c);
  for (size_t i = 0; i < ra.size(); ++i) {
    EXPECT_EQ(ra[i].prompt_ids_len(), 12);
    EXPECT_EQ(ra[i].output_len, 5);
    EXPECT_EQ(ra[i].PromptIds(), rb[i].PromptIds());
  }
  EXPECT_NE(ra[0].PromptIds(), rc[0].PromptIds());
}

TEST(SharedPrefixDataset, CountsGroupsAndShuffles) {
  std::mt19937_64 rng(1);
  SharedPrefixDatasetOptions o{5, 7, 20, 4, 9};
  auto reqs = MakeSharedPrefixDataset(o, VocabRange{3, 1000, 1}, rng);
  ASSERT_EQ(reqs.size(), 35u);
  std::map<const void*, int> per_group;
  std::vector<const void*> order;
  for (const BenchRequest& r : reqs) {
    ASSERT_EQ(r.segments.size(), 2u);
    EXPECT_EQ(r.segments[0]->size(), 20u);
    EXPECT_EQ(r.segments[1]->size(), 4u);
    EXPECT_EQ(r.output_len, 9);
    EXPECT_EQ(r.prompt_ids_len(), 24);
    ++per_group[r.segments[0].get()];
    order.push_back(r.segments[0].get());
  }
  ASSERT_EQ(per_group.size(), 5u);
  for (const auto& [g, n] : per_group) EXPECT_EQ(n, 7);
  // Unshuffled, groups would form 5 runs; a shuffle of 35 leaves far more group changes.
  int changes = 0;
  for (size_t i = 1; i < order.size(); ++i) changes += order[i] != order[i - 1];
  EXPECT_GT(changes, 10);
  // The same seed gives the same order.
  std::mt19937_64 rng2(1);
  auto again = MakeSharedPrefixDataset(o, VocabRange{3, 1000, 1}, rng2);
  for (size_t i = 0; i < reqs.size(); ++i) EXPECT_EQ(reqs[i].PromptIds(), again[i].PromptIds());
}

TEST(PrefixDataset, CommonPrefixStartsWithBosAndUniquePartsDiffer) {
  std::mt19937_64 rng(2);
  auto reqs = MakePrefixDataset(PrefixDatasetOptions{10, 16, 8, 4}, VocabRange{3, 1000, 1}, rng);
  ASSERT_EQ(reqs.size(), 10u);
  std::set<std::vector<int32_t>> uniques;
  for (const BenchRequest& r : reqs) {
    std::vector<int32_t> ids = r.PromptIds();
    ASSERT_EQ(ids.size(), 24u);
    EXPECT_EQ(ids[0], 1);
    EXPECT_EQ(r.segments[0].get(), reqs[0].segments[0].get());
    uniques.insert(std::vector<int32_t>(ids.begin() + 16, ids.end()));
  }
  EXPECT_EQ(uniques.size(), 10u);
  auto unshared = MakePrefixDataset(PrefixDatasetOptions{3, 0, 8, 4}, VocabRange{3, 1000, 1}, rng);
  EXPECT_EQ(unshared[0].segments.size(), 1u);
  EXPECT_EQ(unshared[0].prompt_ids_len(), 8);
}

TEST(MixedDataset, LongPromptsSpreadEvenlyAmongShortOnesLongFirst) {
  std::mt19937_64 rng(3);
  auto reqs = MakeMixedDataset(MixedDatasetOptions{3, 50, 9, 5, 2}, VocabRange{3, 1000, 1}, rng);
  ASSERT_EQ(reqs.size(), 12u);
  std::vector<size_t> long_at;
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(reqs[i].output_len, 2);
    if (reqs[i].prompt_ids_len() == 50) long_at.push_back(i);
    else EXPECT_EQ(reqs[i].prompt_ids_len(), 5);
  }
  EXPECT_EQ(long_at, (std::vector<size_t>{0, 4, 8}));
  EXPECT_NE(reqs[1].PromptIds(), reqs[2].PromptIds());  // nothing shared
}

TEST(Percentile, LinearInterpolationLikeNumpy) {
  std::vector<double> v = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(Percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(Percentile(v, 50), 2.5);   // numpy.percentile([1,2,3,4], 50)
  EXPECT_DOUBLE_EQ(Percentile(v, 90), 3.7);   // rank 2.7
  EXPECT_DOUBLE_EQ(Percentile(v, 99), 3.97);
  EXPECT_DOUBLE_EQ(Percentile(v, 100), 4);
  EXPECT_DOUBLE_EQ(Percentile({5}, 99), 5);
  EXPECT_DOUBLE_EQ(Percentile({}, 50), 0);
  Summary s = Summarize({10, 0, 30, 20, 40});
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 20);
  EXPECT_DOUBLE_EQ(s.median, 20);
  EXPECT_DOUBLE_EQ(s.p90, 36);
  EXPECT_DOUBLE_EQ(s.p99, 39.6);
  EXPECT_DOUBLE_EQ(s.max, 40);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(200.0));
}

TEST(Arrival, InfiniteRateSendsEverythingAtOnce) {
  std::mt19937_64 rng(1);
  for (double t : ArrivalTimes(10, std::numeric_limits<double>::infinity(), rng)) EXPECT_EQ(t, 0);
  for (double t : ArrivalTimes(10, 0, rng)) EXPECT_EQ(t, 0);
}

TEST(Arrival, PoissonGapsHaveMeanOneOverRate) {
  std::mt19937_64 rng(12345);
  const double rate = 8.0;
  const size_t n = 20000;
  auto t = ArrivalTimes(n, rate, rng);
  ASSERT_EQ(t.size(), n);
  EXPECT_EQ(t[0], 0);
  double sum = 0, sq = 0;
  for (size_t i = 1; i < n; ++i) {
    const double g = t[i] - t[i - 1];
    ASSERT_GE(g, 0);
    sum += g;
    sq += g * g;
  }
  const double mean = sum / (n - 1);
  const double var = sq / (n - 1) - mean * mean;
  // Standard error of the mean is 1/(rate*sqrt(n)) ~ 0.9 ms; 5% is > 5 sigma.
  EXPECT_NEAR(mean, 1 / rate, 0.05 / rate);
  EXPECT_NEAR(std::sqrt(var), 1 / rate, 0.1 / rate);  // exponential: std == mean
}

TEST(SseParser, EventsSplitAnywhereAreReassembled) {
  const std::string stream =
      "data: {\"a\": 1}\n\n: a comment\r\n\r\nevent: x\r\ndata: line1\r\ndata: line2\r\n\r\ndata:[DONE]\n\n";
  const std::vector<std::string> expected = {"{\"a\": 1}", "line1\nline2", "[DONE]"};
  for (size_t cut1 = 0; cut1 <= stream.size(); ++cut1) {
    for (size_t cut2 = cut1; cut2 <= stream.size(); cut2 += 3) {
      SseParser p;
      std::vector<std::string> got;
      auto on = [&](std::string_view d) { got.emplace_back(d); };
      p.Feed(std::string_view(stream).substr(0, cut1), on);
      p.Feed(std::string_view(stream).substr(cut1, cut2 - cut1), on);
      p.Feed(std::string_view(stream).substr(cut2), on);
      p.Finish(on);
      ASSERT_EQ(got, expected) << "cuts at " << cut1 << ", " << cut2;
    }
  }
}

TEST(SseParser, ByteByByteAndUnterminatedLastEvent) {
  const std::string stream = "data: one\r\n\r\ndata: two";
  SseParser p;
  std::vector<std::string> got;
  auto on = [&](std::string_view d) { got.emplace_back(d); };
  for (char c : stream) p.Feed(std::string_view(&c, 1), on);
  EXPECT_EQ(got, std::vector<std::string>{"one"});
  p.Finish(on);
  EXPECT_EQ(got, (std::vector<std::string>{"one", "two"}));
}

TEST(ChunkedDecoder, DecodesAcrossArbitrarySplits) {
  const std::string wire = "5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n";
  for (size_t cut = 0; cut <= wire.size(); ++cut) {
    ChunkedDecoder d;
    std::string out;
    auto on = [&](std::string_view p) { out.append(p); };
    ASSERT_TRUE(d.Feed(std::string_view(wire).substr(0, cut), on));
    ASSERT_TRUE(d.Feed(std::string_view(wire).substr(cut), on)) << d.error();
    EXPECT_TRUE(d.done());
    EXPECT_EQ(out, "hello 0123456789");
  }
}

TEST(ChunkedDecoder, RejectsBadFraming) {
  ChunkedDecoder d;
  auto ignore = [](std::string_view) {};
  EXPECT_FALSE(d.Feed("zz\r\n", ignore));
  EXPECT_NE(d.error().find("chunk size"), std::string::npos);
  ChunkedDecoder e;
  EXPECT_FALSE(e.Feed("2\r\nabX\r\n", ignore));
}

TEST(ParseBaseUrl, HostsPortsAndPrefixes) {
  auto a = ParseBaseUrl("http://localhost:8080");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "localhost");
  EXPECT_EQ(a->port, 8080);
  EXPECT_EQ(a->base_path, "");
  auto b = ParseBaseUrl("10.0.0.1:30000/api/");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->port, 30000);
  EXPECT_EQ(b->base_path, "/api");
  auto c = ParseBaseUrl("http://[::1]:9");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "::1");
  EXPECT_FALSE(ParseBaseUrl("https://x:1").ok());
  EXPECT_FALSE(ParseBaseUrl("http://x:0").ok());
  EXPECT_FALSE(ParseBaseUrl("http://x:abc").ok());
}

TEST(StreamAccumulator, NativeEventsWithSeveralTokensSplitTheirGapEvenly) {
  const Clock::time_point t0 = Clock::now();
  auto ms = [&](int m) { return t0 + std::chrono::milliseconds(m); };
  StreamAccumulator acc(Backend::kRadixserve, t0);
  acc.OnEvent(R"({"text":"a","output_ids":[5],"meta_info":{"prompt_tokens":7,"completion_tokens":1,"cached_tokens":2,"finish_reason":null}})", ms(100));
  acc.OnEvent(R"({"text":"abc","output_ids":[5,6,7],"meta_info":{"prompt_tokens":7,"completion_tokens":3,"finish_reason":null}})", ms(140));
  acc.OnEvent(R"({"text":"abcd","output_ids":[5,6,7,8],"meta_info":{"prompt_tokens":7,"completion_tokens":4,"finish_reason":{"type":"length","length":4}}})", ms(150));
  acc.OnEvent("[DONE]", ms(151));
  RequestOutcome o;
  acc.Finish(ms(152), &o);
  ASSERT_TRUE(o.ok()) << o.error;
  // Fake timestamps in whole milliseconds, differences converted to seconds in double: exact to
  // about 1e-17; 1e-9 s is exactness at the clock's nanosecond resolution.
  EXPECT_NEAR(o.ttft_s, 0.100, 1e-9);
  ASSERT_EQ(o.itl_s.size(), 3u);
  EXPECT_NEAR(o.itl_s[0], 0.020, 1e-9);
  EXPECT_NEAR(o.itl_s[1], 0.020, 1e-9);
  EXPECT_NEAR(o.itl_s[2], 0.010, 1e-9);
  EXPECT_NEAR(o.latency_s, 0.152, 1e-9);
  EXPECT_EQ(o.prompt_tokens, 7);
  EXPECT_EQ(o.output_tokens, 4);
  EXPECT_EQ(o.cached_tokens, 2);
  EXPECT_EQ(o.output_text, "abcd");
}

TEST(StreamAccumulator, NativeAbortIsAFailure) {
  const Clock::time_point t0 = Clock::now();
  StreamAccumulator acc(Backend::kRadixserve, t0);
  acc.OnEvent(R"({"text":"","output_ids":[],"meta_info":{"completion_tokens":0,"finish_reason":{"type":"abort","message":"no memory","status_code":500}}})", t0);
  RequestOutcome o;
  acc.Finish(t0, &o);
  EXPECT_EQ(o.failure, FailureKind::kServerAbort);
  EXPECT_EQ(o.http_status, 500);
  EXPECT_NE(o.error.find("no memory"), std::string::npos);
}

TEST(StreamAccumulator, OpenAIDeltasAndUsage) {
  const Clock::time_point t0 = Clock::now();
  auto ms = [&](int m) { return t0 + std::chrono::milliseconds(m); };
  StreamAccumulator acc(Backend::kOpenAI, t0);
  acc.OnEvent(R"({"choices":[{"index":0,"text":"He","finish_reason":null}],"usage":null})", ms(50));
  acc.OnEvent(R"({"choices":[{"index":0,"text":"llo","finish_reason":null}],"usage":null})", ms(60));
  acc.OnEvent(R"({"choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":null})", ms(61));
  acc.OnEvent(R"({"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}})", ms(62));
  RequestOutcome o;
  acc.Finish(ms(63), &o);
  ASSERT_TRUE(o.ok()) << o.error;
  EXPECT_NEAR(o.ttft_s, 0.050, 1e-9);
  ASSERT_EQ(o.itl_s.size(), 1u);
  EXPECT_NEAR(o.itl_s[0], 0.010, 1e-9);
  EXPECT_EQ(o.output_text, "Hello");
  EXPECT_EQ(o.prompt_tokens, 9);
  EXPECT_EQ(o.output_tokens, 2);

  StreamAccumulator err(Backend::kOpenAI, t0);
  err.OnEvent(R"({"error":{"message":"boom","code":500}})", ms(1));
  RequestOutcome e;
  err.Finish(ms(2), &e);
  EXPECT_EQ(e.failure, FailureKind::kServerAbort);

  StreamAccumulator empty(Backend::kOpenAI, t0);
  RequestOutcome none;
  empty.Finish(ms(2), &none);
  EXPECT_EQ(none.failure, FailureKind::kProtocol);

  StreamAccumulator garbage(Backend::kRadixserve, t0);
  garbage.OnEvent("not json", ms(1));
  RequestOutcome g;
  garbage.Finish(ms(2), &g);
  EXPECT_EQ(g.failure, FailureKind::kProtocol);
}

TEST(RequestBody, NativeAndOpenAIShapes) {
  ClientOptions c;
  PromptInput p;
  p.ids = {4, 5};
  p.use_ids = true;
  p.output_len = 8;
  auto native = nlohmann::json::parse(BuildRequestBody(c, p));
  EXPECT_EQ(native["input_ids"], nlohmann::json::array({4, 5}));
  EXPECT_EQ(native["sampling_params"]["max_new_tokens"], 8);
  EXPECT_EQ(native["sampling_params"]["ignore_eos"], true);
  EXPECT_EQ(native["sampling_params"]["temperature"], 0.0);
  EXPECT_EQ(native["stream"], true);
  c.backend = Backend::kOpenAI;
  c.model = "m";
  c.ignore_eos = false;
  p.use_ids = false;
  p.text = "hi";
  auto openai = nlohmann::json::parse(BuildRequestBody(c, p));
  EXPECT_EQ(openai["prompt"], "hi");
  EXPECT_EQ(openai["model"], "m");
  EXPECT_EQ(openai["max_tokens"], 8);
  EXPECT_EQ(openai["ignore_eos"], false);
  EXPECT_EQ(openai["stream_options"]["include_usage"], true);
}

TEST(Jsonl, PromptsTurnsAndDefaults) {
  auto r = ParseJsonl("{\"prompt\": \"hello\", \"output_len\": 5}\n\n{\"turns\": [\"q1\", \"q2\"]}\r\n", 77);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].text, "hello");
  EXPECT_EQ((*r)[0].output_len, 5);
  EXPECT_FALSE((*r)[0].is_conversation());
  EXPECT_EQ((*r)[1].turns, (std::vector<std::string>{"q1", "q2"}));
  EXPECT_EQ((*r)[1].output_len, 77);
}

TEST(Jsonl, ErrorsNameTheLine) {
  struct Case {
    const char* input;
    const char* message;
  } cases[] = {
      {"{\"prompt\": \"a\"}\n{oops\n", "line 2: not valid JSON"},
      {"[1, 2]\n", "line 1: expected a JSON object"},
      {"{\"output_len\": 3}\n", "line 1: needs exactly one of"},
      {"{\"prompt\": \"a\", \"turns\": [\"b\"]}\n", "line 1: needs exactly one of"},
      {"{\"prompt\": 5}\n", "line 1: \"prompt\" must be a non-empty string"},
      {"{\"prompt\": \"\"}\n", "line 1: \"prompt\" must be a non-empty string"},
      {"\n\n{\"turns\": []}\n", "line 3: \"turns\" must be a non-empty array"},
      {"{\"turns\": [\"a\", 1]}\n", "line 1: every turn must be a non-empty string"},
      {"{\"prompt\": \"a\", \"output_len\": 0}\n", "line 1: \"output_len\" must be a positive integer"},
      {"{\"prompt\": \"a\", \"output_len\": 2.5}\n", "line 1: \"output_len\" must be a positive integer"},
      {"\n  \n", "no prompts"},
  };
  for (const Case& c : cases) {
    auto r = ParseJsonl(c.input, 10);
    ASSERT_FALSE(r.ok()) << c.input;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().message();
  }
  auto missing = LoadJsonlFile("/nonexistent/prompts.jsonl", 1);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(Metrics, PrometheusTextAndCacheFigures) {
  MetricValues before = ParsePrometheusText(
      "# HELP radixserve_prompt_tokens_total x\n# TYPE radixserve_prompt_tokens_total counter\n"
      "radixserve_prompt_tokens_total 100\nradixserve_cached_tokens_total 10\n"
      "radixserve_generation_tokens_total 5e1\n");
  MetricValues after = ParsePrometheusText(
      "radixserve_prompt_tokens_total 300\r\nradixserve_cached_tokens_total 60\n"
      "radixserve_generation_tokens_total 150\nradixserve_cache_hit_rate 0.25\n"
      "sglang:num_running_reqs{model_name=\"a\"} 2\nsglang:num_running_reqs{model_name=\"b\"} 3\nbroken line\n");
  EXPECT_DOUBLE_EQ(before["radixserve_generation_tokens_total"], 50);
  EXPECT_DOUBLE_EQ(after["sglang:num_running_reqs"], 5);
  EXPECT_EQ(after.count("broken"), 0u);
  CacheFigures f = ComputeCacheFigures(before, after);
  EXPECT_DOUBLE_EQ(*f.prompt_tokens_delta, 200);
  EXPECT_DOUBLE_EQ(*f.generation_tokens_delta, 100);
  EXPECT_DOUBLE_EQ(*f.cached_token_ratio, 0.25);
  EXPECT_DOUBLE_EQ(*f.hit_rate_gauge, 0.25);
  CacheFigures sglang = ComputeCacheFigures({}, ParsePrometheusText("sglang:cache_hit_rate{m=\"x\"} 0.5\n"));
  EXPECT_DOUBLE_EQ(*sglang.hit_rate_gauge, 0.5);
  EXPECT_FALSE(sglang.prompt_tokens_delta.has_value());
  // Data-parallel groups each report a rate: no sum of them passes for one.
  MetricValues dp = ParsePrometheusText(
      "radixserve_cache_hit_rate{group=\"dp0\"} 0.5\nradixserve_cache_hit_rate{group=\"dp1\"} 0.75\n");
  EXPECT_DOUBLE_EQ(dp["radixserve_cache_hit_rate/series"], 2);
  EXPECT_FALSE(ComputeCacheFigures({}, dp).hit_rate_gauge.has_value());
}

TEST(Metrics, SchedulerOverheadOnlyWhenPresent) {
  EXPECT_TRUE(SchedulerOverhead(nlohmann::json::parse(R"({"scheduler": {}})")).empty());
  auto o = SchedulerOverhead(
      nlohmann::json::parse(R"({"scheduler": {"stats": {"scheduler_overhead_p50": 0.3, "num_running_reqs": 2}}})"));
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].first, "scheduler_overhead_p50");
  EXPECT_DOUBLE_EQ(o[0].second, 0.3);
  BenchReport r;
  EXPECT_NE(FormatReport(r).find("Scheduler overhead:                      n/a"), std::string::npos);
}

TEST(Report, FiguresFromOutcomes) {
  std::vector<RequestOutcome> outs(3);
  outs[0].ttft_s = 0.1;
  outs[0].latency_s = 1.1;
  outs[0].prompt_tokens = 10;
  outs[0].output_tokens = 11;  // TPOT (1.1 - 0.1) / 10 = 100 ms
  outs[0].itl_s = {0.1, 0.1};
  outs[1].ttft_s = 0.3;
  outs[1].latency_s = 0.3;
  outs[1].prompt_tokens = 5;
  outs[1].output_tokens = 1;  // no TPOT
  outs[2].failure = FailureKind::kHttpStatus;
  outs[2].http_status = 503;
  outs[2].error = "HTTP 503: busy";
  BenchReport r;
  ComputeRequestFigures(outs, 2.0, &r);
  EXPECT_EQ(r.sent, 3);
  EXPECT_EQ(r.completed, 2);
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.failures_by_kind.at("http_status 503"), 1);
  EXPECT_EQ(r.total_input_tokens, 15);
  EXPECT_EQ(r.total_output_tokens, 12);
  EXPECT_DOUBLE_EQ(r.request_throughput, 1.0);
  EXPECT_DOUBLE_EQ(r.output_throughput, 6.0);
  EXPECT_DOUBLE_EQ(r.total_throughput, 13.5);
  EXPECT_DOUBLE_EQ(r.concurrency, 0.7);
  EXPECT_EQ(r.tpot_ms.count, 1u);
  EXPECT_NEAR(r.tpot_ms.mean, 100, 1e-9);
  EXPECT_NEAR(r.ttft_ms.mean, 200, 1e-9);
  EXPECT_EQ(r.itl_ms.count, 2u);
  EXPECT_EQ(r.ttft_short_ms.count, 0u);  // not asked for
  BenchReport with_short;
  with_short.short_prompt_max = 5;
  ComputeRequestFigures(outs, 2.0, &with_short);
  EXPECT_EQ(with_short.ttft_short_ms.count, 1u);  // the 5-token prompt alone
  EXPECT_NEAR(with_short.ttft_short_ms.mean, 300, 1e-9);
  EXPECT_NE(FormatReport(with_short).find("TTFT of prompts <= 5 tokens"), std::string::npos);
  EXPECT_EQ(ReportToJson(with_short)["ttft_short_ms"]["count"], 1);
  auto j = ReportToJson(r);
  EXPECT_FALSE(j.contains("ttft_short_ms"));
  EXPECT_EQ(j["failures_by_kind"]["http_status 503"], 1);
  EXPECT_EQ(j["server"]["scheduler_overhead"], "n/a");
}

}  // namespace
}  // namespace radixserve::bench
