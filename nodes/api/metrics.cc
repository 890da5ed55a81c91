#include "nodes/api/metrics.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace radixserve::nodes {

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), buckets_(bounds_.size() + 1) {}

void Histogram::Observe(double v) {
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(static_cast<uint64_t>(v > 0 ? v * 1e6 : 0), std::memory_order_relaxed);
}

void AppendHeader(std::string* out, const std::string& name, const char* type, const std::string& help) {
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void AppendSample(std::string* out, const std::string& name, double value, const std::string& labels) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.10g", value);
  *out += name;
  if (!labels.empty()) *out += "{" + labels + "}";
  *out += " ";
  *out += buf;
  *out += "\n";
}

void Histogram::Render(const std::string& name, const std::string& help, std::string* out,
                       const std::string& labels) const {
  if (labels.empty()) AppendHeader(out, name, "histogram", help);
  const std::string lead = labels.empty() ? "" : labels + ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    char le[32];
    std::snprintf(le, sizeof(le), "%g", bounds_[i]);
    AppendSample(out, name + "_bucket", double(cumulative), lead + "le=\"" + le + "\"");
  }
  cumulative += buckets_.back().load(std::memory_order_relaxed);
  AppendSample(out, name + "_bucket", double(cumulative), lead + "le=\"+Inf\"");
  AppendSample(out, name + "_sum", double(sum_micros_.load(std::memory_order_relaxed)) * 1e-6, labels);
  AppendSample(out, name + "_count", double(count_.load(std::memory_order_relaxed)), labels);
}

namespace {
std::vector<double> LatencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
}
}  // namespace

ClassMetrics::ClassMetrics() : ttft(LatencyBuckets()), e2e(LatencyBuckets()) {}

ApiMetrics::ApiMetrics() : ttft(LatencyBuckets()), inter_token(LatencyBuckets()), e2e(LatencyBuckets()) {}

std::string RenderMetrics(const ApiMetrics& m, const std::array<uint64_t, api::kNumPriorityClasses>& class_rejected,
                          const std::string& stats) {
  std::string out;
  m.ttft.Render("radixserve_time_to_first_token_seconds", "Time to first token", &out);
  m.inter_token.Render("radixserve_inter_token_latency_seconds", "Time between streamed tokens", &out);
  m.e2e.Render("radixserve_e2e_request_latency_seconds", "End-to-end request latency", &out);
  // Per priority class: one header per name, one label set per class.
  auto by_class = [&](const std::string& name, const char* help, auto member) {
    AppendHeader(&out, name, "histogram", help);
    for (const auto& c : api::kPriorityClasses)
      (m.by_class[static_cast<size_t>(c.cls)].*member)
          .Render(name, help, &out, std::string("class=\"") + c.name + "\"");
  };
  by_class("radixserve_class_time_to_first_token_seconds", "Time to first token by priority class", &ClassMetrics::ttft);
  by_class("radixserve_class_e2e_request_latency_seconds", "End-to-end latency by priority class", &ClassMetrics::e2e);
  AppendHeader(&out, "radixserve_class_requests_rejected_total", "counter",
               "Requests refused with 429 at their class's class_max_in_flight");
  for (const auto& c : api::kPriorityClasses)
    AppendSample(&out, "radixserve_class_requests_rejected_total",
                 double(class_rejected[static_cast<size_t>(c.cls)]),
                 std::string("class=\"") + c.name + "\"");
  auto counter = [&out](const std::string& n, const std::string& help, double v) {
    AppendHeader(&out, n, "counter", help);
    AppendSample(&out, n, v);
  };
  auto gauge = [&out](const std::string& n, const std::string& help, double v) {
    AppendHeader(&out, n, "gauge", help);
    AppendSample(&out, n, v);
  };
  counter("radixserve_prompt_tokens_total", "Prompt tokens of finished requests", double(m.prompt_tokens.load()));
  counter("radixserve_generation_tokens_total", "Generated tokens of finished requests",
          double(m.generation_tokens.load()));
  counter("radixserve_cached_tokens_total", "Prompt tokens served from the prefix cache",
          double(m.cached_tokens.load()));
  counter("radixserve_requests_finished_total", "Requests that ended", double(m.requests_finished.load()));
  counter("radixserve_requests_rejected_overload_total", "Requests refused with 503 at max_queued_requests",
          double(m.requests_rejected_overload.load()));
  counter("radixserve_requests_aborted_total", "Requests that ended with an error or abort",
          double(m.requests_aborted.load()));
  gauge("radixserve_requests_in_flight", "Requests submitted and not yet ended",
        double(m.requests_in_flight.load()));

  // Scheduler-side figures, refreshed at most every 100 ms (one control round trip).
  auto j = nlohmann::json::parse(stats.empty() ? "{}" : stats, nullptr, false);
  if (j.is_object()) {
    auto num = [&j](const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0; };
    gauge("radixserve_num_running_reqs", "Requests in the running batch", num("num_running_reqs"));
    gauge("radixserve_num_queue_reqs", "Requests waiting to be scheduled", num("num_queue_reqs"));
    gauge("radixserve_token_usage", "Fraction of KV slots in use (running and cached)", num("token_usage"));
    gauge("radixserve_cache_hit_rate", "Prompt tokens served from the prefix cache / all prompt tokens",
          num("cache_hit_rate"));
    counter("radixserve_retractions_total", "Requests retracted for lack of KV memory", num("retractions"));
    gauge("radixserve_kv_free_slots", "Free KV slots", num("kv_available"));
    gauge("radixserve_kv_evictable_slots", "KV slots held only by the prefix cache", num("kv_evictable"));
    // Per cache salt (at most Scheduler::kMaxTrackedSalts, "other" sums the rest), by the salt's hash.
    if (j.contains("salts") && j["salts"].is_object() && !j["salts"].empty()) {
      AppendHeader(&out, "radixserve_salt_cache_hit_rate", "gauge",
                   "Prompt tokens served from the salt's cache namespace / its prompt tokens");
      for (const auto& [label, v] : j["salts"].items())
        AppendSample(&out, "radixserve_salt_cache_hit_rate", v.value("cache_hit_rate", 0.0), "salt=\"" + label + "\"");
      AppendHeader(&out, "radixserve_salt_cached_tokens", "gauge", "Tokens the prefix cache holds for the salt");
      for (const auto& [label, v] : j["salts"].items())
        if (v.value("cached_tokens", int64_t(-1)) >= 0)
          AppendSample(&out, "radixserve_salt_cached_tokens", double(v.value("cached_tokens", int64_t(0))),
                       "salt=\"" + label + "\"");
    }
  }
  return out;
}

}  // namespace radixserve::nodes
