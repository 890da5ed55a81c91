// Request send times: all at once, or a Poisson process at a given rate.
// Pure functions of the seeded generator.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace radixserve::bench {

// One exponential gap with mean 1/rate seconds.
double ExponentialGap(double rate, std::mt19937_64& rng);

// Send offsets in seconds from the start for n requests: all 0 when rate is infinite or <= 0,
// otherwise the first at 0 and each next one an exponential gap later.
std::vector<double> ArrivalTimes(size_t n, double rate, std::mt19937_64& rng);

}  // namespace radixserve::bench
