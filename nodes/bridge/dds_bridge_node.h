// DdsBridgeNode: carries pipeline topics between machines over Cyclone DDS,
// so that the router of one host and a data-parallel group on another talk
// over the same topics as on one host (launch/two_host_a.yaml, _b.yaml).
// Each exported iceoryx topic is read and written to a DDS topic of the same
// name (DdsTopicName); each imported DDS topic is published on the local
// iceoryx topic. Chunks travel as bytes: the messages are relocatable. DDS
// runs reliable with every sample kept, and an exported chunk waits in its
// iceoryx queue until a reader on the other host has matched, so nothing sent
// before discovery finishes is lost.
// Two threads: the export loop (iceoryx → DDS) and the import loop (DDS →
// iceoryx); lifecycle calls come from the container.
#pragma once

#include <dds/dds.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "nodes/node.h"
#include "nodes/node_loop.h"
#include "transport/channel.h"

namespace radixserve::nodes {

class DdsBridgeNode : public Node {
 public:
  explicit DdsBridgeNode(NodeContext ctx);
  ~DdsBridgeNode() override;
  const char* component() const override { return "bridge"; }

 protected:
  Status OnConfigure() override;
  Status OnActivate() override;
  Status OnDeactivate() override;
  Status OnCleanup() override;

 private:
  struct Export {
    transport::Topic topic;
    std::unique_ptr<transport::Subscriber> sub;
    dds_entity_t writer = 0;
    uint64_t seq = 0;
    uint64_t sent = 0;
  };
  struct Import {
    transport::Topic topic;
    std::unique_ptr<transport::Publisher> pub;
    dds_entity_t reader = 0;
    uint64_t received = 0, dropped = 0;
    uint64_t last_seq = 0;  // the sender's count of the last chunk taken
  };
  void ExportLoop();
  void ImportLoop();
  void ImportFrom(Import& in);

  dds_entity_t domain_ = 0, participant_ = 0, waitset_ = 0, stop_guard_ = 0;
  std::vector<Export> exports_;
  std::vector<Import> imports_;
  std::unique_ptr<transport::Waiter> waiter_;
  NodeLoop export_loop_;
  std::atomic<bool> importing_{false};
  std::thread import_thread_;
};

}  // namespace radixserve::nodes
