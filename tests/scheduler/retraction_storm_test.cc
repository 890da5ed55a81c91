// Retraction storms (issue #7, "Faults"): a burst that oversubscribes the KV pool forces
// eviction and many retractions. Every request still finishes with the tokens it produces
// alone, the KV pool returns to idle, new_token_ratio follows SCHEDULER_SPEC 3.2 / 4.2 at
// every step (decay per decode step, the kept-set formula after a retraction, reset on idle),
// and decode throughput recovers after the burst (SCHEDULER_SPEC 12 item 1: SGLang #26248).
// Throughput is counted in tokens per decode step and steps per phase, never in wall time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tests/scheduler/scheduler_harness.h"

namespace radixserve::sched {
namespace {

using testing::Harness;
using testing::Prompt;
using V = std::vector<int32_t>;

// SCHEDULER_SPEC 3.2 with the default config, written out here rather than taken from NewTokenRatio.
constexpr double kInitRatio = 0.7;
constexpr double kMinRatio = 0.7 * 0.14;
constexpr double kDecay = (kInitRatio - kMinRatio) / 600;
constexpr int kRetractDecodeSteps = 20;

SchedulerConfig StormConfig(int32_t page = 1, bool overlap = false) {
  SchedulerConfig c;
  c.page_size = page;
  c.max_total_tokens = 2048;
  c.max_running_requests = 64;
  c.max_req_len = 1024;
  c.overlap = overlap;
  c.check_invariants_every_iteration = true;
  return c;
}

struct Submitted {
  V prompt;
  int32_t max_new = 0;
  bool ignore_eos = false;
};

// What one Step() did, seen from outside: the stats' deltas and the tokens streamed in it.
struct StepObs {
  bool prefill = false;
  bool decode = false;
  int64_t retracted = 0;
  double ratio_before = 0;
  double ratio_after = 0;
  int64_t tokens = 0;                // output tokens streamed in this step
  std::vector<uint64_t> got_token;   // requests that streamed a token in this step
};

// Drives a Harness one step at a time and records every step. Requests are submitted with
// stream = true and stream_interval 1, so each token is streamed in the step that made it.
class Driver {
 public:
  explicit Driver(Harness* h) : h_(h) {}

  void Submit(uint64_t rid, V prompt, int32_t max_new, bool ignore_eos) {
    h_->Submit(rid, prompt, max_new, ignore_eos, /*stream=*/true);
    reqs_[rid] = {std::move(prompt), max_new, ignore_eos};
  }

  StepObs Step() {
    StepObs o;
    const SchedulerStats before = h_->sched->stats();
    o.ratio_before = h_->sched->new_token_ratio();
    Status s = h_->driver->Step();
    EXPECT_TRUE(s.ok()) << "step " << steps_ + 1 << ": " << s.ToString();
    const SchedulerStats& after = h_->sched->stats();
    o.prefill = after.prefill_batches + after.mixed_batches > before.prefill_batches + before.mixed_batches;
    o.decode = after.decode_batches > before.decode_batches;
    o.retracted = after.retractions - before.retractions;
    o.ratio_after = h_->sched->new_token_ratio();
    for (const auto& [rid, c] : h_->out) {
      size_t& seen = seen_[rid];
      if (c.tokens.size() > seen) {
        o.tokens += static_cast<int64_t>(c.tokens.size() - seen);
        o.got_token.push_back(rid);
        seen = c.tokens.size();
      }
    }
    ++steps_;
    return o;
  }

  // Steps until every submitted request has finished (and the scheduler is idle).
  template <typename Fn>
  void RunToIdle(Fn&& on_step, int64_t max_steps = 200000) {
    for (int64_t i = 0; i < max_steps; ++i) {
      on_step(Step());
      if (::testing::Test::HasFatalFailure()) return;
      if (h_->sched->idle() && AllFinished()) return;
    }
    ADD_FAILURE() << "not idle after " << max_steps << " steps";
  }
  void RunToIdle() {
    RunToIdle([](const StepObs&) {});
  }

