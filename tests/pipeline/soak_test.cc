// Soak: rounds of mixed requests above capacity (streaming and not, clients that hang up mid-stream,
// requests refused by a small queue limit). After every round each request is accounted for
// (completed, refused with 503, or ended by its own client), the scheduler is idle with every KV
// slot back, and the node processes' memory does not keep growing. Bounded by RADIXSERVE_SOAK_ROUNDS
// (default 4, about a minute); set it higher for a long run.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "tests/pipeline/http_client.h"
#include "tests/pipeline/pipeline_fixture.h"

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
  return Int(s, "num_running_reqs") == 0 && Int(s, "num_queue_reqs") == 0 && Int(s, "kv_protected") == 0 &&
         Int(s, "kv_available") + Int(s, "kv_evictable") == Int(s, "kv_total") && Int(s, "kv_total") > 0;
}

// Resident set size of a process in KiB (0 when unknown).
long RssKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return 0;
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
  const int port = g_env->port();
  const int rounds = std::getenv("RADIXSERVE_SOAK_ROUNDS") ? std::atoi(std::getenv("RADIXSERVE_SOAK_ROUNDS")) : 4;
  constexpr int kPerRound = 96, kClients = 64;  // 64 at once against a queue limit of 48
  std::vector<long> rss;
  for (int round = 0; round < rounds; ++round) {
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
    json stats;
    ASSERT_TRUE(WaitFor([&] { return Idle(stats = SchedulerStats(port)); }, std::chrono::seconds(30)))
        << "round " << round << ": not idle: " << stats.dump();
    long total = 0;
    for (const char* n : {"api", "scheduler", "worker", "detokenizer"}) total += RssKib(g_env->pipeline().pid(n));
    rss.push_back(total);
    std::printf("round %d: completed %d, refused %d, hung up %d, node RSS %ld KiB\n", round, t.completed.load(),
                t.refused.load(), t.hung_up.load(), total);
  }
  // After the first rounds warm every cache and pool, memory must not keep growing.
  if (rss.size() >= 3) EXPECT_LE(rss.back(), rss[1] + 16 * 1024) << "node RSS grew across rounds";
  HttpReply ok = PostJson(port, "/v1/completions", {{"prompt", "Hello"}, {"max_tokens", 4}, {"temperature", 0}});
  EXPECT_EQ(ok.status, 200) << Describe(ok);
}

}  // namespace
}  // namespace radixserve::pipeline_test
