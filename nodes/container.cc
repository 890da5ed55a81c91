#include "nodes/container.h"

#include <glog/logging.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <thread>

#include "transport/messages.h"

namespace radixserve::nodes {

Container::~Container() {
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) (*it)->Shutdown();
}

Status Container::Load(const std::vector<NodeSpec>& specs, const std::vector<std::string>& component_dirs) {
  for (const NodeSpec& spec : specs) {
    for (const auto& n : nodes_)
      if (n->name() == spec.context.name)
        return Status::InvalidArgument("two nodes are named '" + spec.context.name + "'");
    RS_ASSIGN_OR_RETURN(const RsPluginDescriptor* c, LoadComponent(spec.component, component_dirs));
    std::unique_ptr<Node> node = CreateNode(*c, spec.context);
    if (!node) return Status::Internal("component '" + spec.component + "' failed to create node " + spec.context.name);
    for (const auto& [k, v] : spec.params) {
      Status s = node->SetParameter(k, v);
      if (!s.ok()) return Status(s.code(), "node '" + spec.context.name + "': " + s.message());
    }
    nodes_.push_back(std::move(node));
  }
  return Status::Ok();
}

Status Container::Start() {
  RS_RETURN_IF_ERROR(transport::InitRuntime(process_name_));
  std::string ns = nodes_.empty() ? "default" : nodes_.front()->ns();
  transport::ChannelOptions opts;
  opts.block_when_full = false;  // status is periodic: drop old ones rather than block
  RS_ASSIGN_OR_RETURN(status_pub_, transport::Publisher::Create({ns, transport::topics::kNodeStatus}, opts));
  for (auto& n : nodes_) {
    LOG(INFO) << n->name() << ": configuring (" << n->component() << ")";
    RS_RETURN_IF_ERROR(n->Configure());
    PublishStatus();
  }
  for (auto& n : nodes_) {
    RS_RETURN_IF_ERROR(n->Activate());
    LOG(INFO) << n->name() << ": active";
    PublishStatus();
  }
  return Status::Ok();
}

void Container::PublishStatus() {
  if (!status_pub_) return;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  for (auto& n : nodes_) {
    auto chunk = status_pub_->Loan(sizeof(transport::NodeStatusMsg));
    if (!chunk.ok()) return;
    transport::MessageWriter<transport::NodeStatusMsg> w(*chunk, sizeof(transport::NodeStatusMsg));
    auto* m = w.msg();
    std::strncpy(m->name, n->name().c_str(), sizeof(m->name) - 1);
    std::strncpy(m->component, n->component(), sizeof(m->component) - 1);
    m->state = static_cast<uint8_t>(n->state());
    m->ready = n->Ready() ? 1 : 0;
    m->pid = static_cast<int32_t>(::getpid());
    m->timestamp = double(ts.tv_sec) + ts.tv_nsec * 1e-9;
    status_pub_->Publish(*chunk);
  }
}

void Container::Run() {
  // Status goes out from its own thread, also while nodes shut down: a draining api node can take
  // many seconds, and the others must not look dead meanwhile.
  std::atomic<bool> status_done{false};
  std::thread status([this, &status_done] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!status_done.load()) {
      lock.unlock();
      PublishStatus();
      lock.lock();
      cv_.wait_for(lock, std::chrono::milliseconds(500), [&] { return status_done.load(); });
    }
  });
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return stop_.load(); });
  }
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {
    LOG(INFO) << (*it)->name() << ": shutting down";
    (*it)->Shutdown();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    status_done.store(true);
  }
  cv_.notify_all();
  status.join();
  PublishStatus();
}

void Container::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  cv_.notify_all();
}

}  // namespace radixserve::nodes
