// Container: runs one or several nodes in one process.
//
// It registers the process with RouDi, creates each node from its component,
// applies parameters, configures and activates the nodes in order, publishes
// each node's state on the "node_status" topic twice a second, and on Stop()
// deactivates and shuts them down in reverse order. Run() blocks the calling
// thread until Stop() (from a signal handler thread or another thread).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/util/status.h"
#include "nodes/component.h"
#include "nodes/node.h"
#include "transport/channel.h"

namespace radixserve::nodes {

struct NodeSpec {
  std::string component;  // component name or library path
  NodeContext context;
  std::vector<std::pair<std::string, std::string>> params;  // name -> value text
};

class Container {
 public:
  explicit Container(std::string process_name) : process_name_(std::move(process_name)) {}
  ~Container();

  // Creates every node (not yet configured); errors name the node and the parameter.
  Status Load(const std::vector<NodeSpec>& specs, const std::vector<std::string>& component_dirs);
  // InitRuntime, then configure and activate each node in order.
  Status Start();
  // Blocks until Stop(); publishes node status meanwhile.
  void Run();
  void Stop();
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }

 private:
  void PublishStatus();

  std::string process_name_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::unique_ptr<transport::Publisher> status_pub_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace radixserve::nodes
