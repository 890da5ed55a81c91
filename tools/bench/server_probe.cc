#include "tools/bench/server_probe.h"

#include <cstdlib>

namespace radixserve::bench {
namespace {

// The value of the first name present that has a single label set.
std::optional<double> FindSingle(const MetricValues& m, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto it = m.find(n);
    if (it == m.end()) continue;
    auto series = m.find(std::string(n) + "/series");
    if (series != m.end() && series->second != 1) return std::nullopt;
    return it->second;
  }
  return std::nullopt;
}

std::optional<double> Delta(const MetricValues& before, const MetricValues& after,
                            std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto a = after.find(n);
    if (a == after.end()) continue;
    auto b = before.find(n);
    return a->second - (b == before.end() ? 0.0 : b->second);
  }
  return std::nullopt;
}

}  // namespace

MetricValues ParsePrometheusText(std::string_view text) {
  MetricValues out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    size_t name_end = line.find_first_of("{ \t");
    if (name_end == std::string_view::npos || name_end == 0) continue;
    std::string name(line.substr(0, name_end));
    size_t value_start = name_end;
    if (line[name_end] == '{') {
      size_t close = line.find('}', name_end);
      if (close == std::string_view::npos) continue;
      value_start = close + 1;
    }
    std::string rest(line.substr(value_start));
    const char* p = rest.c_str();
    while (*p == ' ' || *p == '\t') ++p;
    char* end = nullptr;
    double v = std::strtod(p, &end);
    if (end == p) continue;
    out[name] += v;
    out[name + "/series"] += 1;
  }
  return out;
}

Result<MetricValues> FetchMetrics(const HttpEndpoint& endpoint, const std::string& api_key) {
  HttpCallOptions call;
  call.path = "/metrics";
  call.timeout_ms = 10000;
  if (!api_key.empty()) call.headers.push_back({"Authorization", "Bearer " + api_key});
  HttpCallResult r = HttpCall(endpoint, call);
  if (!r.ok()) return Status::Unavailable("GET /metrics: " + r.error);
  return ParsePrometheusText(r.body);
}

Result<nlohmann::json> FetchJson(const HttpEndpoint& endpoint, const std::string& path, const std::string& api_key) {
  HttpCallOptions call;
  call.path = path;
  call.timeout_ms = 10000;
  if (!api_key.empty()) call.headers.push_back({"Authorization", "Bearer " + api_key});
  HttpCallResult r = HttpCall(endpoint, call);
  if (!r.ok()) return Status::Unavailable("GET " + path + ": " + r.error);
  nlohmann::json j = nlohmann::json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Corrupt("GET " + path + ": the answer is not JSON");
  return j;
}

std::vector<std::pair<std::string, double>> SchedulerOverhead(const nlohmann::json& info) {
  std::vector<std::pair<std::string, double>> out;
  if (!info.is_object()) return out;
  auto sched = info.find("scheduler");
  if (sched == info.end() || !sched->is_object()) return out;
  auto stats = sched->find("stats");
  if (stats == sched->end() || !stats->is_object()) return out;
  for (const auto& [k, v] : stats->items())
    if (k.find("overhead") != std::string::npos && v.is_number()) out.emplace_back(k, v.get<double>());
  return out;
}

CacheFigures ComputeCacheFigures(const MetricValues& before, const MetricValues& after) {
  CacheFigures f;
  f.hit_rate_gauge = FindSingle(after, {"radixserve_cache_hit_rate", "sglang:cache_hit_rate"});
  f.prompt_tokens_delta = Delta(before, after, {"radixserve_prompt_tokens_total", "sglang:prompt_tokens_total"});
  f.generation_tokens_delta =
      Delta(before, after, {"radixserve_generation_tokens_total", "sglang:generation_tokens_total"});
  f.cached_tokens_delta = Delta(before, after, {"radixserve_cached_tokens_total", "sglang:cached_tokens_total"});
  if (f.prompt_tokens_delta && f.cached_tokens_delta && *f.prompt_tokens_delta > 0)
    f.cached_token_ratio = *f.cached_tokens_delta / *f.prompt_tokens_delta;
  return f;
}

}  // namespace radixserve::bench
