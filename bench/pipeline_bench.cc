// pipeline_bench: what splitting the engine into processes costs.
//
//   pipeline_bench [--model PATH] [--threads N] [--quick]
//
// 1. Hop latency per topic (publish → take, p50/p99/max). A probe publisher process and a
//    probe subscriber process exchange messages of each hot-path topic's size (as laid out
//    for a 32-sequence batch) on "bench/probe_<topic>", 1000 per second per topic on all five
//    topics at once; the publisher stamps CLOCK_MONOTONIC into each message right before
//    Publish, the subscriber (blocked in a Waiter, as the nodes are) reads the clock when it
//    takes it. Measured with the pipeline idle and again while it decodes 32 sequences.
// 2. Decode-step time, in process (Scheduler + ModelWorker, the overlap loop the scheduler
//    node runs) vs. the four-process pipeline, at 1 and 32 sequences. Each is timed for
//    requests of M1 and M2 new tokens (ignore_eos); (T(M2) - T(M1)) / (M2 - M1) is the time
//    of one decode step, free of prefill, HTTP and start-up costs. Median of several runs.
//
// Probes and the pipeline need a RouDi: the bench starts its own (waiting for any other to
// finish) through the pipeline test fixture, so run it when no other RouDi is needed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/gguf/gguf_reader.h"
#include "core/scheduler/plugin_host.h"
#include "core/scheduler/scheduler.h"
#include "core/scheduler/step_driver.h"
#include "core/worker/model_worker.h"
#include "tests/pipeline/http_client.h"
#include "tests/pipeline/pipeline_fixture.h"
#include "transport/channel.h"
#include "transport/message_layout.h"
#include "transport/messages.h"

namespace radixserve::bench {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using pipeline_test::Pipeline;
using pipeline_test::PipelineOptions;

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// ---- 1. hop latency ---------------------------------------------------------------------

struct Probe {
  static constexpr transport::MessageKind kKind = transport::MessageKind::kTest;
  static constexpr uint16_t kLayoutVersion = 1;
  transport::MessageHeader header;
  uint64_t seq;
  int64_t send_ns;
  transport::ArrayRef pad;  // uint8: makes the message as large as the topic's real one
};

struct ProbeTopic {
  const char* name;
  size_t bytes;
};

std::vector<ProbeTopic> ProbeTopics() {
  using namespace transport;
  constexpr size_t n = 32;  // sequences in the batch
  return {
      {"requests", TokenizedRequestMsg::Bytes({.input_ids = 64})},
      {"forward_batch", ForwardBatchMsg::Bytes({.reqs = n, .tokens = n})},
      {"forward_result", ForwardResultMsg::Bytes({.reqs = n, .logprobs = n})},
      {"token_id_out", BatchTokenIdOutMsg::Bytes({.entries = n, .ids = n, .out_ids = n})},
      {"str_out", BatchStrOutMsg::Bytes({.entries = n, .ids = n, .text_bytes = n * 8})},
  };
}

constexpr auto kProbePeriod = std::chrono::microseconds(1000);

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "probe: %s\n", why.c_str());
  std::exit(1);
}

