// Requests the launch acceptance tests send: greedy completions, streamed or not, summarised as
// what the tests check (HTTP status, text, token count, finish reason, error message). Any thread
// may call them; each opens its own connection (tests/pipeline/http_client.h).
#pragma once

#include <functional>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/launch_e2e/launcher.h"
#include "tests/pipeline/http_client.h"

namespace radixserve::launch_test {

struct CompletionResult {
  int status = -1;               // HTTP status; -1: no HTTP answer
  bool done = false;             // streamed: the terminating [DONE] arrived
  int completion_tokens = -1;    // from usage; -1 when absent
  std::string text;              // the generated text (streamed: the deltas joined)
  std::string finish_reason;     // of the last choice seen
  std::string error;             // an error event's or body's message, or the transport error
  std::string raw;               // the body, for failure messages
};

// A greedy completion of exactly `max_tokens` tokens (ignore_eos). `on_data` (streamed only) sees
// every received piece; returning false hangs up.
CompletionResult Complete(int port, const std::string& prompt, int max_tokens);
CompletionResult StreamComplete(int port, const std::string& prompt, int max_tokens,
                                const std::function<bool(std::string_view)>& on_data = nullptr);

// "HTTP 200, 16 tokens, finish length: <text>" for failure messages.
std::string Describe(const CompletionResult& r);

// llama.cpp's greedy completions of stories260K (pipeline_test::GoldenFile): prompt and output ids.
struct GoldenCase {
  std::vector<int32_t> prompt_ids, completion_ids;
};
std::vector<GoldenCase> GoldenCases();
// Greedy ids of `prompt` from the native /generate (ignore_eos), or {-status} when not 200.
std::vector<int32_t> GenerateIds(int port, const std::vector<int32_t>& prompt, int tokens);

// Stops, then kills (SIGSTOP, SIGKILL) the process of pipeline node `node` (a worker rank or
// stage) while four streams run, and checks (gtest) that a stream was in flight at the kill and
// ended with an error naming the worker, that every stream ends (within a deadline), with all its
// tokens or that error, that the launcher respawns the node, and that the pipeline then gives
// llama.cpp's greedy ids again.
void ExpectAKilledWorkerEndsItsStreamsAndComesBack(int port, const std::string& node);

// Spawns the launcher and runs it to its exit (a start-up that must fail); returns its output.
// Checks (gtest) a non-zero exit code, exactly one "radixserve launch: " error line containing
// every part of `message_parts`, no ready line, and nothing left running but `ours`.
std::string ExpectStartupFailure(Launcher& launcher, const LauncherOptions& options,
                                 const std::vector<std::string>& message_parts, const std::vector<pid_t>& ours = {});

}  // namespace radixserve::launch_test
