// Soak: rounds of mixed requests above capacity (streaming and not, clients that hang up mid-stream,
// requests refused by a small queue limit). After every round each request is accounted for
// (completed, refused with 503, or ended by its own client), the scheduler is idle with every KV
// slot and request row back, the pipeline's shared-memory segment holds as many chunks as when idle before the first
// round (one kept per publisher, see PoolsBackTo), the worker holds no state of a finished request,
// and the node processes' memory does not keep growing. Bounded by RADIXSERVE_SOAK_ROUNDS (default 4: seconds) or, for long runs,
// RADIXSERVE_SOAK_SECONDS (rounds until that much time has passed; bench/soak.sh). Pool figures
// come from `radixserve shm` run as a child: this process never registers with RouDi, which
// signals its registered processes when it stops.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/pipeline/http_client.h"
#include "tests/pipeline/pipeline_fixture.h"
#include "transport/mempool_usage.h"
#include "transport/roudi_process.h"

namespace radixserve::pipeline_test {
namespace {

using nlohmann::json;

PipelineOptions Options() {
  PipelineOptions o;
  o.kv_slots = 4096;
  o.api_params = {"max_queued_requests:=48"};  // below the offered load: some requests get 503
  return o;
}
PipelineEnvironment* const g_env = RegisterPipeline(Options());

int64_t Int(const json& s, const char* key) { return s.contains(key) && s[key].is_number() ? s[key].get<int64_t>() : -1; }

bool Idle(const json& s) {
  return Int(s, "req_slots_available") == Int(s, "req_slots_total") && Int(s, "req_slots_total") > 0 &&
         Int(s, "num_running_reqs") == 0 && Int(s, "num_queue_reqs") == 0 && Int(s, "kv_protected") == 0 &&
         Int(s, "kv_available") + Int(s, "kv_evictable") == Int(s, "kv_total") && Int(s, "kv_total") > 0;
}

// Resident set size of a process in KiB (0 when unknown).
long RssKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return 0;
}

// Runs `radixserve shm ARGS...` (it exits within its own 5 s limit); its output, or why it failed.
Result<std::string> RunShm(const std::vector<std::string>& args) {
  const std::string log = g_env->pipeline().dir() + "/shm.log";
  std::vector<std::string> argv = {RadixserveBinary(), "shm", "--timeout", "5"};
  argv.insert(argv.end(), args.begin(), args.end());
  RS_ASSIGN_OR_RETURN(pid_t pid, Spawn(argv, log));
  int st = 0;
  bool exited = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!(exited = ::waitpid(pid, &st, WNOHANG) == pid) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (!exited) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, &st, 0);
    return Status::Unavailable("radixserve shm did not exit within 20 s: " + ReadFile(log));
  }
  std::string out = ReadFile(log);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return Status::Unavailable("radixserve shm failed: " + out);
  return out;
}

// RouDi's pools as `radixserve shm --json` reports them.
Result<transport::MemPoolUsage> ReadPools() {
  RS_ASSIGN_OR_RETURN(std::string out, RunShm({"--json"}));
  std::string json;  // the one JSON line; anything else in the log is a diagnostic
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("{", 0) == 0) json = line;
  return transport::MemPoolUsageFromJson(json);
}

// "seg 1: 1024 B 12/4096 (min free 4000), ..." for every pool of every segment.
std::string DescribePools(const transport::MemPoolUsage& u) {
  std::string out;
  for (const auto& s : u.segments) {
    out += (out.empty() ? "seg " : " | seg ") + std::to_string(s.id) + ":";
    for (size_t i = 0; i < s.pools.size(); ++i) {
      const auto& p = s.pools[i];
      out += (i ? ", " : " ") + std::to_string(p.chunk_payload_size) + " B " + std::to_string(p.used) + "/" +
             std::to_string(p.chunks) + " (min free " + std::to_string(p.min_free) + ")";
    }
  }
  return out;
}

std::string Join(const std::vector<uint32_t>& v) {
  std::string out;
  for (uint32_t x : v) {
    if (!out.empty()) out += ' ';
    out += std::to_string(x);
  }
  return out;
}

// Used chunks of the pipeline's segments, pool by pool. RouDi's own segment (id 0) is left out: it
// holds introspection samples, which the reading tool itself takes.
std::vector<uint32_t> PipelineUsed(const transport::MemPoolUsage& u) {
  std::vector<uint32_t> used;
  for (const auto& s : u.segments)
    if (s.id != 0)
      for (const auto& p : s.pools) used.push_back(p.used);
  return used;
}