  bool AllFinished() const {
    for (const auto& [rid, r] : reqs_) {
      auto it = h_->out.find(rid);
      if (it == h_->out.end() || !it->second.finished) return false;
    }
    return true;
  }
  bool Finished(uint64_t rid) const {
    auto it = h_->out.find(rid);
    return it != h_->out.end() && it->second.finished;
  }

  // Every request ended normally with exactly the tokens it produces alone.
  void ExpectReferenceOutputs() const {
    for (const auto& [rid, r] : reqs_) {
      auto it = h_->out.find(rid);
      ASSERT_NE(it, h_->out.end()) << "no output for rid " << rid;
      EXPECT_TRUE(it->second.finished) << rid;
      EXPECT_NE(it->second.finish.kind, FinishKind::kAbort) << rid << ": " << it->second.finish.message;
      EXPECT_EQ(it->second.tokens, h_->Expected(r.prompt, r.max_new, r.ignore_eos)) << rid;
    }
  }

  // Output tokens streamed so far for rid (= its output length).
  int64_t OutputLen(uint64_t rid) const {
    auto it = seen_.find(rid);
    return it == seen_.end() ? 0 : static_cast<int64_t>(it->second);
  }
  const Submitted& request(uint64_t rid) const { return reqs_.at(rid); }
  int64_t steps() const { return steps_; }

