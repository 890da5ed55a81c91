// Node: one stage of the pipeline (api, scheduler, worker, detokenizer) with
// a managed lifecycle, as ROS 2 lifecycle nodes have:
//
//   Unconfigured --Configure--> Inactive --Activate--> Active
//   Active --Deactivate--> Inactive --Cleanup--> Unconfigured
//   any --Shutdown--> Finalized
//
// Configure loads what the node needs (a model, a tokenizer) and opens its
// channels; Activate starts its threads; a node reports Ready() once it can
// do its job. Transitions are called from one controlling thread; Ready()
// and the parameter accessors are thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/util/status.h"
#include "nodes/parameters.h"
#include "transport/topic.h"

namespace radixserve::nodes {

enum class NodeState { kUnconfigured, kInactive, kActive, kFinalized };
const char* NodeStateName(NodeState s);

// What a node is given when it is created: its identity and topic remapping.
struct NodeContext {
  std::string name;             // unique in the pipeline, e.g. "worker"
  std::string ns = "default";   // topic namespace
  transport::TopicRemap remap;
};

class Node {
 public:
  explicit Node(NodeContext ctx) : ctx_(std::move(ctx)) {}
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  Status Configure();
  Status Activate();
  Status Deactivate();
  Status Cleanup();
  // Deactivates and cleans up as needed; always ends Finalized.
  void Shutdown();

  NodeState state() const { return state_.load(); }
  // True when the node can serve (Active and whatever the node itself requires).
  virtual bool Ready() const { return state() == NodeState::kActive; }
  virtual const char* component() const = 0;

  const std::string& name() const { return ctx_.name; }
  const std::string& ns() const { return ctx_.ns; }
  Parameters& params() { return params_; }
  const Parameters& params() const { return params_; }
  // Sets a parameter; read-only ones only while Unconfigured.
  Status SetParameter(const std::string& name, const std::string& value);

 protected:
  virtual Status OnConfigure() = 0;
  virtual Status OnActivate() = 0;
  virtual Status OnDeactivate() = 0;
  virtual Status OnCleanup() = 0;
  // Called after a parameter changed while configured (for those the node can apply live). An
  // error refuses the change: the old value is put back and the error is the caller's answer.
  virtual Status OnParameterChanged(const std::string& name) { return Status::Ok(); }

  // The topic `name` in this node's namespace after remapping.
  transport::Topic ResolveTopic(const std::string& name) const { return ResolveTopicIn(ctx_.ns, name); }
  // The topic `name` of namespace `ns` after remapping (a node that talks to other namespaces).
  transport::Topic ResolveTopicIn(const std::string& ns, const std::string& name) const {
    return ctx_.remap.Apply({ns, name});
  }

 private:
  Status Transition(NodeState from, NodeState to, const char* what, Status (Node::*fn)());

  NodeContext ctx_;
  Parameters params_;
  std::atomic<NodeState> state_{NodeState::kUnconfigured};
};

}  // namespace radixserve::nodes
