// WorkerNode: owns the weights and KV buffers (ARCHITECTURE section 3) and
// runs one forward step per ForwardBatch from the scheduler, answering with a
// ForwardResult (next token per request, logprobs when asked). A failed step
// is answered with its error, so the scheduler never waits in vain.
// With pipeline stages (pp_size > 1) each worker holds a range of layers: the
// first embeds, every stage passes its residual stream on the activations
// topic to the next, and the last samples and answers.
// One receive thread runs the model; lifecycle calls come from the container.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "core/gguf/gguf_reader.h"
#include "core/model/shm_collective.h"
#include "core/worker/model_worker.h"
#include "nodes/worker/batch_handler.h"
#include "nodes/forward_codec.h"
#include "nodes/node.h"
#include "nodes/node_loop.h"
#include "transport/channel.h"

namespace radixserve::nodes {

class WorkerNode : public Node {
 public:
  explicit WorkerNode(NodeContext ctx);
  ~WorkerNode() override;
  const char* component() const override { return "worker"; }

 protected:
  Status OnConfigure() override;
  Status OnActivate() override;
  Status OnDeactivate() override;
  Status OnCleanup() override;

 private:
  // The backend the `device` parameter asks for, over num_slots KV slots.
  Result<std::unique_ptr<model::ModelBackend>> LoadBackend(std::shared_ptr<const gguf::GgufFile> file,
                                                           const model::ModelOptions& options, int64_t num_slots);
  void Loop();
  void HandleBatch(const void* data, size_t size);
  // Pipeline stages (pp_size > 1).
  void RunStages();
  void RunStage(std::span<const float> hidden_in, Status upstream);
  void SendActivations(uint64_t batch_id, const Status& status);
  void Reply(const sched::ForwardResult& result, const Status& status);

  std::unique_ptr<model::ShmCollective> collective_;  // tensor parallelism; outlives the model
  std::unique_ptr<ModelWorker> worker_;
  std::unique_ptr<transport::Subscriber> in_;
  std::unique_ptr<transport::Publisher> out_;
  std::unique_ptr<transport::Waiter> waiter_;
  // Pipeline stages: the previous stage's output comes in, this stage's goes on to the next.
  std::unique_ptr<transport::Subscriber> act_in_;
  std::unique_ptr<transport::Publisher> act_out_;
  transport::Received held_act_;                   // taken, not yet paired with its batch
  const sched::ForwardBatch* stage_batch_ = nullptr;  // decoded, waiting for its activations
  std::vector<float> hidden_;                      // this stage's output, reused
  NodeLoop loop_;  // stopped by OnDeactivate, which the destructor runs through Shutdown()
  std::unique_ptr<BatchHandler> handler_;
  uint64_t dropped_messages_ = 0;
};

}  // namespace radixserve::nodes
