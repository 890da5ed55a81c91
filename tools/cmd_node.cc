// `radixserve node` and `radixserve container`: run pipeline nodes in this process.
//   radixserve node worker --name worker -p model:=m.gguf -r forward_batch:=fb2
//   radixserve container -n scheduler:scheduler -n worker:worker -p worker.model:=m.gguf
// `radixserve roudi` runs an iceoryx RouDi sized for the pipeline until stopped.
#include <CLI/CLI.hpp>
#include <glog/logging.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "nodes/container.h"
#include "tools/command.h"
#include "tools/signals.h"
#include "transport/roudi_process.h"

namespace radixserve::tools {
namespace {

struct NodeOptions {
  std::vector<std::string> nodes;    // component:name (container) or the one component (node)
  std::string name;                  // node only
  std::string ns = "default";
  std::vector<std::string> params;   // [name.]key:=value
  std::vector<std::string> remaps;   // from:=to
  std::string process_name;
  std::vector<std::string> component_dirs;
};

int Fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.message().c_str());
  return 1;
}

int RunContainer(const NodeOptions& o, bool single) {
  std::vector<nodes::NodeSpec> specs;
  transport::TopicRemap remap;
  for (const auto& r : o.remaps) {
    auto a = nodes::ParseAssignment(r);
    if (!a.ok()) return Fail(a.status());
    if (Status s = remap.Add(a->first, a->second); !s.ok()) return Fail(s);
  }
  for (const auto& n : o.nodes) {
    nodes::NodeSpec spec;
    auto colon = n.find(':');
    spec.component = single ? n : n.substr(0, colon);
    spec.context.name = single ? (o.name.empty() ? n : o.name) : (colon == std::string::npos ? n : n.substr(colon + 1));
    spec.context.ns = o.ns;
    spec.context.remap = remap;
    specs.push_back(std::move(spec));
  }
  for (const auto& p : o.params) {
    auto a = nodes::ParseAssignment(p);
    if (!a.ok()) return Fail(a.status());
    std::string key = a->first;
    nodes::NodeSpec* target = single ? &specs[0] : nullptr;
    if (!single) {
      auto dot = key.find('.');
      if (dot == std::string::npos) return Fail(Status::InvalidArgument("parameter '" + key + "' must be node.name:=value"));
      for (auto& s : specs)
        if (s.context.name == key.substr(0, dot)) target = &s;
      if (!target) return Fail(Status::InvalidArgument("parameter '" + key + "' names no node of this container"));
      key = key.substr(dot + 1);
    }
    target->params.emplace_back(key, a->second);
  }
  std::string process = o.process_name.empty() ? "radixserve_" + specs.front().context.name : o.process_name;
  nodes::Container container(process);
  auto dirs = o.component_dirs.empty() ? nodes::DefaultComponentDirs() : o.component_dirs;
  if (Status s = container.Load(specs, dirs); !s.ok()) return Fail(s);
  InstallStopSignals([&container] { container.Stop(); });
  if (Status s = container.Start(); !s.ok()) return Fail(s);
  container.Run();
  return 0;
}

void AddCommon(CLI::App& app, NodeOptions& o) {
  app.add_option("--namespace", o.ns, "Topic namespace")->capture_default_str();
  app.add_option("-r,--remap", o.remaps, "Topic remap from:=to");
  app.add_option("--process-name", o.process_name, "iceoryx runtime name of this process");
  app.add_option("--component-dir", o.component_dirs, "Where node components are found");
}

CommandRegistrar node_cmd({"node", "Run one pipeline node (worker, scheduler, detokenizer, api)",
                           [](CLI::App& app) -> std::function<int()> {
                             auto o = std::make_shared<NodeOptions>();
                             o->nodes.resize(1);
                             app.add_option("component", o->nodes[0], "Node component")->required();
                             app.add_option("--name", o->name, "Node name (default: the component)");
                             app.add_option("-p,--param", o->params, "Parameter name:=value");
                             AddCommon(app, *o);
                             return [o] { return RunContainer(*o, true); };
                           }});

CommandRegistrar container_cmd({"container", "Run several pipeline nodes in one process",
                                [](CLI::App& app) -> std::function<int()> {
                                  auto o = std::make_shared<NodeOptions>();
                                  app.add_option("-n,--node", o->nodes, "component:name")->required();
                                  app.add_option("-p,--param", o->params, "Parameter node.name:=value");
                                  AddCommon(app, *o);
                                  return [o] { return RunContainer(*o, false); };
                                }});

struct RouDiOptions {
  uint32_t max_message_bytes = 4u << 20;
  std::string config;
};

CommandRegistrar roudi_cmd({"roudi", "Run an iceoryx RouDi sized for the pipeline",
                            [](CLI::App& app) -> std::function<int()> {
                              auto o = std::make_shared<RouDiOptions>();
                              app.add_option("--max-message-bytes", o->max_message_bytes,
                                             "Largest message the pipeline sends")->capture_default_str();
                              app.add_option("--config", o->config, "Where to write the generated TOML");
                              return [o] {
                                std::string cfg = o->config.empty()
                                    ? (std::filesystem::temp_directory_path() /
                                       ("radixserve-roudi-" + std::to_string(getpid()) + ".toml")).string()
                                    : o->config;
                                transport::RouDiProcess roudi;
                                std::atomic<bool> stop{false};
                                InstallStopSignals([&stop] { stop.store(true); });
                                Status s = roudi.Start(transport::PipelineRouDiConfig(o->max_message_bytes), cfg);
                                if (!s.ok()) return Fail(s);
                                std::printf("RouDi running (pid %d, config %s)\n", roudi.pid(), cfg.c_str());
                                std::fflush(stdout);
                                while (!stop.load() && roudi.running()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
                                roudi.Stop();
                                return 0;
                              };
                            }});

}  // namespace
}  // namespace radixserve::tools
