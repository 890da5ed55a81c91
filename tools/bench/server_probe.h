// What the bench reads from the server besides generations: Prometheus
// metrics (cache hit rate, token counters), /get_server_info (scheduler
// overhead), /v1/models (the served model's name). Thread-safe: stateless.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/util/status.h"
#include "tools/bench/http_client.h"

namespace radixserve::bench {

// Metric name -> value, label sets of one name summed; "<name>/series" counts the label sets (no
// metric name contains '/'). Comments and malformed lines are skipped.
using MetricValues = std::map<std::string, double>;
MetricValues ParsePrometheusText(std::string_view text);

Result<MetricValues> FetchMetrics(const HttpEndpoint& endpoint, const std::string& api_key);
Result<nlohmann::json> FetchJson(const HttpEndpoint& endpoint, const std::string& path, const std::string& api_key);

// Scheduler overhead figures in server info (scheduler.stats keys containing "overhead"); empty when absent.
std::vector<std::pair<std::string, double>> SchedulerOverhead(const nlohmann::json& server_info);

// Prefix-cache figures derived from metrics taken before and after the run.
struct CacheFigures {
  // radixserve_cache_hit_rate or sglang:cache_hit_rate after the run, when one scheduler reports it
  // (several, data-parallel groups, each report their own: a sum of rates means nothing).
  std::optional<double> hit_rate_gauge;
  std::optional<double> cached_token_ratio; // delta cached_tokens_total / delta prompt_tokens_total
  std::optional<double> prompt_tokens_delta;
  std::optional<double> generation_tokens_delta;
  std::optional<double> cached_tokens_delta;
};
CacheFigures ComputeCacheFigures(const MetricValues& before, const MetricValues& after);

}  // namespace radixserve::bench
