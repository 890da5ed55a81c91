// LPM starvation benchmark (not a test): one cache-cold request waits behind a steady stream of
// cache-hot requests (a shared, cached prefix), in-process with the fake worker, under fcfs, lpm,
// lpm with aging_ms, and hrrn. Prints how long the cold request waited for its first token
// (scheduler steps and milliseconds), and the hot requests' mean and longest wait.
//   scheduler_lpm_starvation_bench [hot_steps=2000] [aging_ms=20]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "plugins/policy/hrrn/hrrn_policy.h"
#include "plugins/policy/lpm/lpm_policy.h"
#include "tests/scheduler/scheduler_harness.h"

namespace radixserve::sched {
namespace {

using Clock = std::chrono::steady_clock;

struct Result {
  int64_t cold_steps = -1;
  double cold_ms = -1;
  double hot_max_ms = 0;
  double hot_sum_ms = 0;
  int64_t hot_count = 0;
};

std::unique_ptr<SchedulePolicy> Lpm(int64_t aging_ms) {
  std::map<std::string, std::string> given = {{"aging_ms", std::to_string(aging_ms)}};
  Params params;
  if (!ResolveParams(std::span(kLpmParams, kNumLpmParams), given, &params).ok()) std::abort();
  return std::move(MakeLpmPolicy(params).value());
}

Result Run(int hot_steps, std::unique_ptr<SchedulePolicy> policy) {
  SchedulerConfig cfg;
  cfg.max_total_tokens = 1 << 16;
  cfg.max_running_requests = 8;
  cfg.max_req_len = 1024;
  testing::Harness h(cfg, /*radix=*/true, {}, std::move(policy));

  const std::vector<int32_t> shared = testing::Prompt(7, 200);  // the hot, cached prefix
  auto hot_prompt = [&](uint64_t i) {
    std::vector<int32_t> p = shared;
    auto tail = testing::Prompt(1000 + i, 4);
    p.insert(p.end(), tail.begin(), tail.end());
    return p;
  };
  // Warm the cache with the shared prefix.
  h.Submit(1, hot_prompt(0), 1, true);
  h.Run();

  std::map<uint64_t, Clock::time_point> submitted;
  Result res;
  uint64_t next = 10;
  const uint64_t cold = 2;
  // The cold request arrives after a queue of hot ones has formed.
  for (int i = 0; i < 16; ++i, ++next) {
    h.Submit(next, hot_prompt(next), 4, true, /*stream=*/true);
    submitted[next] = Clock::now();
  }
  h.Submit(cold, testing::Prompt(99, 200), 4, true, /*stream=*/true);
  const auto cold_at = Clock::now();
  int64_t steps = 0;
  for (int s = 0; s < hot_steps || !h.sched->idle(); ++s) {
    if (s < hot_steps) {
      // Keep the queue short of LPM's FCFS cutoff (128) and never empty of hot requests.
      for (int k = 0; k < 3 && h.sched->num_waiting() < 64; ++k, ++next) {
        h.Submit(next, hot_prompt(next), 4, true, /*stream=*/true);
        submitted[next] = Clock::now();
      }
    }
    if (!h.driver->Step().ok()) std::abort();
    ++steps;
    const auto now = Clock::now();
    if (res.cold_steps < 0 && (!h.out[cold].tokens.empty() || h.out[cold].finished)) {
      res.cold_steps = steps;
      res.cold_ms = std::chrono::duration<double, std::milli>(now - cold_at).count();
    }
    for (auto it = submitted.begin(); it != submitted.end();) {
      auto o = h.out.find(it->first);
      if (o != h.out.end() && (!o->second.tokens.empty() || o->second.finished)) {
        const double waited = std::chrono::duration<double, std::milli>(now - it->second).count();
        res.hot_max_ms = std::max(res.hot_max_ms, waited);
        res.hot_sum_ms += waited;
        ++res.hot_count;
        it = submitted.erase(it);
      } else {
        ++it;
      }
    }
  }
  return res;
}

}  // namespace
}  // namespace radixserve::sched

int main(int argc, char** argv) {
  using namespace radixserve::sched;
  const int hot_steps = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int64_t aging_ms = argc > 2 ? std::atoll(argv[2]) : 20;
  struct Case {
    std::string name;
    std::unique_ptr<SchedulePolicy> policy;
  };
  std::vector<Case> cases;
  cases.push_back({"fcfs", nullptr});
  cases.push_back({"lpm", Lpm(0)});
  cases.push_back({"lpm aging_ms=" + std::to_string(aging_ms), Lpm(aging_ms)});
  cases.push_back({"hrrn", std::make_unique<HrrnPolicy>(128, 32, 32)});
  for (Case& c : cases) {
    auto r = Run(hot_steps, std::move(c.policy));
    std::printf("%-18s hot stream %d steps: cold request waited %lld steps, %.1f ms; hot mean %.1f ms, longest %.1f ms\n",
                c.name.c_str(), hot_steps, static_cast<long long>(r.cold_steps), r.cold_ms,
                r.hot_count > 0 ? r.hot_sum_ms / double(r.hot_count) : 0.0, r.hot_max_ms);
  }
  return 0;
}
