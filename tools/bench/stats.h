// Summary statistics of latency samples, with numpy's default percentile
// (linear interpolation between closest ranks). Pure functions.
#pragma once

#include <cstddef>
#include <vector>

namespace radixserve::bench {

// The p-th percentile (0..100) of ascending `sorted`; 0 when empty.
double Percentile(const std::vector<double>& sorted, double p);

struct Summary {
  size_t count = 0;
  double mean = 0, median = 0, p90 = 0, p99 = 0, std = 0, max = 0;
};

// Summarizes `values` (any order; the vector is sorted in place).
Summary Summarize(std::vector<double> values);

}  // namespace radixserve::bench