// Child: one publishing thread per topic, `count` messages each at kProbePeriod.
[[noreturn]] void RunProbePublisher(int count, int start_fd) {
  if (Status s = transport::InitRuntime("bench_probe_pub_" + std::to_string(::getpid())); !s.ok()) Die(s.ToString());
  char go;
  if (::read(start_fd, &go, 1) != 1) Die("no start signal");
  std::vector<std::thread> threads;
  for (const ProbeTopic& t : ProbeTopics()) {
    threads.emplace_back([t, count] {
      auto pub = transport::Publisher::Create({"bench", std::string("probe_") + t.name}, {});
      if (!pub.ok()) Die(pub.status().ToString());
      auto deadline = Clock::now() + std::chrono::seconds(20);
      while (!(*pub)->HasSubscribers() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      auto next = Clock::now();
      for (int i = 0; i < count; ++i) {
        next += kProbePeriod;
        std::this_thread::sleep_until(next);
        auto chunk = (*pub)->Loan(t.bytes);
        if (!chunk.ok()) Die(chunk.status().ToString());
        transport::MessageWriter<Probe> w(*chunk, t.bytes);
        w.Append<uint8_t>(w.msg()->pad, t.bytes - transport::AlignUp(sizeof(Probe)));
        w.msg()->seq = static_cast<uint64_t>(i);
        w.msg()->send_ns = NowNs();
        (*pub)->Publish(*chunk);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    });
  }
  for (auto& t : threads) t.join();
  std::exit(0);
}

// Child: one subscriber thread per topic, blocked in a Waiter; prints the latency table.
[[noreturn]] void RunProbeSubscriber(int count, const std::string& label) {
  if (Status s = transport::InitRuntime("bench_probe_sub_" + std::to_string(::getpid())); !s.ok()) Die(s.ToString());
  auto topics = ProbeTopics();
  std::vector<std::vector<double>> lat(topics.size());
  std::vector<std::thread> threads;
  for (size_t k = 0; k < topics.size(); ++k) {
    threads.emplace_back([&, k] {
      transport::ChannelOptions o;
      auto sub = transport::Subscriber::Create({"bench", std::string("probe_") + topics[k].name}, o);
      auto waiter = transport::Waiter::Create();
      if (!sub.ok() || !waiter.ok() || !(*waiter)->Attach(**sub).ok()) Die("cannot subscribe");
      lat[k].reserve(count);
      auto deadline = Clock::now() + std::chrono::seconds(60);
      while (static_cast<int>(lat[k].size()) < count && Clock::now() < deadline) {
        (*waiter)->Wait(std::chrono::milliseconds(100));
        while (transport::Received r = (*sub)->TryTake()) {
          int64_t now = NowNs();
          if (!transport::ValidateHeader<Probe>(r.data(), r.size()).ok()) continue;
          const auto* p = static_cast<const Probe*>(r.data());
          lat[k].push_back(double(now - p->send_ns) / 1000.0);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  std::printf("hop latency, publish -> take (us), %d msgs/topic at %lld/s each, all topics at once, %s:\n", count,
              static_cast<long long>(1000000 / kProbePeriod.count()), label.c_str());
  std::printf("  %-15s %8s %8s %8s %8s %8s\n", "topic", "bytes", "p50", "p99", "max", "n");
  for (size_t k = 0; k < topics.size(); ++k) {
    auto& v = lat[k];
    std::sort(v.begin(), v.end());
    auto pct = [&v](double q) { return v.empty() ? 0.0 : v[std::min(v.size() - 1, size_t(q * v.size()))]; };
    std::printf("  %-15s %8zu %8.1f %8.1f %8.1f %8zu\n", topics[k].name, topics[k].bytes, pct(0.50), pct(0.99),
                v.empty() ? 0.0 : v.back(), v.size());
  }
  std::fflush(stdout);
  std::exit(0);
}

// Runs one probe round in two child processes (the bench process itself stays out of
// iceoryx: RouDi signals every process still registered when it shuts down).
// With load_port > 0, 32 sequences decode in the pipeline meanwhile (started after the fork).
void MeasureHops(int count, const std::string& label, int load_port);

// Keeps `n` greedy ignore_eos requests running until stopped (load for the probes).
class DecodeLoad {
 public:
  DecodeLoad(int port, int n, int tokens) {
    for (int i = 0; i < n; ++i)
      threads_.emplace_back([this, port, i, tokens] {
        while (!stop_.load()) {
          std::vector<int32_t> ids = {1};
          for (int k = 0; k < 16; ++k) ids.push_back(100 + (i * 16 + k) % 300);
          pipeline_test::PostJson(port, "/generate",
                                  {{"input_ids", ids},
                                   {"sampling_params", {{"temperature", 0}, {"max_new_tokens", tokens}, {"ignore_eos", true}}}});
        }
      });
  }
  ~DecodeLoad() {
    stop_.store(true);
    for (auto& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

void MeasureHops(int count, const std::string& label, int load_port) {
  int fds[2];
  if (::pipe(fds) != 0) return;
  std::fflush(nullptr);
  pid_t sub = ::fork();
  if (sub == 0) RunProbeSubscriber(count, label);
  pid_t pub = ::fork();
  if (pub == 0) RunProbePublisher(count, fds[0]);
  std::unique_ptr<DecodeLoad> load;
  if (load_port > 0) load = std::make_unique<DecodeLoad>(load_port, 32, 64);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  if (::write(fds[1], "g", 1) != 1) std::fprintf(stderr, "cannot start the probe\n");
  int st = 0;
  ::waitpid(pub, &st, 0);
  ::waitpid(sub, &st, 0);
  load.reset();
  ::close(fds[0]);
  ::close(fds[1]);
}

// ---- 2. decode-step time -----------------------------------------------------------------

// The prompt of every request: n copies of one prompt all arrive at once in both modes (an n > 1
// request fans out in the api node in one go), so every decode step runs all n sequences.
std::vector<int32_t> Prompt() {
  std::vector<int32_t> ids = {1};
  for (int k = 0; k < 16; ++k) ids.push_back(100 + k * 11);
  return ids;
}

// Seconds to run `n` requests of `tokens` new tokens each in this process.
Result<double> InProcessRun(const std::shared_ptr<model::LlamaModel>& model, int32_t context, int n, int tokens) {
  sched::SchedulerConfig c;  // the served defaults, as the scheduler node runs them
  c.max_req_len = context;
  RS_ASSIGN_OR_RETURN(auto worker,
                      ModelWorker::Create(model, WorkerShape::For(c.max_total_tokens, c.max_running_requests, context)));
  sched::PluginHost host(sched::PluginHost::DefaultDirs());
  RS_ASSIGN_OR_RETURN(sched::CachePtr cache, host.CreateCache("radix"));
  RS_ASSIGN_OR_RETURN(sched::PolicyPtr policy, host.CreatePolicy("lpm"));
  int64_t produced = 0;
  sched::Scheduler s(c, std::move(cache), std::move(policy), [&](const sched::BatchTokenIdOut& out) {
    for (const auto& o : out.outputs) produced += static_cast<int64_t>(o.output_ids.size());
  });
  sched::StepDriver driver(&s, worker.get());
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    sched::TokenizedRequest g;
    g.rid = static_cast<uint64_t>(i + 1);
    g.input_ids = Prompt();
    g.spec.sampling.temperature = 0;
    g.spec.sampling.max_new_tokens = tokens;
    g.spec.sampling.ignore_eos = true;
    s.Submit(std::move(g));
  }
  RS_RETURN_IF_ERROR(driver.RunUntilIdle());
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (produced != int64_t(n) * tokens)
    return Status::Internal("in-process run produced " + std::to_string(produced) + " tokens");
  return secs;
}

// Seconds to run n sequences of `tokens` new tokens each through the pipeline: /generate requests
// of up to 16 choices (the api's limit for n), sent at once.
Result<double> PipelineRun(int port, int n, int tokens) {
  constexpr int kMaxN = 16;
  std::vector<int> sizes;
  for (int left = n; left > 0; left -= kMaxN) sizes.push_back(std::min(left, kMaxN));
  std::vector<pipeline_test::HttpReply> replies(sizes.size());
  std::vector<std::thread> threads;
  auto t0 = Clock::now();
  for (size_t i = 0; i < sizes.size(); ++i)
    threads.emplace_back([&, i] {
      replies[i] = pipeline_test::PostJson(
          port, "/generate",
          {{"input_ids", Prompt()},
           {"sampling_params", {{"temperature", 0}, {"max_new_tokens", tokens}, {"ignore_eos", true}, {"n", sizes[i]}}}});
    });
  for (auto& t : threads) t.join();
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  int64_t produced = 0;
  for (const auto& r : replies) {
    if (r.status != 200) return Status::Internal("pipeline request failed: " + pipeline_test::Describe(r));
    json choices = r.json.is_array() ? r.json : json::array({r.json});
    for (const auto& c : choices) produced += c["meta_info"]["completion_tokens"].get<int64_t>();
  }
  if (produced != int64_t(n) * tokens) return Status::Internal("pipeline produced " + std::to_string(produced) + " tokens");
  return secs;
}

struct StepMs {
  double median = 0;
  double min = 0;
};

template <typename Run>
Result<StepMs> MeasureStep(Run run, int n, int m1, int m2, int repeats) {
  RS_RETURN_IF_ERROR(run(n, m1).status());  // warm-up
  std::vector<double> steps;
  for (int r = 0; r < repeats; ++r) {
    RS_ASSIGN_OR_RETURN(double a, run(n, m1));
    RS_ASSIGN_OR_RETURN(double b, run(n, m2));
    steps.push_back((b - a) / (m2 - m1) * 1000.0);
  }
  return StepMs{Median(steps), *std::min_element(steps.begin(), steps.end())};
}

int Main(int argc, char** argv) {
  std::string model_path;
  bool quick = false;
  int threads = 2;  // the worker node's default
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--model" && i + 1 < argc) model_path = argv[++i];
    else if (a == "--quick") quick = true;
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: pipeline_bench [--model PATH] [--threads N] [--quick]\n");
      return 2;
    }
  }
  std::string generated;
  if (model_path.empty()) {  // the reference "small" model (dim 256, 4 layers, vocab 32000)
    generated = (std::filesystem::temp_directory_path() / ("pipeline_bench_" + std::to_string(::getpid()) + ".gguf")).string();
    std::string cmd = pipeline_test::RadixserveBinary() + " gen-model --size small -o " + generated + " > /dev/null";
    if (std::system(cmd.c_str()) != 0) {
      std::fprintf(stderr, "cannot generate a model: %s\n", cmd.c_str());
      return 1;
    }
    model_path = generated;
  }
  auto cleanup = [&] {
    if (!generated.empty()) std::filesystem::remove(generated);
  };

  auto file = gguf::GgufFile::Open(model_path);
  if (!file.ok()) return std::fprintf(stderr, "%s\n", file.status().ToString().c_str()), cleanup(), 1;
  std::shared_ptr<const gguf::GgufFile> shared(std::move(*file));
  model::ModelOptions mo;
  mo.num_threads = threads;
  auto loaded = model::LlamaModel::Load(shared, mo);
  if (!loaded.ok()) return std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str()), cleanup(), 1;
  std::shared_ptr<model::LlamaModel> model(std::move(*loaded));
  const int32_t context = model->config().context_length;
  std::printf("model %s (context %d), %d compute threads, %u hardware threads\n\n", model_path.c_str(), context,
              threads, std::thread::hardware_concurrency());

  PipelineOptions po;
  po.model = model_path;
  po.kv_slots = 16384;
  po.worker_params = {"threads:=" + std::to_string(threads)};
  Pipeline pipeline(po);
  if (Status s = pipeline.Start(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    cleanup();
    return 1;
  }
  const int port = pipeline.port();

  const int probe_count = quick ? 1000 : 3000;
  MeasureHops(probe_count, "pipeline idle", 0);
  MeasureHops(probe_count, "pipeline decoding 32 sequences", port);
  std::printf("\n");

  const int m1 = 16, m2 = quick ? 48 : 112, repeats = quick ? 1 : 5;
  std::printf("decode step (ms) = (T(%d tokens) - T(%d tokens)) / %d, over %d runs:\n", m2, m1, m2 - m1, repeats);
  std::printf("  %-10s %14s %14s %10s %14s %14s %10s\n", "sequences", "in-proc median", "pipe median", "overhead",
              "in-proc min", "pipe min", "overhead");
  for (int n : {1, 32}) {
    auto in = MeasureStep([&](int k, int t) { return InProcessRun(model, context, k, t); }, n, m1, m2, repeats);
    auto out = MeasureStep([&](int k, int t) { return PipelineRun(port, k, t); }, n, m1, m2, repeats);
    if (!in.ok() || !out.ok()) {
      std::fprintf(stderr, "%s %s\n", in.status().ToString().c_str(), out.status().ToString().c_str());
      break;
    }
    std::printf("  %-10d %14.3f %14.3f %9.1f%% %14.3f %14.3f %9.1f%%\n", n, in->median, out->median,
                (out->median / in->median - 1.0) * 100.0, in->min, out->min, (out->min / in->min - 1.0) * 100.0);
    // The scheduler node's own view of its recent steps, when it reports one: the step period, the
    // worker's idle gap between a result and the next batch, and that gap's share of the period.
    json st = pipeline_test::SchedulerStats(port);
    auto num = [&st](const char* k) { return st.contains(k) && st[k].is_number() ? st[k].get<double>() : -1.0; };
    if (num("step_us_p50") >= 0)
      std::printf("  %-10s scheduler node, recent steps: period p50 %.3f ms, worker idle gap p50 %.1f us, "
                  "gap share p50 %.2f%% p90 %.2f%%\n", "", num("step_us_p50") / 1000.0, num("scheduler_gap_us_p50"),
                  num("scheduler_overhead_p50") * 100.0, num("scheduler_overhead_p90") * 100.0);
    std::fflush(stdout);
  }
  std::string report = pipeline.Stop();
  if (!report.empty()) std::fprintf(stderr, "%s", report.c_str());
  cleanup();
  return 0;
}

}  // namespace
}  // namespace radixserve::bench

int main(int argc, char** argv) { return radixserve::bench::Main(argc, argv); }
