// DetokenizerNode: receives BatchTokenIdOut from the scheduler, turns token
// ids into text deltas with an IncrementalDetokenizer, and publishes
// BatchStrOut to the api node. One receive thread owns the detokenizer
// state; lifecycle calls come from the container thread.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "core/detokenizer/incremental_detokenizer.h"
#include "core/gguf/gguf_reader.h"
#include "core/tokenizer/tokenizer.h"
#include "nodes/node.h"
#include "nodes/node_loop.h"
#include "transport/channel.h"

namespace radixserve::nodes {

class DetokenizerNode : public Node {
 public:
  explicit DetokenizerNode(NodeContext ctx);
  ~DetokenizerNode() override;
  const char* component() const override { return "detokenizer"; }

 protected:
  Status OnConfigure() override;
  Status OnActivate() override;
  Status OnDeactivate() override;
  Status OnCleanup() override;

 private:
  void Loop();
  void HandleBatch(const void* data, size_t size);

  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<detok::IncrementalDetokenizer> detok_;
  std::unique_ptr<transport::Subscriber> in_;
  std::unique_ptr<transport::Publisher> out_;
  std::unique_ptr<transport::Waiter> waiter_;
  NodeLoop loop_;  // stopped by OnDeactivate, which the destructor runs through Shutdown()
  std::vector<std::string> deltas_;  // reused per batch
  uint64_t dropped_messages_ = 0;
};

}  // namespace radixserve::nodes
