#include "nodes/api/metrics.h"

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

void Histogram::Render(const std::string& name, const std::string& help, std::string* out) const {
  AppendHeader(out, name, "histogram", help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    char le[32];
    std::snprintf(le, sizeof(le), "%g", bounds_[i]);
    AppendSample(out, name + "_bucket", double(cumulative), std::string("le=\"") + le + "\"");
  }
  cumulative += buckets_.back().load(std::memory_order_relaxed);
  AppendSample(out, name + "_bucket", double(cumulative), "le=\"+Inf\"");
  AppendSample(out, name + "_sum", double(sum_micros_.load(std::memory_order_relaxed)) * 1e-6);
  AppendSample(out, name + "_count", double(count_.load(std::memory_order_relaxed)));
}

namespace {
std::vector<double> LatencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
}
}  // namespace

ApiMetrics::ApiMetrics() : ttft(LatencyBuckets()), inter_token(LatencyBuckets()), e2e(LatencyBuckets()) {}

}  // namespace radixserve::nodes