uint64_t Sum(const std::vector<uint32_t>& v) {
  uint64_t total = 0;
  for (uint32_t x : v) total += x;
  return total;
}

// Reads the pools until the pipeline holds `idle` chunks in all (RouDi reports about once a second)
// or `timeout` passes; the last reading in *last. The total, not each pool: an iceoryx publisher
// keeps its last chunk and reuses it for the next message that fits, so a quiet pipeline holds
// exactly one chunk per publisher that ever sent, but which pool each comes from depends on the
// sizes and timing of the last messages (a 16 KiB chunk kept from a large batch carries small ones).
bool PoolsBackTo(uint64_t idle, transport::MemPoolUsage* last, std::string* error,
                 std::chrono::seconds timeout = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto u = ReadPools();
    if (u.ok()) {
      *last = *u;
      if (Sum(PipelineUsed(*u)) == idle) return true;
    } else {
      *error = u.status().ToString();
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

// Ends a measurement point: the scheduler idle, one small request, idle again. Before the first
// round this makes every publisher of the pipeline send once (the idle count is one kept chunk per
// publisher); after a round it checks that the pipeline still serves.
void Settle(int port, const char* when) {
  json stats;
  ASSERT_TRUE(WaitFor([&] { return Idle(stats = SchedulerStats(port)); }, std::chrono::seconds(30)))
      << when << ": not idle: " << stats.dump();
  HttpReply r = PostJson(port, "/v1/completions",
                         {{"prompt", "Settle"}, {"max_tokens", 4}, {"temperature", 0}, {"ignore_eos", true}});
  ASSERT_EQ(r.status, 200) << when << ": " << Describe(r);
  ASSERT_TRUE(WaitFor([&] { return Idle(stats = SchedulerStats(port)); }, std::chrono::seconds(30)))
      << when << ": not idle after the settling request: " << stats.dump();
  // The worker holds at most the settling request's sampling state (its release may ride on the
  // next batch): every earlier request's state was released, aborted and hung-up ones included.
  const int64_t states = Int(stats, "worker_request_states");
  EXPECT_TRUE(states == 0 || states == 1) << when << ": " << stats.dump();
  // The scheduler's mirror of it (which requests the worker has seen) is bounded the same way.
  const int64_t known = Int(stats, "worker_known_requests");
  EXPECT_TRUE(known == 0 || known == 1) << when << ": " << stats.dump();
}

// Environment numbers: RADIXSERVE_SOAK_ROUNDS, RADIXSERVE_SOAK_SECONDS (0 when unset).
int EnvInt(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : 0;
}

struct Tally {
  std::atomic<int> completed{0}, refused{0}, hung_up{0}, other{0};
};

void OneRequest(int port, int i, Tally* t) {
  const std::string prompt = "Round robin prompt " + std::to_string(i % 7) + " about a small dog and a ball";
  json body = {{"prompt", prompt}, {"max_tokens", 24 + (i % 5) * 8}, {"temperature", 0}, {"ignore_eos", true}};
  switch (i % 3) {
    case 0: {  // plain request
      HttpReply r = PostJson(port, "/v1/completions", body);
      if (r.status == 200 && r.json["choices"][0]["finish_reason"] == "length") ++t->completed;
      else if (r.status == 503) ++t->refused;
      else ++t->other;
      break;
    }
    case 1: {  // streamed to the end
      body["stream"] = true;
      HttpReply r = PostStream(port, "/v1/completions", body, [](std::string_view) { return true; });
      bool done = false;
      ParseSse(r.body, &done);
      if (r.status == 200 && done) ++t->completed;
      else if (r.status == 503) ++t->refused;
      else ++t->other;
      break;
    }
    default: {  // streamed, then the client hangs up after the first chunk
      body["stream"] = true;
      body["max_tokens"] = 400;
      HttpReply r = PostStream(port, "/v1/completions", body, [](std::string_view) { return false; });
      if (r.status == 503) ++t->refused;
      else ++t->hung_up;
      break;
    }
  }
}

TEST(Soak, EveryRequestIsAccountedForAndResourcesReturnToIdle) {
  using Clock = std::chrono::steady_clock;
  const int port = g_env->port();
  // A duration bound (long runs) takes over from the round count, which then only caps it.
  const int seconds = EnvInt("RADIXSERVE_SOAK_SECONDS");
  const int max_rounds = EnvInt("RADIXSERVE_SOAK_ROUNDS");
  const int rounds = max_rounds > 0 ? max_rounds : (seconds > 0 ? 1 << 30 : 4);
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  constexpr int kPerRound = 96, kClients = 64;  // 64 at once against a queue limit of 48

  // Idle pool usage: the pipeline settled; a reading equal to the one before is the idle one.
  ASSERT_NO_FATAL_FAILURE(Settle(port, "before the first round"));
  std::vector<uint32_t> idle;
  transport::MemPoolUsage before;
  std::string error;
  for (int i = 0; i < 20; ++i) {
    auto u = ReadPools();
    ASSERT_TRUE(u.ok()) << u.status().ToString();
    if (!idle.empty() && PipelineUsed(*u) == idle) break;
    idle = PipelineUsed(*u);
    before = *u;
  }
  const uint64_t idle_total = Sum(idle);
  // The pipeline's segment holds the pools `radixserve roudi` configured.
  ASSERT_GE(before.segments.size(), 2u) << DescribePools(before);
  std::vector<uint32_t> sizes;
  for (const auto& p : before.segments.back().pools) sizes.push_back(p.chunk_payload_size);
  std::vector<uint32_t> configured;
  for (const auto& p : transport::PipelineRouDiConfig(4u << 20).pools) configured.push_back(p.size);
  EXPECT_EQ(sizes, configured) << DescribePools(before);
  std::printf("pools before: used %s (total %llu): %s\n", Join(idle).c_str(),
              static_cast<unsigned long long>(idle_total), DescribePools(before).c_str());
  // The table for people shows the same segments.
  auto table = RunShm({});
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_NE(table->find("segment 0 (RouDi's own)"), std::string::npos) << *table;
  EXPECT_NE(table->find("segment 1: writer group"), std::string::npos) << *table;
  EXPECT_NE(table->find("        1024       4096 "), std::string::npos) << *table;

  std::vector<long> rss;
  for (int round = 0; round < rounds && (round == 0 || seconds <= 0 || Clock::now() < end); ++round) {
    Tally t;
    std::atomic<int> next{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c)
      clients.emplace_back([&] {
        for (int i; (i = next.fetch_add(1)) < kPerRound;) OneRequest(port, round * kPerRound + i, &t);
      });
    for (auto& c : clients) c.join();
    EXPECT_EQ(t.completed + t.refused + t.hung_up, kPerRound) << "other outcomes: " << t.other.load();
    EXPECT_EQ(t.other.load(), 0);
    EXPECT_GT(t.completed.load(), 0);
    ASSERT_NO_FATAL_FAILURE(Settle(port, ("round " + std::to_string(round)).c_str()));
    transport::MemPoolUsage after;
    bool pools_idle = PoolsBackTo(idle_total, &after, &error);
    long total = 0;
    std::string per_node;
    for (const char* n : {"api", "scheduler", "worker", "detokenizer"}) {
      long kib = RssKib(g_env->pipeline().pid(n));
      total += kib;
      per_node += std::string(per_node.empty() ? "" : ", ") + n + " " + std::to_string(kib);
    }
    rss.push_back(total);
    std::printf("round %d: requests %d, completed %d, refused %d, hung up %d, other %d, node RSS %ld KiB (%s), "
                "pools used %s (total %llu): %s\n",
                round, kPerRound, t.completed.load(), t.refused.load(), t.hung_up.load(), t.other.load(), total,
                per_node.c_str(),
                Join(PipelineUsed(after)).c_str(), static_cast<unsigned long long>(Sum(PipelineUsed(after))),
                DescribePools(after).c_str());
    std::fflush(stdout);
    ASSERT_TRUE(pools_idle) << "round " << round << ": " << Sum(PipelineUsed(after))
                            << " shared-memory chunks in use (per pool " << Join(PipelineUsed(after)) << ") against "
                            << idle_total << " before the first round (per pool " << Join(idle) << ") " << error;
  }
  // After the first rounds warm every cache and pool, memory must not keep growing.
  if (rss.size() >= 3) {
    EXPECT_LE(rss.back(), rss[1] + 16 * 1024) << "node RSS grew across rounds";
  }
  HttpReply ok = PostJson(port, "/v1/completions", {{"prompt", "Hello"}, {"max_tokens", 4}, {"temperature", 0}});
  EXPECT_EQ(ok.status, 200) << Describe(ok);
}

}  // namespace
}  // namespace radixserve::pipeline_test
