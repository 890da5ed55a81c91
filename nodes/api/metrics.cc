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

  // Scheduler-side figures, refreshed at most every 100 ms (one control round trip). With data
  // parallelism each group's come under its own label, group="<namespace>".
  auto j = nlohmann::json::parse(stats.empty() ? "{}" : stats, nullptr, false);
  if (!j.is_object()) return out;
  std::vector<std::pair<std::string, const nlohmann::json*>> schedulers;  // (labels, stats)
  if (j.contains("groups") && j["groups"].is_object()) {
    for (const auto& [group, g] : j["groups"].items())
      if (g.is_object()) schedulers.emplace_back("group=\"" + group + "\"", &g);
  } else {
    schedulers.emplace_back("", &j);
  }
  auto per_scheduler = [&](const char* type, const std::string& name, const std::string& help, const char* key) {
    AppendHeader(&out, name, type, help);
    for (const auto& [labels, g] : schedulers)
      AppendSample(&out, name, g->contains(key) && (*g)[key].is_number() ? (*g)[key].get<double>() : 0.0, labels);
  };
  per_scheduler("gauge", "radixserve_num_running_reqs", "Requests in the running batch", "num_running_reqs");
  per_scheduler("gauge", "radixserve_num_queue_reqs", "Requests waiting to be scheduled", "num_queue_reqs");
  per_scheduler("gauge", "radixserve_token_usage", "Fraction of KV slots in use (running and cached)", "token_usage");
  per_scheduler("gauge", "radixserve_cache_hit_rate", "Prompt tokens served from the prefix cache / all prompt tokens",
                "cache_hit_rate");
  per_scheduler("counter", "radixserve_retractions_total", "Requests retracted for lack of KV memory", "retractions");
  per_scheduler("gauge", "radixserve_kv_free_slots", "Free KV slots", "kv_available");
  per_scheduler("gauge", "radixserve_kv_evictable_slots", "KV slots held only by the prefix cache", "kv_evictable");
  // Per cache salt (at most Scheduler::kMaxTrackedSalts, "other" sums the rest), by the salt's hash.
  auto salt_labels = [](const std::string& labels, const std::string& salt) {
    return (labels.empty() ? "" : labels + ",") + "salt=\"" + salt + "\"";
  };
  bool any_salt = false;
  for (const auto& [labels, g] : schedulers)
    any_salt = any_salt || (g->contains("salts") && (*g)["salts"].is_object() && !(*g)["salts"].empty());
  if (any_salt) {
    AppendHeader(&out, "radixserve_salt_cache_hit_rate", "gauge",
                 "Prompt tokens served from the salt's cache namespace / its prompt tokens");
    for (const auto& [labels, g] : schedulers)
      if (g->contains("salts") && (*g)["salts"].is_object())
        for (const auto& [label, v] : (*g)["salts"].items())
          AppendSample(&out, "radixserve_salt_cache_hit_rate", v.value("cache_hit_rate", 0.0), salt_labels(labels, label));
    AppendHeader(&out, "radixserve_salt_cached_tokens", "gauge", "Tokens the prefix cache holds for the salt");
    for (const auto& [labels, g] : schedulers)
      if (g->contains("salts") && (*g)["salts"].is_object())
        for (const auto& [label, v] : (*g)["salts"].items())
          if (v.value("cached_tokens", int64_t(-1)) >= 0)
            AppendSample(&out, "radixserve_salt_cached_tokens", double(v.value("cached_tokens", int64_t(0))),
                         salt_labels(labels, label));
  }
  // The data-parallel router: where it sent requests, and what it knows each group caches.
  if (j.contains("router") && j["router"].contains("groups") && j["router"]["groups"].is_object()) {
    const auto& rg = j["router"]["groups"];
    AppendHeader(&out, "radixserve_router_routed_total", "counter", "Requests the router sent to the group");
    for (const auto& [group, v] : rg.items())
      AppendSample(&out, "radixserve_router_routed_total", double(v.value("routed", uint64_t(0))),
                   "group=\"" + group + "\"");
    AppendHeader(&out, "radixserve_router_known_cached_tokens", "gauge",
                 "Tokens the router knows the group's prefix cache holds (from its cache events)");
    for (const auto& [group, v] : rg.items())
      AppendSample(&out, "radixserve_router_known_cached_tokens", double(v.value("cached_tokens", int64_t(0))),
                   "group=\"" + group + "\"");
  }
  return out;
}

std::string StatsCache::Get(const std::function<std::optional<std::string>()>& fetch) {
  const auto now = std::chrono::steady_clock::now();
  std::string stats;
  bool stale;
  {
    std::lock_guard<std::mutex> l(mu_);
    stale = now - time_ > std::chrono::milliseconds(100);
    stats = json_;
  }
  if (!stale) return stats;
  std::unique_lock<std::mutex> refresh(refresh_mu_, std::try_to_lock);
  if (!refresh.owns_lock()) return stats;
  std::optional<std::string> fresh = fetch();
  if (!fresh) return stats;
  std::lock_guard<std::mutex> l(mu_);
  json_ = std::move(*fresh);
  time_ = std::chrono::steady_clock::now();
  return json_;
}

}  // namespace radixserve::nodes
