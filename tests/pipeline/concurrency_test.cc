// 64 concurrent requests in groups that share a long prompt prefix: every one completes with
// the requested number of tokens, the radix cache serves the shared prefixes, and greedy
// outputs do not depend on what else was in the batch.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/pipeline/http_client.h"
#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::pipeline_test {
namespace {

using nlohmann::json;

PipelineEnvironment* const g_env = RegisterPipeline({});

constexpr int kGroups = 4;
constexpr int kVariants = 4;      // distinct suffixes per group
constexpr int kCopies = 4;        // identical requests per prompt
constexpr int kMaxTokens = 24;

const char* const kPrefixes[kGroups] = {
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her "
    "friends. One day, she saw a big red ball under a tree. She ran to the ball and picked it up. It was very "
    "shiny and round. Lily was very happy and she wanted to show it to her mom.",
    "Tom and his dog Max went for a long walk in the forest. The sun was warm and the birds were singing in "
    "the trees. Max found a stick and brought it to Tom. Tom threw the stick far away and Max ran after it. "
    "They played for a long time until they were both very tired.",
    "There was a small boat on the blue sea. In the boat was a brave fish named Bob. Bob liked to swim fast "
    "and jump over the waves. One day, a big storm came and the waves were very high. Bob was scared, but "
    "he did not give up.",
    "Sara had a pretty doll with a pink dress. She took the doll everywhere she went. At school, she showed "
    "the doll to her teacher and her friends. Everyone said the doll was very nice. Sara smiled and hugged "
    "her doll tight.",
};
const char* const kSuffixes[kVariants] = {" Then", " After that, she said", " Suddenly, a", " The next day"};

std::string Prompt(int group, int variant) { return std::string(kPrefixes[group]) + kSuffixes[variant]; }

json Request(const std::string& prompt) {
  return {{"prompt", prompt}, {"max_tokens", kMaxTokens}, {"temperature", 0}, {"ignore_eos", true}};
}

TEST(Concurrency, SharedPrefixRequestsAllCompleteAndHitTheCache) {
  const int port = g_env->port();
  // Reference: each distinct prompt alone, one at a time.
  std::map<std::string, std::string> alone;
  for (int g = 0; g < kGroups; ++g) {
    for (int v = 0; v < kVariants; ++v) {
      HttpReply r = PostJson(port, "/v1/completions", Request(Prompt(g, v)));
      ASSERT_EQ(r.status, 200) << Describe(r);
      alone[Prompt(g, v)] = r.json["choices"][0]["text"];
    }
  }
  // An empty cache, so the concurrent requests must share prefixes among themselves.
  HttpReply flush = PostJson(port, "/flush_cache", json::object());
  ASSERT_EQ(flush.status, 200) << Describe(flush);
  json before = SchedulerStats(port);

  constexpr int kRequests = kGroups * kVariants * kCopies;
  static_assert(kRequests == 64);
  std::vector<HttpReply> replies(kRequests);
  std::vector<std::string> prompts(kRequests);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRequests; ++i) {
    prompts[i] = Prompt(i % kGroups, (i / kGroups) % kVariants);
    threads.emplace_back([&, i] { replies[i] = PostJson(port, "/v1/completions", Request(prompts[i])); });
  }
  for (auto& t : threads) t.join();

  std::map<std::string, std::string> first_text;
  for (int i = 0; i < kRequests; ++i) {
    const HttpReply& r = replies[i];
    ASSERT_EQ(r.status, 200) << "request " << i << ": " << Describe(r);
    ASSERT_EQ(r.json["choices"].size(), 1u);
    EXPECT_EQ(r.json["usage"]["completion_tokens"], kMaxTokens) << "request " << i;
    EXPECT_EQ(r.json["choices"][0]["finish_reason"], "length");
    std::string text = r.json["choices"][0]["text"];
    EXPECT_FALSE(text.empty());
    auto [it, inserted] = first_text.emplace(prompts[i], text);
    EXPECT_EQ(text, it->second) << "identical greedy requests differ (request " << i << ")";
    EXPECT_EQ(text, alone[prompts[i]]) << "greedy output changed when batched (request " << i << ")";
  }

  json after = SchedulerStats(port);
  EXPECT_GT(after["cached_prompt_tokens"].get<int64_t>(), before["cached_prompt_tokens"].get<int64_t>())
      << after.dump();
  // /metrics refreshes scheduler figures at most once a second: poll (a failure guard only).
  std::string metrics;
  bool hit = WaitFor(
      [&] {
        HttpReply m = Get(port, "/metrics");
        metrics = m.body;
        return m.status == 200 && MetricValue(metrics, "radixserve_cache_hit_rate") > 0;
      },
      std::chrono::seconds(10));
  EXPECT_TRUE(hit) << metrics;
  EXPECT_GT(MetricValue(metrics, "radixserve_cached_tokens_total"), 0) << metrics;
  EXPECT_EQ(MetricValue(metrics, "radixserve_requests_in_flight"), 0) << metrics;
}

}  // namespace
}  // namespace radixserve::pipeline_test
