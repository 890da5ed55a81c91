// The figures of one bench run, computed from per-request outcomes and the
// server's metrics, printed as a table and written as JSON. Pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/bench/request_client.h"
#include "tools/bench/server_probe.h"
#include "tools/bench/stats.h"

namespace radixserve::bench {

struct BenchReport {
  // What ran.
  std::string backend, dataset;
  double request_rate = 0;  // infinity: all at once
  int32_t max_concurrency = 0;  // 0: unlimited

  double duration_s = 0;
  int64_t sent = 0, completed = 0, failed = 0;
  std::map<std::string, int64_t> failures_by_kind;  // "http_status 503", "connection", "timeout", ...
  std::vector<std::string> first_errors;            // a few messages, to say what went wrong
  int64_t total_input_tokens = 0, total_output_tokens = 0;
  double request_throughput = 0, input_throughput = 0, output_throughput = 0, total_throughput = 0;
  Summary ttft_ms, tpot_ms, itl_ms, e2e_ms;
  // > 0: the TTFT of requests whose prompt has at most this many tokens, on its own (the mixed
  // workload's short requests, which long prompts may hold up).
  int32_t short_prompt_max = 0;
  Summary ttft_short_ms;
  double concurrency = 0;  // sum of latencies / duration

  bool have_metrics = false;
  CacheFigures cache;
  bool have_server_info = false;
  std::vector<std::pair<std::string, double>> scheduler_overhead;
};

// Fills the request-derived fields; duration_s: first dispatch to last completion.
void ComputeRequestFigures(const std::vector<RequestOutcome>& outcomes, double duration_s, BenchReport* report);

std::string FormatReport(const BenchReport& report);
nlohmann::json ReportToJson(const BenchReport& report);

}  // namespace radixserve::bench
