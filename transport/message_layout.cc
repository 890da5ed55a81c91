#include "transport/message_layout.h"

namespace radixserve::transport {

const char* MessageKindName(MessageKind kind) noexcept {
  switch (kind) {
    case MessageKind::kInvalid: return "Invalid";
    case MessageKind::kTokenizedRequest: return "TokenizedRequest";
    case MessageKind::kAbortRequest: return "AbortRequest";
    case MessageKind::kForwardBatch: return "ForwardBatch";
    case MessageKind::kForwardResult: return "ForwardResult";
    case MessageKind::kBatchTokenIdOut: return "BatchTokenIdOut";
    case MessageKind::kBatchStrOut: return "BatchStrOut";
    case MessageKind::kControl: return "Control";
    case MessageKind::kNodeStatus: return "NodeStatus";
    case MessageKind::kCacheEvents: return "CacheEvents";
    case MessageKind::kActivations: return "Activations";
    case MessageKind::kTest: return "Test";
  }
  return "Unknown";
}

}  // namespace radixserve::transport
