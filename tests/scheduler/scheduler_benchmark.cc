// Google Benchmark programs for the scheduler's hot paths (issue #3 step 8):
// radix match/insert/evict, LPM ordering with in-batch dedup, and one whole
// scheduling iteration with the fake worker.
#include <benchmark/benchmark.h>

#include <memory>
#include <random>

#include "tests/scheduler/fake_worker.h"
#include "core/scheduler/cache_adapter.h"
#include "core/scheduler/kv_allocator.h"
#include "core/scheduler/scheduler.h"
#include "core/scheduler/step_driver.h"
#include "plugins/cache/radix/radix_cache.h"
#include "plugins/policy/fcfs/fcfs_policy.h"
#include "plugins/policy/lpm/lpm_policy.h"

namespace radixserve::sched {
namespace {

using V = std::vector<int32_t>;

V Random(std::mt19937_64& rng, int n) {
  V v(n);
  for (auto& t : v) t = 3 + static_cast<int32_t>(rng() % 32000);
  return v;
}

// A tree of 100k tokens in 1,000 sequences of 100 tokens.
struct Tree {
  Tree() : alloc(MakeKvAllocator(1, 1 << 20)), pool(1, 8) {
    cache.Attach(CacheContextOf(alloc.get(), 1));
    std::mt19937_64 rng(1);
    for (int i = 0; i < 1000; ++i) seqs.push_back(Random(rng, 100));
    Fill();
  }
  void Fill() {
    for (const V& s : seqs) Put(s);
  }
  void Put(const V& s) {
    slots.clear();
    alloc->Alloc(static_cast<int64_t>(s.size()), &slots);
    int32_t p = cache.Insert(s, slots, 0);
    if (p > 0) alloc->Free(std::span<const int32_t>(slots).first(p));
  }
  std::unique_ptr<KvAllocator> alloc;
  ReqToTokenPool pool;
  RadixCache cache;
  std::vector<V> seqs;
  V slots;
};

void BM_RadixMatchPrefix2048(benchmark::State& state) {
  Tree t;
  std::mt19937_64 rng(2);
  // The prompt shares one cached sequence (100 tokens), then 1,948 uncached tokens.
  V prompt = t.seqs[500];
  V tail = Random(rng, 1948);
  prompt.insert(prompt.end(), tail.begin(), tail.end());
  V out;
  out.reserve(4096);
  for (auto _ : state) {
    out.clear();
    benchmark::DoNotOptimize(t.cache.MatchPrefix(prompt, &out));
  }
  state.counters["matched"] = static_cast<double>(out.size());
}
BENCHMARK(BM_RadixMatchPrefix2048);

void BM_RadixMatchPrefix2048FullyCached(benchmark::State& state) {
  Tree t;
  std::mt19937_64 rng(3);
  V prompt = Random(rng, 2048);
  t.Put(prompt);
  V out;
  out.reserve(4096);
  for (auto _ : state) {
    out.clear();
    benchmark::DoNotOptimize(t.cache.MatchPrefix(prompt, &out));
  }
  state.counters["matched"] = static_cast<double>(out.size());
}
BENCHMARK(BM_RadixMatchPrefix2048FullyCached);

void BM_RadixPeekMatch2048(benchmark::State& state) {
  Tree t;
  std::mt19937_64 rng(2);
  V prompt = t.seqs[500];
  V tail = Random(rng, 1948);
  prompt.insert(prompt.end(), tail.begin(), tail.end());
  for (auto _ : state) benchmark::DoNotOptimize(t.cache.PeekMatchLength(prompt));
}
BENCHMARK(BM_RadixPeekMatch2048);

// Insert of a 100-token sequence that shares 50 tokens with a cached one (a split + a leaf).
void BM_RadixInsert(benchmark::State& state) {
  Tree t;
  std::mt19937_64 rng(4);
  std::vector<V> fresh;
  for (int i = 0; i < 1000; ++i) {
    V s(t.seqs[i].begin(), t.seqs[i].begin() + 50);
    V tail = Random(rng, 50);
    s.insert(s.end(), tail.begin(), tail.end());
    fresh.push_back(s);
  }
  std::vector<V> fresh_slots(fresh.size());
  size_t i = 0;
  auto refill = [&] {
    t.cache.Reset();
    t.alloc->Clear();
    t.cache.Attach(CacheContextOf(t.alloc.get(), 1));
    t.Fill();
    for (auto& s : fresh_slots) {
      s.clear();
      t.alloc->Alloc(100, &s);
    }
  };
  refill();
  for (auto _ : state) {
    if (i == fresh.size()) {
      state.PauseTiming();
      refill();
      i = 0;
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(t.cache.Insert(fresh[i], fresh_slots[i], 0));
    ++i;
  }
}
BENCHMARK(BM_RadixInsert);

// Evict 10% (10k tokens) of the 100k-token tree, LRU.
void BM_RadixEvict10Percent(benchmark::State& state) {
  Tree t;
  for (auto _ : state) {
    benchmark::DoNotOptimize(t.cache.Evict(10000));
    state.PauseTiming();
    t.Fill();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_RadixEvict10Percent);

// LPM ordering with in-batch dedup: N waiting requests of 2,048 tokens, in 8 groups that share
// 1,024-token prefixes; half the groups' prefixes are cached.
void BM_LpmCalcPriority(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Tree t;
  std::mt19937_64 rng(5);
  std::vector<V> groups;
  for (int g = 0; g < 8; ++g) {
    groups.push_back(Random(rng, 1024));
    if (g % 2 == 0) t.Put(groups.back());
  }
  std::vector<std::unique_ptr<Req>> reqs;
  std::vector<RequestView> queue;
  for (int i = 0; i < n; ++i) {
    auto r = std::make_unique<Req>();
    r->tokens = groups[i % 8];
    V tail = Random(rng, 1024);
    r->tokens.insert(r->tokens.end(), tail.begin(), tail.end());
    r->input_len = 2048;
    queue.emplace_back(r.get());
    reqs.push_back(std::move(r));
  }
  LpmPolicy lpm(128, 32, 32);
  V order;
  for (auto _ : state) {
    lpm.Order(queue, OrderContext{t.cache, 0.0}, &order);
    benchmark::DoNotOptimize(order.data());
  }
}
BENCHMARK(BM_LpmCalcPriority)->Arg(16)->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond);

// One scheduling iteration (get next batch, build the ForwardBatch, fake forward, process the
// result, stream) in steady decode with N running requests.
void BM_SchedulerDecodeIteration(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  SchedulerConfig c;
  c.max_running_requests = n;
  c.max_req_len = 4096;
  c.max_total_tokens = static_cast<int64_t>(n) * 4200;
  c.chunked_prefill_size = 1 << 20;
  c.max_prefill_tokens = 1 << 20;
  c.eos_token_ids = {2};
  c.overlap = false;  // the loop's own cost, without the hand-off to a worker thread
  FakeWorkerOptions w;
  w.verify = false;
  w = FakeWorkerFor(c, w);
  std::unique_ptr<FakeWorker> worker;
  std::unique_ptr<Scheduler> sched;
  std::unique_ptr<StepDriver> driver;
  int steps = 0;
  auto start = [&] {
    driver.reset();
    sched.reset();
    worker = std::make_unique<FakeWorker>(w);
    sched = std::make_unique<Scheduler>(c, OwnCache(std::make_unique<RadixCache>()),
                                        OwnPolicy(std::make_unique<FcfsPolicy>()), [](const BatchTokenIdOut&) {});
    driver = std::make_unique<StepDriver>(sched.get(), worker.get());
    std::mt19937_64 rng(6);
    for (int i = 0; i < n; ++i) {
      TokenizedRequest g;
      g.rid = static_cast<uint64_t>(i + 1);
      g.input_ids = Random(rng, 64);
      g.spec.sampling.max_new_tokens = 4000;
      g.spec.sampling.ignore_eos = true;
      g.spec.stream = true;
      sched->Submit(std::move(g));
    }
    while (sched->num_running() < static_cast<size_t>(n) || sched->num_waiting() > 0) (void)driver->Step();
    steps = 0;
  };
  start();
  for (auto _ : state) {
    if (++steps == 3900) {
      state.PauseTiming();
      start();
      state.ResumeTiming();
    }
    (void)driver->Step();
  }
  state.counters["running"] = static_cast<double>(sched->num_running());
}
BENCHMARK(BM_SchedulerDecodeIteration)->Arg(1)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace radixserve::sched

BENCHMARK_MAIN();
