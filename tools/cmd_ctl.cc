// `radixserve ctl`: runtime control of a running pipeline through the api node's /admin endpoints.
//   radixserve ctl nodes
//   radixserve ctl param get scheduler | param set scheduler stream_interval 2
//   radixserve ctl policy list | show | swap lpm in_batch_check_threshold=16
//   radixserve ctl cache stats | flush | swap chunk --mode flush
//   radixserve ctl plugin load /path/libradixserve_policy_x.so
#include <CLI/CLI.hpp>
#include <httplib.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "tools/command.h"

namespace radixserve::tools {
namespace {

struct CtlOptions {
  std::string url = "http://127.0.0.1:30000";
  std::string key;
  std::vector<std::string> words;  // the command and its arguments
  std::string mode;
  int timeout_s = 60;
};

int Call(const CtlOptions& o, const std::string& method, const std::string& path, const nlohmann::json& body) {
  httplib::Client client(o.url);
  client.set_read_timeout(o.timeout_s, 0);
  client.set_connection_timeout(5, 0);
  httplib::Headers headers;
  if (!o.key.empty()) headers.emplace("Authorization", "Bearer " + o.key);
  httplib::Result r = method == "GET" ? client.Get(path.c_str(), headers)
                                      : client.Post(path.c_str(), headers, body.dump(), "application/json");
  if (!r) {
    std::fprintf(stderr, "error: cannot reach %s: %s\n", o.url.c_str(), httplib::to_string(r.error()).c_str());
    return 2;
  }
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (r->status != 200) {
    std::string msg = (!j.is_discarded() && j.contains("error")) ? j["error"].value("message", r->body) : r->body;
    std::fprintf(stderr, "error (%d): %s\n", r->status, msg.c_str());
    return 1;
  }
  std::printf("%s\n", j.is_discarded() ? r->body.c_str() : j.dump(2).c_str());
  return 0;
}

// "k=v" words → {"k": "v"}; InvalidArgument-style message on stderr when malformed.
bool ParseKv(const std::vector<std::string>& words, size_t from, nlohmann::json* out) {
  *out = nlohmann::json::object();
  for (size_t i = from; i < words.size(); ++i) {
    auto eq = words[i].find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "error: expected name=value, got '%s'\n", words[i].c_str());
      return false;
    }
    (*out)[words[i].substr(0, eq)] = words[i].substr(eq + 1);
  }
  return true;
}

int Usage() {
  std::fprintf(stderr,
               "usage: radixserve ctl [--url URL] [--key KEY] COMMAND\n"
               "  nodes\n  param get NODE\n  param set NODE NAME VALUE\n"
               "  policy list | show | swap NAME [k=v ...]\n"
               "  cache stats | flush | swap NAME [k=v ...] [--mode drain|flush]\n  plugin load PATH\n");
  return 2;
}

int RunCtl(const CtlOptions& o) {
  const auto& w = o.words;
  auto at = [&w](size_t i) { return i < w.size() ? w[i] : std::string(); };
  nlohmann::json body = nlohmann::json::object();
  if (at(0) == "nodes" && w.size() == 1) return Call(o, "GET", "/admin/nodes", body);
  if (at(0) == "param" && at(1) == "get" && w.size() == 3) return Call(o, "GET", "/admin/params/" + at(2), body);
  if (at(0) == "param" && at(1) == "set" && w.size() == 5)
    return Call(o, "POST", "/admin/params/" + at(2), {{"name", at(3)}, {"value", at(4)}});
  if (at(0) == "policy" && at(1) == "list" && w.size() == 2) return Call(o, "GET", "/admin/plugins", body);
  if (at(0) == "policy" && at(1) == "show" && w.size() == 2) return Call(o, "GET", "/admin/policy", body);
  if ((at(0) == "policy" || at(0) == "cache") && at(1) == "swap" && w.size() >= 3) {
    nlohmann::json params;
    if (!ParseKv(w, 3, &params)) return 2;
    body = {{"name", at(2)}, {"params", params}};
    if (at(0) == "cache" && !o.mode.empty()) body["mode"] = o.mode;
    return Call(o, "POST", "/admin/" + at(0) + "/swap", body);
  }
  if (at(0) == "cache" && at(1) == "stats" && w.size() == 2) return Call(o, "GET", "/admin/cache/stats", body);
  if (at(0) == "cache" && at(1) == "flush" && w.size() == 2) return Call(o, "POST", "/admin/cache/flush", body);
  if (at(0) == "plugin" && at(1) == "load" && w.size() == 3) return Call(o, "POST", "/admin/plugin/load", {{"path", at(2)}});
  return Usage();
}

CommandRegistrar ctl_registrar({"ctl", "Control a running server: nodes, parameters, policy, cache, plugins",
                      [](CLI::App& app) -> std::function<int()> {
                        auto o = std::make_shared<CtlOptions>();
                        app.add_option("--url", o->url, "The api node's base URL")->capture_default_str();
                        app.add_option("--key", o->key, "Admin (or API) key");
                        app.add_option("--mode", o->mode, "Cache swap: drain or flush");
                        app.add_option("--timeout", o->timeout_s, "Seconds to wait for an answer");
                        app.add_option("words", o->words, "Command and arguments")->required();
                        return [o] { return RunCtl(*o); };
                      }});

}  // namespace
}  // namespace radixserve::tools
