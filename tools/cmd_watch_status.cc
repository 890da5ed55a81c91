// `radixserve watch-status`: prints every node_status message of the given namespaces as one line
// "name<TAB>ready(0|1)<TAB>lifecycle state" on standard output, until SIGUSR1 or SIGTERM or until
// standard output closes. `radixserve launch` runs it as its own process: RouDi signals every
// registered process when it stops, and the launcher must not be one of them; a spawned program
// (not a fork of the threaded launcher) starts its iceoryx runtime in a clean process.
//   radixserve watch-status --namespace NS [--namespace NS ...]
#include <CLI/CLI.hpp>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nodes/node.h"
#include "tools/command.h"
#include "transport/channel.h"
#include "transport/messages.h"

namespace radixserve::tools {
namespace {

std::atomic<bool> g_stop{false};

int RunWatchStatus(const std::vector<std::string>& namespaces) {
  ::signal(SIGINT, SIG_IGN);  // Ctrl-C is the launcher's to handle
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGUSR1, [](int) { g_stop.store(true); });
  ::signal(SIGTERM, [](int) { g_stop.store(true); });
  const pid_t parent = ::getppid();
  if (!transport::InitRuntime("radixserve_launch_watch_" + std::to_string(::getpid())).ok()) return 2;
  std::vector<std::unique_ptr<transport::Subscriber>> subs;
  for (const auto& ns : namespaces) {
    transport::ChannelOptions o;
    o.block_when_full = false;
    auto sub = transport::Subscriber::Create({ns, transport::topics::kNodeStatus}, o);
    if (!sub.ok()) return 3;
    subs.push_back(std::move(*sub));
  }
  while (!g_stop.load() && ::getppid() == parent) {
    for (auto& s : subs) {
      while (transport::Received r = s->TryTake()) {
        auto m = transport::ValidateNodeStatus(r.data(), r.size());
        if (!m.ok()) continue;
        std::string line = std::string((*m)->name) + "\t" + ((*m)->ready ? "1" : "0") + "\t" +
                           nodes::NodeStateName(static_cast<nodes::NodeState>((*m)->state)) + "\n";
        if (::write(STDOUT_FILENO, line.data(), line.size()) < 0) g_stop.store(true);  // the reader is gone
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  subs.clear();  // deregisters from RouDi before exiting
  return 0;
}

CommandRegistrar watch_status_registrar({"watch-status", "Print node status messages (used by `radixserve launch`)",
                      [](CLI::App& app) -> std::function<int()> {
                        auto ns = std::make_shared<std::vector<std::string>>();
                        app.add_option("--namespace", *ns, "Topic namespace to watch (repeatable)")->required();
                        return [ns] { return RunWatchStatus(*ns); };
                      }});

}  // namespace
}  // namespace radixserve::tools
