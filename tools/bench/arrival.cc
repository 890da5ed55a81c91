#include "tools/bench/arrival.h"

#include <cmath>

namespace radixserve::bench {

double ExponentialGap(double rate, std::mt19937_64& rng) {
  // 53 random bits give u in [0, 1); 1 - u is never 0.
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return -std::log1p(-u) / rate;
}

std::vector<double> ArrivalTimes(size_t n, double rate, std::mt19937_64& rng) {
  std::vector<double> t(n, 0.0);
  if (!(rate > 0) || std::isinf(rate)) return t;
  double now = 0;
  for (size_t i = 1; i < n; ++i) {
    now += ExponentialGap(rate, rng);
    t[i] = now;
  }
  return t;
}

}  // namespace radixserve::bench
