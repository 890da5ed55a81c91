#include "nodes/node.h"

#include <glog/logging.h>

namespace radixserve::nodes {

const char* NodeStateName(NodeState s) {
  switch (s) {
    case NodeState::kUnconfigured: return "unconfigured";
    case NodeState::kInactive: return "inactive";
    case NodeState::kActive: return "active";
    case NodeState::kFinalized: return "finalized";
  }
  return "unknown";
}

Status Node::Transition(NodeState from, NodeState to, const char* what, Status (Node::*fn)()) {
  if (state() != from)
    return Status::FailedPrecondition(name() + ": cannot " + what + " while " + NodeStateName(state()) +
                                      " (needs " + NodeStateName(from) + ")");
  Status s = (this->*fn)();
  if (!s.ok()) {
    LOG(ERROR) << name() << ": " << what << " failed: " << s.ToString();
    return Status(s.code(), name() + ": " + what + " failed: " + s.message());
  }
  state_.store(to);
  VLOG(1) << name() << ": " << NodeStateName(from) << " -> " << NodeStateName(to);
  return Status::Ok();
}

Status Node::Configure() { return Transition(NodeState::kUnconfigured, NodeState::kInactive, "configure", &Node::OnConfigure); }
Status Node::Activate() { return Transition(NodeState::kInactive, NodeState::kActive, "activate", &Node::OnActivate); }
Status Node::Deactivate() { return Transition(NodeState::kActive, NodeState::kInactive, "deactivate", &Node::OnDeactivate); }
Status Node::Cleanup() { return Transition(NodeState::kInactive, NodeState::kUnconfigured, "clean up", &Node::OnCleanup); }

void Node::Shutdown() {
  if (state() == NodeState::kActive) (void)Deactivate();
  if (state() == NodeState::kInactive) (void)Cleanup();
  state_.store(NodeState::kFinalized);
}

Status Node::SetParameter(const std::string& pname, const std::string& value) {
  bool configured = state() != NodeState::kUnconfigured;
  Result<std::string> old = params_.GetText(pname);
  RS_RETURN_IF_ERROR(params_.Set(pname, value, /*locked=*/configured));
  if (!configured) return Status::Ok();
  Status applied = OnParameterChanged(pname);
  if (!applied.ok() && old.ok()) (void)params_.Set(pname, *old);  // refused: as it was
  return applied;
}

}  // namespace radixserve::nodes
