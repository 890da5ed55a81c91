// RunBench: one complete load-generation run against a server.
//
// Builds the workload, converts token-id prompts to exact-length text when
// the endpoint needs text, sends warm-up requests, snapshots the server's
// metrics, dispatches requests (all at once or Poisson, under an optional
// concurrency cap; one thread per in-flight request or conversation),
// snapshots again and computes the report. Thread-safe: runs share nothing.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "core/util/status.h"
#include "tools/bench/dataset.h"
#include "tools/bench/report.h"
#include "tools/bench/request_client.h"

namespace radixserve::bench {

enum class DatasetKind { kRandom, kSharedPrefix, kPrefix, kMixed, kJsonl };

Result<DatasetKind> ParseDatasetKind(const std::string& name);
const char* DatasetKindName(DatasetKind kind);
Result<Backend> ParseBackend(const std::string& name);
const char* BackendName(Backend backend);

struct BenchConfig {
  std::string base_url = "http://127.0.0.1:30000";
  Backend backend = Backend::kRadixserve;
  std::string model;    // OpenAI model name; empty: the first of GET /v1/models, else omitted
  std::string api_key;

  DatasetKind dataset = DatasetKind::kRandom;
  int32_t num_prompts = 1000;  // random, prefix; an upper bound for jsonl; gsp uses groups x prompts
  RandomDatasetOptions random;
  SharedPrefixDatasetOptions gsp;
  PrefixDatasetOptions prefix;
  MixedDatasetOptions mixed;
  std::string jsonl_path;
  int32_t jsonl_output_len = 256;  // when a line gives no output_len
  int32_t vocab_size = 0;          // 0: ask the server
  bool text_prompts = false;       // radixserve backend: send text instead of input_ids (openai always sends text)

  double request_rate = std::numeric_limits<double>::infinity();
  int32_t max_concurrency = 0;  // 0: unlimited
  int32_t warmup_requests = 1;
  uint64_t seed = 1;
  bool ignore_eos = true;
  int32_t timeout_s = 3600;  // per request

  std::FILE* progress_out = nullptr;  // where progress goes (nullptr: nowhere)
  bool progress_tty = false;
  std::FILE* log_out = nullptr;       // notes about the setup (vocabulary, fallbacks)
};

struct BenchRun {
  BenchReport report;
  std::vector<RequestOutcome> outcomes;  // in dispatch order (a conversation's turns together)
};

// An error means the run could not start (bad options, unreachable server, failed warm-up);
// failed requests during the run are counted in the report instead.
Result<BenchRun> RunBench(const BenchConfig& config);

// The report plus per-request details, for --output-file.
nlohmann::json RunToJson(const BenchRun& run);

}  // namespace radixserve::bench
