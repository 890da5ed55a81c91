// Small HTTP helpers over cpp-httplib's client for the pipeline tests: JSON
// posts, a streaming post whose reader can hang up, SSE parsing, and the
// scheduler's statistics from /get_server_info. Each call opens its own
// connection, so any thread may call any function.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace radixserve::pipeline_test {

struct HttpReply {
  int status = -1;         // -1: no HTTP answer (see error)
  std::string body;
  nlohmann::json json;     // the parsed body; discarded (is_discarded()) when not JSON
  std::string error;       // transport error when status is -1
};

HttpReply Get(int port, const std::string& path);
HttpReply PostJson(int port, const std::string& path, const nlohmann::json& body);
// Any bytes as the body, e.g. malformed JSON.
HttpReply PostRaw(int port, const std::string& path, const std::string& body);
// Posts and hands each received piece of the body to `on_data`; returning false hangs up.
// The reply's body holds everything received.
HttpReply PostStream(int port, const std::string& path, const nlohmann::json& body,
                     const std::function<bool(std::string_view)>& on_data);

// The JSON payloads of the "data:" events of an SSE body, in order; *done says whether
// the terminating "data: [DONE]" was seen. A payload that is not JSON is returned as a string.
std::vector<nlohmann::json> ParseSse(const std::string& body, bool* done);

// /get_server_info's scheduler.stats (an empty object when unavailable).
nlohmann::json SchedulerStats(int port);

// A sample's value from Prometheus text (/metrics), or -1 when absent.
double MetricValue(const std::string& text, const std::string& name);

// Polls `pred` every 20 ms until true or `timeout` passes (a failure guard, not a measurement).
bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout);

// The test's description of a reply: status and body.
std::string Describe(const HttpReply& r);

}  // namespace radixserve::pipeline_test
