// Prometheus metrics of the api node: counters, gauges and fixed-bucket
// histograms, rendered in the Prometheus text exposition format.
// Observe/Add are lock-free (relaxed atomics); Render may run concurrently.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/api/priority_class.h"

namespace radixserve::nodes {

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double v);
  // Appends "# TYPE name histogram" and its bucket, sum and count lines.
  // labels ("class=\"bulk\"") go on every line; with labels the # HELP/# TYPE header is left to the
  // caller (one header for all label sets of a name).
  void Render(const std::string& name, const std::string& help, std::string* out,
              const std::string& labels = "") const;
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::vector<std::atomic<uint64_t>> buckets_;  // cumulative counts are computed when rendering
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_micros_{0};  // sum in micro-units, to stay lock-free
};

// What is measured per priority class (api/priority_class.h).
struct ClassMetrics {
  ClassMetrics();
  Histogram ttft;  // seconds
  Histogram e2e;   // seconds
};

struct ApiMetrics {
  ApiMetrics();
  std::array<ClassMetrics, api::kNumPriorityClasses> by_class;  // indexed by api::PriorityClass
  Histogram ttft;              // seconds
  Histogram inter_token;       // seconds
  Histogram e2e;               // seconds
  std::atomic<uint64_t> prompt_tokens{0};
  std::atomic<uint64_t> generation_tokens{0};
  std::atomic<uint64_t> cached_tokens{0};
  std::atomic<uint64_t> requests_finished{0};
  std::atomic<uint64_t> requests_aborted{0};
  std::atomic<int64_t> requests_in_flight{0};
  std::atomic<uint64_t> requests_rejected_overload{0};  // refused at max_queued_requests (503)
};

// The api node's /metrics page: its own figures and the scheduler's (`stats`: the scheduler's
// stats JSON, possibly a little old; "" when none arrived yet).
// class_rejected: requests the HTTP server refused at each class's limit (HttpServer::class_rejected).
std::string RenderMetrics(const ApiMetrics& metrics, const std::array<uint64_t, api::kNumPriorityClasses>& class_rejected,
                          const std::string& stats);

// One Prometheus sample line: "name value\n" (or "name{labels} value\n").
void AppendSample(std::string* out, const std::string& name, double value, const std::string& labels = "");
void AppendHeader(std::string* out, const std::string& name, const char* type, const std::string& help);

// The scheduler's stats JSON as /metrics renders it: refreshed at most every 100 ms, by one scrape
// at a time; the others render the cached figures meanwhile, so a scrape never waits for another.
// Thread-safe: refresh_mu_ admits one refresh; mu_ guards json_ and time_ and is never held
// across `fetch`.
class StatsCache {
 public:
  // `fetch` asks the scheduler(s): nullopt when no answer came (the cached figures stay).
  std::string Get(const std::function<std::optional<std::string>()>& fetch);

 private:
  std::mutex refresh_mu_;
  std::mutex mu_;
  std::string json_;
  std::chrono::steady_clock::time_point time_{};
};

}  // namespace radixserve::nodes
