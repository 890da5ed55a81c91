#include "tools/bench/report.h"

#include <cmath>
#include <cstdio>

namespace radixserve::bench {
namespace {

std::string FailureKey(const RequestOutcome& o) {
  std::string key = FailureKindName(o.failure);
  if (o.failure == FailureKind::kHttpStatus || (o.failure == FailureKind::kServerAbort && o.http_status > 0))
    key.append(1, ' ').append(std::to_string(o.http_status));
  return key;
}

nlohmann::json SummaryJson(const Summary& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"median", s.median}, {"p90", s.p90},
          {"p99", s.p99},     {"std", s.std},   {"max", s.max}};
}

void Line(std::string* out, const char* label, const std::string& value) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), "%-40s %s\n", label, value.c_str());
  *out += buf;
}

std::string Num(double v, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

void SummaryLines(std::string* out, const char* title, const char* name, const Summary& s) {
  *out += std::string("---------------") + title + "---------------\n";
  const std::string n(name);
  Line(out, ("Mean " + n + " (ms):").c_str(), Num(s.mean));
  Line(out, ("Median " + n + " (ms):").c_str(), Num(s.median));
  Line(out, ("P90 " + n + " (ms):").c_str(), Num(s.p90));
  Line(out, ("P99 " + n + " (ms):").c_str(), Num(s.p99));
}

}  // namespace

void ComputeRequestFigures(const std::vector<RequestOutcome>& outcomes, double duration_s, BenchReport* r) {
  r->duration_s = duration_s;
  r->sent = static_cast<int64_t>(outcomes.size());
  std::vector<double> ttft, tpot, itl, e2e, ttft_short;
  double latency_sum = 0;
  for (const RequestOutcome& o : outcomes) {
    if (!o.ok()) {
      ++r->failed;
      ++r->failures_by_kind[FailureKey(o)];
      if (r->first_errors.size() < 5) r->first_errors.push_back(o.error);
      continue;
    }
    ++r->completed;
    r->total_input_tokens += o.prompt_tokens;
    r->total_output_tokens += o.output_tokens;
    ttft.push_back(o.ttft_s * 1e3);
    if (r->short_prompt_max > 0 && o.prompt_tokens <= r->short_prompt_max) ttft_short.push_back(o.ttft_s * 1e3);
    e2e.push_back(o.latency_s * 1e3);
    latency_sum += o.latency_s;
    if (o.output_tokens > 1) tpot.push_back((o.latency_s - o.ttft_s) * 1e3 / (o.output_tokens - 1));
    for (double g : o.itl_s) itl.push_back(g * 1e3);
  }
  if (duration_s > 0) {
    r->request_throughput = static_cast<double>(r->completed) / duration_s;
    r->input_throughput = static_cast<double>(r->total_input_tokens) / duration_s;
    r->output_throughput = static_cast<double>(r->total_output_tokens) / duration_s;
    r->total_throughput = r->input_throughput + r->output_throughput;
    r->concurrency = latency_sum / duration_s;
  }
  r->ttft_ms = Summarize(std::move(ttft));
  r->ttft_short_ms = Summarize(std::move(ttft_short));
  r->tpot_ms = Summarize(std::move(tpot));
  r->itl_ms = Summarize(std::move(itl));
  r->e2e_ms = Summarize(std::move(e2e));
}