 private:
  Harness* h_;
  std::map<uint64_t, Submitted> reqs_;
  std::map<uint64_t, size_t> seen_;
  int64_t steps_ = 0;
};

void ExpectKvIdle(const Harness& h) {
  const Scheduler& s = *h.sched;
  ASSERT_TRUE(s.idle());
  Status inv = s.CheckInvariants();
  EXPECT_TRUE(inv.ok()) << inv.ToString();
  EXPECT_EQ(s.cache().protected_size(), 0);
  EXPECT_EQ(s.allocator().available_size() + s.cache().evictable_size(), s.allocator().size());
  EXPECT_EQ(s.num_running(), 0u);
  EXPECT_EQ(s.num_waiting(), 0u);
  h.ExpectNoRequestStateLeft();
}

// The burst: outputs of 128-191 tokens (three in four ignore EOS), together many times what
// the pool holds.
void SubmitBurst(Driver* d, uint64_t first_rid, int n, uint64_t seed) {
  for (int i = 0; i < n; ++i) {
    const uint64_t rid = first_rid + static_cast<uint64_t>(i);
    d->Submit(rid, Prompt(seed + rid, 16 + (i * 7) % 32), 128 + (i * 37) % 64, /*ignore_eos=*/i % 4 != 3);
  }
}

// A storm: the burst arrives while a long request has been decoding for a while, so
// new_token_ratio has decayed to its minimum and admission reserves only ~10% of the running
// requests' remaining outputs. It over-admits until NO_TOKEN, decode then runs out of KV and
// retracts; as requests finish, admission over-admits again under the decaying ratio, so
// retractions come in clusters through the whole burst.
constexpr int kStormRequests = 200;

template <typename Fn>
void RunStorm(Driver* d, uint64_t first_rid, uint64_t seed, Fn&& on_step) {
  d->Submit(first_rid, Prompt(seed, 16), 1000, /*ignore_eos=*/true);
  for (int i = 0; i < 2000; ++i) {
    const StepObs o = d->Step();
    on_step(o);
    if (::testing::Test::HasFatalFailure()) return;
    if (o.ratio_after <= kMinRatio) break;
  }
  SubmitBurst(d, first_rid + 1, kStormRequests - 1, seed);
  d->RunToIdle(on_step);
}

// The ratio rules of SCHEDULER_SPEC 3.2 / 4.2 that hold in both loops, for one step. (In the
// overlap loop a step without a new batch may still be processing the previous one, and then
// on_idle does not run.)
void CheckRatioStep(const StepObs& o, bool overlap) {
  if (o.decode && o.retracted > 0) {
    ASSERT_GT(o.ratio_after, 0.0);
    ASSERT_LE(o.ratio_after, 1.0);
  } else if (o.decode) {
    ASSERT_DOUBLE_EQ(o.ratio_after, std::max(o.ratio_before - kDecay, kMinRatio)) << "decay per decode step";
  } else if (o.prefill) {
    ASSERT_EQ(o.ratio_after, o.ratio_before) << "a prefill step leaves the ratio alone";
  } else if (!overlap || o.ratio_after != o.ratio_before) {
    ASSERT_DOUBLE_EQ(o.ratio_after, kInitRatio) << "on_idle resets the ratio";
  }
}

struct StormParam {
  int32_t page;
  bool overlap;
};
class StormTest : public ::testing::TestWithParam<StormParam> {};

TEST_P(StormTest, BurstCompletesWithReferenceOutputsAndKvBackToIdle) {
  FakeWorkerOptions w;
  w.eos_one_in = 1000;  // the requests that honour EOS mostly run long too
  Harness h(StormConfig(GetParam().page, GetParam().overlap), /*radix=*/true, w);
  Driver d(&h);
  int64_t events = 0, steps = 0;
  RunStorm(&d, 1, 1000, [&](const StepObs& o) {
    ++steps;
    if (o.retracted > 0) ++events;
    CheckRatioStep(o, GetParam().overlap);
  });
  ASSERT_FALSE(HasFailure());
  const SchedulerStats& st = h.sched->stats();
  std::printf("  storm page %d %s: %lld steps, %lld retraction events, %lld requests retracted, %lld decode / "
              "%lld prefill batches\n",
              GetParam().page, GetParam().overlap ? "overlap" : "normal", static_cast<long long>(steps),
              static_cast<long long>(events), static_cast<long long>(st.retractions),
              static_cast<long long>(st.decode_batches), static_cast<long long>(st.prefill_batches));
  RecordProperty("retractions", std::to_string(st.retractions));
  RecordProperty("retraction_events", std::to_string(events));
  EXPECT_GT(st.retractions, 0);
  EXPECT_GE(events, 5) << "a storm: retraction again and again, not once";
  EXPECT_EQ(st.finished, kStormRequests);
  EXPECT_EQ(st.aborted, 0);
  d.ExpectReferenceOutputs();
  ExpectKvIdle(h);
}

INSTANTIATE_TEST_SUITE_P(Loops, StormTest,
                         ::testing::Values(StormParam{1, false}, StormParam{1, true}, StormParam{16, false},
                                           StormParam{16, true}),
                         [](const auto& info) {
                           return "page" + std::to_string(info.param.page) +
                                  (info.param.overlap ? "_overlap" : "_normal");
                         });

// In the normal loop a decode step streams exactly one token for each request of its batch, so
// the kept set of a retraction is the set of requests that streamed a token in that step, and
// each one's output length at the retraction is one less than after the step.
TEST(RetractionStorm, NewTokenRatioFollowsTheSpecAtEveryStep) {
  for (int32_t page : {1, 16}) {
    SCOPED_TRACE("page " + std::to_string(page));
    FakeWorkerOptions w;
    w.eos_one_in = 1000;
    Harness h(StormConfig(page), /*radix=*/true, w);
    Driver d(&h);
    EXPECT_DOUBLE_EQ(h.sched->new_token_ratio(), kInitRatio);
    int64_t retraction_steps = 0, decay_steps = 0, prefill_steps = 0, idle_steps = 0, jumps_up = 0;
    double max_ratio = 0, min_ratio = 1;
    RunStorm(&d, 1, 2000, [&](const StepObs& o) {
      max_ratio = std::max(max_ratio, o.ratio_after);
      min_ratio = std::min(min_ratio, o.ratio_after);
      if (o.decode && o.retracted > 0) {
        ++retraction_steps;
        int64_t out_sum = 0, max_sum = 0;
        for (uint64_t rid : o.got_token) {
          out_sum += d.OutputLen(rid) - 1;
          max_sum += d.request(rid).max_new;
        }
        const int64_t kept = static_cast<int64_t>(o.got_token.size());
        ASSERT_GT(kept, 0);
        const double want = std::min(
            1.0, static_cast<double>(out_sum + kRetractDecodeSteps * kept) / static_cast<double>(max_sum));
        ASSERT_DOUBLE_EQ(o.ratio_after, want) << "step " << d.steps() << ", " << kept << " kept";
        ASSERT_LE(o.ratio_after, 1.0);
        if (o.ratio_after > o.ratio_before) ++jumps_up;
      } else if (o.decode) {
        ++decay_steps;
        ASSERT_DOUBLE_EQ(o.ratio_after, std::max(o.ratio_before - kDecay, kMinRatio)) << "step " << d.steps();
      } else if (o.prefill) {
        ++prefill_steps;
        ASSERT_EQ(o.ratio_after, o.ratio_before) << "a prefill step leaves the ratio alone, step " << d.steps();
      } else {
        ++idle_steps;
        ASSERT_DOUBLE_EQ(o.ratio_after, kInitRatio) << "on_idle resets the ratio, step " << d.steps();
      }
    });
    ASSERT_FALSE(HasFailure());
    std::printf("  ratio page %d: %lld retraction steps (%lld raised the ratio), %lld decay steps, %lld prefill "
                "steps, %lld idle steps; ratio max %.4f min %.4f, after the burst %.4f\n",
                page, static_cast<long long>(retraction_steps), static_cast<long long>(jumps_up),
                static_cast<long long>(decay_steps), static_cast<long long>(prefill_steps),
                static_cast<long long>(idle_steps), max_ratio, min_ratio, h.sched->new_token_ratio());
    EXPECT_GE(retraction_steps, 5);
    EXPECT_GT(jumps_up, 0);
    EXPECT_GT(decay_steps, 0);
    // The burst ended in an idle step: the ratio is back to its initial value.
    EXPECT_DOUBLE_EQ(h.sched->new_token_ratio(), kInitRatio);
    d.ExpectReferenceOutputs();
    ExpectKvIdle(h);
  }
}

// Tokens per decode step over a run of steps (normal loop: one token per request of the batch).
struct PhaseFigures {
  int64_t steps = 0;
  int64_t decode_steps = 0;
  int64_t decode_tokens = 0;
  int64_t retractions = 0;
  size_t max_running = 0;
  void Add(const StepObs& o, size_t running) {
    ++steps;
    retractions += o.retracted;
    if (o.decode && !o.prefill) {
      ++decode_steps;
      decode_tokens += o.tokens;
    }
    max_running = std::max(max_running, running);
  }
  double per_decode_step() const {
    return decode_steps == 0 ? 0 : static_cast<double>(decode_tokens) / static_cast<double>(decode_steps);
  }
};

void PrintPhase(const char* name, const PhaseFigures& f) {
  std::printf("  %s: %lld steps, %lld decode steps, %.2f tokens per decode step, max running %zu, %lld retracted\n",
              name, static_cast<long long>(f.steps), static_cast<long long>(f.decode_steps), f.per_decode_step(),
              f.max_running, static_cast<long long>(f.retractions));
}

// Phases that each run to idle: A a load that fits, B the storm, C the same load as A.
TEST(RetractionStorm, ThroughputRecoversAfterTheBurst) {
  FakeWorkerOptions w;
  w.eos_one_in = 1000;
  Harness h(StormConfig(), /*radix=*/true, w);
  Driver d(&h);
  auto steady = [&](uint64_t first_rid) {
    for (uint64_t i = 0; i < 16; ++i) d.Submit(first_rid + i, Prompt(first_rid + i, 32), 64, /*ignore_eos=*/true);
  };
  PhaseFigures a, b, c;
  steady(100);
  d.RunToIdle([&](const StepObs& o) { a.Add(o, h.sched->num_running()); });
  double max_ratio = 0;
  RunStorm(&d, 1000, 3000, [&](const StepObs& o) {
    b.Add(o, h.sched->num_running());
    max_ratio = std::max(max_ratio, o.ratio_after);
  });
  const double ratio_after_burst = h.sched->new_token_ratio();
  steady(2000);
  d.RunToIdle([&](const StepObs& o) { c.Add(o, h.sched->num_running()); });
  ASSERT_FALSE(HasFailure());
  PrintPhase("phase A (16 x 64 tokens)", a);
  PrintPhase("phase B (burst)", b);
  PrintPhase("phase C (16 x 64 tokens)", c);
  std::printf("  ratio max during the burst %.4f, after it %.4f\n", max_ratio, ratio_after_burst);
  RecordProperty("tokens_per_decode_step_A", std::to_string(a.per_decode_step()));
  RecordProperty("tokens_per_decode_step_B", std::to_string(b.per_decode_step()));
  RecordProperty("tokens_per_decode_step_C", std::to_string(c.per_decode_step()));

  EXPECT_EQ(a.retractions, 0) << "phase A must fit";
  EXPECT_GE(b.retractions, 5);
  EXPECT_EQ(c.retractions, 0);
  EXPECT_EQ(a.max_running, 16u);
  EXPECT_EQ(c.max_running, a.max_running) << "no stuck small batches after the storm";
  EXPECT_GE(c.per_decode_step(), 0.9 * a.per_decode_step());
  EXPECT_LE(c.steps, a.steps + a.steps / 10);
  EXPECT_DOUBLE_EQ(ratio_after_burst, kInitRatio);
  d.ExpectReferenceOutputs();
  ExpectKvIdle(h);
}


// A closed-loop client: keeps `concurrency` requests outstanding, submitting a new one as soon as
// one finishes. Its requests end at EOS (mean ~32 tokens) but may run to 256, so how many of
// them admission lets run at once depends on new_token_ratio: about 8 at the initial 0.7, all
// 16 once it has decayed to its minimum.
class SteadyClient {
 public:
  SteadyClient(Driver* d, uint64_t first_rid, int concurrency) : d_(d), next_(first_rid), want_(concurrency) {}
  void Refill() {
    for (auto it = outstanding_.begin(); it != outstanding_.end();)
      it = d_->Finished(*it) ? outstanding_.erase(it) : it + 1;
    while (on_ && static_cast<int>(outstanding_.size()) < want_) {
      d_->Submit(next_, Prompt(next_, 32), 256, /*ignore_eos=*/false);
      outstanding_.push_back(next_++);
    }
  }
  void Stop() { on_ = false; }

