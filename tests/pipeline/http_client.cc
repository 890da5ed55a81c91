#include "tests/pipeline/http_client.h"

#include <httplib.h>

#include <sstream>
#include <thread>

namespace radixserve::pipeline_test {
namespace {

httplib::Client MakeClient(int port) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(5, 0);
  cli.set_read_timeout(120, 0);  // a failure guard: CI machines are slow and shared
  cli.set_write_timeout(30, 0);
  return cli;
}

HttpReply FromResult(const httplib::Result& res) {
  HttpReply r;
  if (!res) {
    r.error = httplib::to_string(res.error());
    return r;
  }
  r.status = res->status;
  r.body = res->body;
  r.json = nlohmann::json::parse(r.body, nullptr, false);
  return r;
}

}  // namespace

HttpReply Get(int port, const std::string& path) {
  auto cli = MakeClient(port);
  return FromResult(cli.Get(path));
}

HttpReply PostRaw(int port, const std::string& path, const std::string& body) {
  auto cli = MakeClient(port);
  return FromResult(cli.Post(path, body, "application/json"));
}

HttpReply PostJson(int port, const std::string& path, const nlohmann::json& body) {
  return PostRaw(port, path, body.dump());
}

HttpReply PostStream(int port, const std::string& path, const nlohmann::json& body,
                     const std::function<bool(std::string_view)>& on_data) {
  auto cli = MakeClient(port);
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  HttpReply reply;
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    reply.body.append(data, len);
    return on_data(std::string_view(data, len));
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  bool ok = cli.send(req, res, err);
  reply.status = res.status;
  if (!ok) reply.error = httplib::to_string(err);
  reply.json = nlohmann::json::parse(reply.body, nullptr, false);
  return reply;
}

std::vector<nlohmann::json> ParseSse(const std::string& body, bool* done) {
  std::vector<nlohmann::json> events;
  *done = false;
  std::stringstream ss(body);
  for (std::string line; std::getline(ss, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("data:", 0) != 0) continue;
    std::string payload = line.substr(5);
    if (!payload.empty() && payload.front() == ' ') payload.erase(0, 1);
    if (payload == "[DONE]") {
      *done = true;
      continue;
    }
    auto j = nlohmann::json::parse(payload, nullptr, false);
    events.push_back(j.is_discarded() ? nlohmann::json(payload) : j);
  }
  return events;
}

nlohmann::json SchedulerStats(int port) {
  HttpReply r = Get(port, "/get_server_info");
  if (r.status != 200 || !r.json.is_object()) return nlohmann::json::object();
  const auto& j = r.json;
  if (!j.contains("scheduler") || !j["scheduler"].contains("stats")) return nlohmann::json::object();
  return j["scheduler"]["stats"];
}

double MetricValue(const std::string& text, const std::string& name) {
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  }
  return -1;
}

bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (pred()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string Describe(const HttpReply& r) {
  if (r.status < 0) return "no HTTP reply (" + r.error + ")";
  return "HTTP " + std::to_string(r.status) + ": " + r.body.substr(0, 2000);
}

}  // namespace radixserve::pipeline_test