std::string FormatReport(const BenchReport& r) {
  std::string out = "============ Serving Benchmark Result ============\n";
  Line(&out, "Backend:", r.backend);
  Line(&out, "Dataset:", r.dataset);
  Line(&out, "Traffic request rate:", std::isinf(r.request_rate) ? "inf" : Num(r.request_rate));
  Line(&out, "Max request concurrency:", r.max_concurrency > 0 ? std::to_string(r.max_concurrency) : "unlimited");
  Line(&out, "Successful requests:", std::to_string(r.completed));
  Line(&out, "Failed requests:", std::to_string(r.failed));
  for (const auto& [kind, n] : r.failures_by_kind) Line(&out, ("  failed, " + kind + ":").c_str(), std::to_string(n));
  Line(&out, "Benchmark duration (s):", Num(r.duration_s));
  Line(&out, "Total input tokens:", std::to_string(r.total_input_tokens));
  Line(&out, "Total generated tokens:", std::to_string(r.total_output_tokens));
  Line(&out, "Request throughput (req/s):", Num(r.request_throughput));
  Line(&out, "Input token throughput (tok/s):", Num(r.input_throughput));
  Line(&out, "Output token throughput (tok/s):", Num(r.output_throughput));
  Line(&out, "Total token throughput (tok/s):", Num(r.total_throughput));
  Line(&out, "Concurrency:", Num(r.concurrency));
  SummaryLines(&out, "End-to-End Latency", "E2E Latency", r.e2e_ms);
  SummaryLines(&out, "Time to First Token", "TTFT", r.ttft_ms);
  Line(&out, "Max TTFT (longest wait) (ms):", Num(r.ttft_ms.max));
  if (r.short_prompt_max > 0) {
    const std::string title = "TTFT of prompts <= " + std::to_string(r.short_prompt_max) + " tokens";
    SummaryLines(&out, title.c_str(), "short TTFT", r.ttft_short_ms);
    Line(&out, "Short requests:", std::to_string(r.ttft_short_ms.count));
  }
  SummaryLines(&out, "Time per Output Token (excl. 1st token)", "TPOT", r.tpot_ms);
  SummaryLines(&out, "Inter-Token Latency", "ITL", r.itl_ms);
  out += "---------------Server---------------\n";
  auto opt = [](const std::optional<double>& v, bool percent) {
    if (!v) return std::string("n/a");
    return percent ? Num(*v * 100, 1) + " %" : Num(*v, 0);
  };
  Line(&out, "Prefix cache hit rate (server gauge):", opt(r.cache.hit_rate_gauge, true));
  Line(&out, "Cached / prompt tokens over the run:", opt(r.cache.cached_token_ratio, true));
  Line(&out, "Server prompt tokens over the run:", opt(r.cache.prompt_tokens_delta, false));
  Line(&out, "Server generated tokens over the run:", opt(r.cache.generation_tokens_delta, false));
  if (r.scheduler_overhead.empty()) {
    Line(&out, "Scheduler overhead:", "n/a");
  } else {
    for (const auto& [k, v] : r.scheduler_overhead) Line(&out, ("Scheduler " + k + ":").c_str(), Num(v, 4));
  }
  for (const std::string& e : r.first_errors) out += "error: " + e + "\n";
  out += "==================================================\n";
  return out;
}

nlohmann::json ReportToJson(const BenchReport& r) {
  nlohmann::json j;
  j["backend"] = r.backend;
  j["dataset"] = r.dataset;
  j["request_rate"] = std::isinf(r.request_rate) ? nlohmann::json("inf") : nlohmann::json(r.request_rate);
  j["max_concurrency"] = r.max_concurrency;
  j["duration_s"] = r.duration_s;
  j["sent"] = r.sent;
  j["completed"] = r.completed;
  j["failed"] = r.failed;
  j["failures_by_kind"] = r.failures_by_kind;
  j["errors"] = r.first_errors;
  j["total_input_tokens"] = r.total_input_tokens;
  j["total_output_tokens"] = r.total_output_tokens;
  j["request_throughput"] = r.request_throughput;
  j["input_throughput"] = r.input_throughput;
  j["output_throughput"] = r.output_throughput;
  j["total_throughput"] = r.total_throughput;
  j["concurrency"] = r.concurrency;
  j["ttft_ms"] = SummaryJson(r.ttft_ms);
  if (r.short_prompt_max > 0) {
    j["short_prompt_max"] = r.short_prompt_max;
    j["ttft_short_ms"] = SummaryJson(r.ttft_short_ms);
  }
  j["tpot_ms"] = SummaryJson(r.tpot_ms);
  j["itl_ms"] = SummaryJson(r.itl_ms);
  j["e2e_latency_ms"] = SummaryJson(r.e2e_ms);
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  j["server"] = {{"cache_hit_rate", opt(r.cache.hit_rate_gauge)},
                 {"cached_token_ratio", opt(r.cache.cached_token_ratio)},
                 {"prompt_tokens_delta", opt(r.cache.prompt_tokens_delta)},
                 {"generation_tokens_delta", opt(r.cache.generation_tokens_delta)},
                 {"cached_tokens_delta", opt(r.cache.cached_tokens_delta)}};
  nlohmann::json overhead = nlohmann::json::object();
  for (const auto& [k, v] : r.scheduler_overhead) overhead[k] = v;
  j["server"]["scheduler_overhead"] = r.scheduler_overhead.empty() ? nlohmann::json("n/a") : overhead;
  return j;
}

}  // namespace radixserve::bench