 private:
  Driver* d_;
  uint64_t next_;
  int want_;
  bool on_ = true;
  std::vector<uint64_t> outstanding_;
};

// No idle step anywhere: the ratio is never reset, only decayed and set by retractions, as on
// a busy server. A: the steady load alone, measured once the ratio has decayed to its minimum.
// B: the burst joins it (a storm). C: the steady load alone again. Under the spec the ratio
// decays from the value the last retraction set to its minimum in (value - min) / decay decode
// steps, and from then on admission is what it was in A. A ratio that stays high, leaked or
// pinned KV, or a batch_is_full that is never cleared would all keep C's batches below A's.
TEST(RetractionStorm, ThroughputRecoversUnderContinuousLoad) {
  FakeWorkerOptions w;
  w.eos_one_in = 32;
  Harness h(StormConfig(), /*radix=*/true, w);
  Driver d(&h);
  SteadyClient client(&d, 1000000, 16);
  int64_t retraction_events = 0;
  int64_t decode_steps_since_retraction = 0;
  double ratio_set_by_last_retraction = 0;
  auto step = [&](PhaseFigures* f) {
    client.Refill();
    const StepObs o = d.Step();
    if (o.retracted > 0) {
      ++retraction_events;
      decode_steps_since_retraction = 0;
      ratio_set_by_last_retraction = o.ratio_after;
    } else if (o.decode) {
      ++decode_steps_since_retraction;
    }
    f->Add(o, h.sched->num_running());
    EXPECT_TRUE(o.prefill || o.decode) << "the server must never go idle here, step " << d.steps();
    return o;
  };
  constexpr int kWindow = 600;

  // A: warm up until the ratio reaches its minimum, then measure.
  PhaseFigures warmup, a, b, c_early, c;
  for (int i = 0; i < 3000 && h.sched->new_token_ratio() > kMinRatio; ++i) step(&warmup);
  ASSERT_DOUBLE_EQ(h.sched->new_token_ratio(), kMinRatio);
  for (int i = 0; i < kWindow; ++i) step(&a);

  // B: the burst, until its last request has finished.
  SubmitBurst(&d, 1, kStormRequests, 4000);
  double max_ratio = 0;
  auto burst_done = [&] {
    for (uint64_t rid = 1; rid <= kStormRequests; ++rid)
      if (!d.Finished(rid)) return false;
    return true;
  };
  for (int i = 0; i < 50000 && !burst_done(); ++i) max_ratio = std::max(max_ratio, step(&b).ratio_after);
  ASSERT_TRUE(burst_done());
  ASSERT_GT(b.retractions, 0);
  const double ratio_after_burst = h.sched->new_token_ratio();
  const int64_t decay_bound = static_cast<int64_t>((ratio_set_by_last_retraction - kMinRatio) / kDecay) + 1;

  // C: the same load. First the transient while the ratio decays back to its minimum (bounded
  // by the spec's decay), then a window measured like A's. Recovery: decode steps after the
  // last retraction until a 100-step run averages within 10% of A.
  int64_t recovered_after = -1;
  PhaseFigures run;
  auto track_recovery = [&](const StepObs& o) {
    run.Add(o, h.sched->num_running());
    if (run.steps < 100) return;
    if (recovered_after < 0 && run.per_decode_step() >= 0.9 * a.per_decode_step())
      recovered_after = decode_steps_since_retraction;
    run = PhaseFigures();
  };
  for (int i = 0; i < 3000 && h.sched->new_token_ratio() > kMinRatio; ++i) track_recovery(step(&c_early));
  ASSERT_DOUBLE_EQ(h.sched->new_token_ratio(), kMinRatio) << "the ratio never decayed back after the storm";
  EXPECT_LE(decode_steps_since_retraction, decay_bound);
  for (int i = 0; i < kWindow; ++i) track_recovery(step(&c));
  ASSERT_FALSE(HasFailure());
  client.Stop();
  d.RunToIdle();

  std::printf("  continuous load, pool %lld tokens:\n", static_cast<long long>(h.sched->config().max_total_tokens));
  PrintPhase("warm-up (ratio 0.7 -> min)", warmup);
  PrintPhase("phase A (16 clients)", a);
  PrintPhase("phase B (+ burst of 200)", b);
  PrintPhase("phase C, ratio decaying", c_early);
  PrintPhase("phase C (16 clients)", c);
  std::printf("  %lld retraction events; ratio max %.4f in the burst, %.4f set by the last retraction, %.4f when "
              "the burst ended; C within 10%% of A %lld decode steps after the last retraction (decay bound %lld)\n",
              static_cast<long long>(retraction_events), max_ratio, ratio_set_by_last_retraction, ratio_after_burst,
              static_cast<long long>(recovered_after), static_cast<long long>(decay_bound));
  RecordProperty("continuous_tokens_per_decode_step_A", std::to_string(a.per_decode_step()));
  RecordProperty("continuous_tokens_per_decode_step_B", std::to_string(b.per_decode_step()));
  RecordProperty("continuous_tokens_per_decode_step_C", std::to_string(c.per_decode_step()));
  RecordProperty("continuous_recovery_decode_steps", std::to_string(recovered_after));

  EXPECT_EQ(a.retractions, 0) << "phase A must fit";
  EXPECT_EQ(a.max_running, 16u);
  EXPECT_GE(retraction_events, 5) << "the burst must cause a storm";
  EXPECT_EQ(c.retractions, 0);
  EXPECT_EQ(c.max_running, a.max_running) << "no stuck small batches after the storm";
  EXPECT_GE(c.per_decode_step(), 0.9 * a.per_decode_step());
  EXPECT_LE(c.per_decode_step(), 1.1 * a.per_decode_step());
  ASSERT_GE(recovered_after, 0) << "throughput never came back after the storm";
  EXPECT_LE(recovered_after, decay_bound + 100) << "recovery takes at most the ratio's decay and one run";
  d.ExpectReferenceOutputs();
  ExpectKvIdle(h);
}

}  // namespace
}  // namespace radixserve::sched
