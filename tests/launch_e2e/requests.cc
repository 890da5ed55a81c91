#include "tests/launch_e2e/requests.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <thread>

#include "tests/pipeline/pipeline_fixture.h"

namespace radixserve::launch_test {

using nlohmann::json;
using pipeline_test::HttpReply;

namespace {

json Body(const std::string& prompt, int max_tokens, bool stream) {
  json b = {{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}, {"ignore_eos", true},
            {"stream", stream}};
  if (stream) b["stream_options"] = {{"include_usage", true}};
  return b;
}

std::string ErrorMessage(const json& j) {
  if (j.is_object() && j.contains("error")) {
    const json& e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
    return e.dump();
  }
  return "";
}

}  // namespace

CompletionResult Complete(int port, const std::string& prompt, int max_tokens) {
  HttpReply r = pipeline_test::PostJson(port, "/v1/completions", Body(prompt, max_tokens, false));
  CompletionResult out;
  out.status = r.status;
  out.raw = r.body;
  if (r.status < 0) {
    out.error = r.error;
    return out;
  }
  out.error = ErrorMessage(r.json);
  if (r.status == 200 && r.json.is_object() && r.json.contains("choices") && !r.json["choices"].empty()) {
    const json& c = r.json["choices"][0];
    out.text = c.value("text", "");
    if (c.contains("finish_reason") && c["finish_reason"].is_string()) out.finish_reason = c["finish_reason"];
    if (r.json.contains("usage") && r.json["usage"].is_object())
      out.completion_tokens = r.json["usage"].value("completion_tokens", -1);
  }
  return out;
}

CompletionResult StreamComplete(int port, const std::string& prompt, int max_tokens,
                                const std::function<bool(std::string_view)>& on_data) {
  HttpReply r = pipeline_test::PostStream(port, "/v1/completions", Body(prompt, max_tokens, true),
                                          [&](std::string_view d) { return on_data ? on_data(d) : true; });
  CompletionResult out;
  out.status = r.status;
  out.raw = r.body;
  if (!r.error.empty()) out.error = r.error;
  if (r.status != 200) {
    if (out.error.empty()) out.error = ErrorMessage(r.json);
    return out;
  }
  for (const json& e : pipeline_test::ParseSse(r.body, &out.done)) {
    if (std::string m = ErrorMessage(e); !m.empty()) out.error = m;
    if (!e.is_object()) continue;
    if (e.contains("choices") && e["choices"].is_array())
      for (const json& c : e["choices"]) {
        if (c.contains("text") && c["text"].is_string()) out.text += c["text"].get<std::string>();
        if (c.contains("finish_reason") && c["finish_reason"].is_string()) out.finish_reason = c["finish_reason"];
      }
    if (e.contains("usage") && e["usage"].is_object())
      out.completion_tokens = e["usage"].value("completion_tokens", -1);
  }
  return out;
}

std::string Describe(const CompletionResult& r) {
  std::string s = "HTTP " + std::to_string(r.status) + ", " + std::to_string(r.completion_tokens) +
                  " tokens, finish '" + r.finish_reason + "', done " + (r.done ? "yes" : "no");
  if (!r.error.empty()) s += ", error '" + r.error + "'";
  return s + ", body: " + r.raw.substr(0, 1500);
}

std::vector<GoldenCase> GoldenCases() {
  std::ifstream in(pipeline_test::GoldenFile());
  json j = json::parse(in, nullptr, false);
  std::vector<GoldenCase> out;
  if (j.is_discarded()) return out;
  for (const auto& c : j["cases"]) out.push_back({c["prompt_ids"], c["completion_ids"]});
  return out;
}

std::vector<int32_t> GenerateIds(int port, const std::vector<int32_t>& prompt, int tokens) {
  HttpReply r = pipeline_test::PostJson(
      port, "/generate",
      {{"input_ids", prompt}, {"sampling_params", {{"max_new_tokens", tokens}, {"temperature", 0}, {"ignore_eos", true}}}});
  if (r.status != 200) return {-r.status};
  return r.json["output_ids"].get<std::vector<int32_t>>();
}

void ExpectAKilledWorkerEndsItsStreamsAndComesBack(int port, const std::string& node) {
  auto nodes = [&] { return pipeline_test::Get(port, "/admin/nodes").json["nodes"]; };
  auto ready = [&] { return pipeline_test::Get(port, "/health").status == 200; };
  ASSERT_TRUE(pipeline_test::WaitFor(ready, std::chrono::seconds(30)));
  const int victim = nodes()[node]["pid"].get<int>();
  ASSERT_GT(victim, 0);
  constexpr int kTokens = 400;
  constexpr size_t kStreams = 4;
  std::vector<CompletionResult> results(kStreams);
  std::vector<std::atomic<int>> events(kStreams);  // SSE events received (one per token, and [DONE])
  std::vector<std::atomic<bool>> ended(kStreams);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < kStreams; ++i)
    clients.emplace_back([&, i] {
      results[i] = StreamComplete(port, "Once upon a time", kTokens, [&, i](std::string_view d) {
        for (size_t at = d.find("data:"); at != std::string_view::npos; at = d.find("data:", at + 1)) ++events[i];
        return true;
      });
      ended[i] = true;
    });
  auto join = [&] {
    // Every request ends, with its tokens or an error: none hangs.
    EXPECT_TRUE(pipeline_test::WaitFor([&] { return std::all_of(ended.begin(), ended.end(), [](auto& e) { return e.load(); }); },
                                       std::chrono::seconds(60)));
    for (auto& c : clients) c.join();
  };
  // Every stream has begun, so every request is running at the worker.
  if (!pipeline_test::WaitFor([&] { return std::all_of(events.begin(), events.end(), [](auto& n) { return n > 0; }); },
                              std::chrono::seconds(30))) {
    join();
    FAIL() << "the streams did not start";
  }
  // Stopped first, then killed: a stream still far from its end when the worker stops needs tokens
  // only the worker can make, so it was in flight at the kill and must end with an error.
  ASSERT_EQ(::kill(victim, SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // tokens already past the worker arrive
  std::vector<size_t> in_flight;
  for (size_t i = 0; i < kStreams; ++i)
    if (!ended[i] && events[i] < kTokens - 16) in_flight.push_back(i);
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  join();
  EXPECT_FALSE(in_flight.empty()) << "every stream was (nearly) done before the worker stopped: nothing was in flight";
  for (size_t i : in_flight)
    EXPECT_NE(results[i].error.find("worker"), std::string::npos) << "in flight at the kill: " << Describe(results[i]);
  // One finished before the kill has all its tokens; one cut off says the worker failed.
  for (const auto& r : results)
    EXPECT_TRUE((r.status == 200 && r.completion_tokens == kTokens && r.error.empty()) ||
                r.error.find("worker") != std::string::npos)
        << Describe(r);
  ASSERT_TRUE(pipeline_test::WaitFor(
      [&] {
        json n = nodes();
        return n.contains(node) && n[node].value("pid", 0) != victim && n[node].value("ready", false) && ready();
      },
      std::chrono::seconds(60)))
      << nodes().dump();
  for (const auto& g : GoldenCases()) EXPECT_EQ(GenerateIds(port, g.prompt_ids, 32), g.completion_ids);
}

std::string ExpectStartupFailure(Launcher& launcher, const LauncherOptions& options,
                                 const std::vector<std::string>& message_parts, const std::vector<pid_t>& ours) {
  Status s = launcher.Spawn(options);
  EXPECT_TRUE(s.ok()) << s.message();
  std::optional<int> st = launcher.WaitExit(std::chrono::seconds(120));
  std::string out = launcher.Output();
  EXPECT_TRUE(st.has_value()) << "the launcher did not exit:\n" << out;
  if (!st) return out;
  EXPECT_TRUE(WIFEXITED(*st) && WEXITSTATUS(*st) != 0) << "wait status " << *st << "\n" << out;
  const std::string tag = "radixserve launch: ";
  const size_t at = out.find(tag);
  EXPECT_NE(at, std::string::npos) << out;
  if (at == std::string::npos) return out;
  EXPECT_EQ(out.find(tag, at + 1), std::string::npos) << "more than one launcher error:\n" << out;
  const std::string line = out.substr(at, out.find('\n', at) - at);
  for (const auto& part : message_parts) EXPECT_NE(line.find(part), std::string::npos) << "in: " << line << "\n" << out;
  EXPECT_EQ(out.find("radixserve is ready"), std::string::npos) << out;
  EXPECT_EQ(launcher.Leftovers(ours), "") << out;
  return out;
}

}  // namespace radixserve::launch_test
