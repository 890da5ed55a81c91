// BatchHandler: the worker node's step without its transport: a received
// forward-batch message is validated, decoded and run on a Worker, and the
// outcome (the result, or the step's error) is what the node encodes as its
// reply. Storage is reused between steps. Thread-compatible: one message at a
// time (the worker node's thread).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/scheduler/worker.h"
#include "core/util/status.h"

namespace radixserve::nodes {

class BatchHandler {
 public:
  explicit BatchHandler(sched::Worker* worker) : worker_(worker) {}

  struct Outcome {
    const sched::ForwardResult* result;  // valid until the next Handle
    Status status;                       // the step's error, which travels in the reply
  };
  // Runs one message. An error result means the message was malformed: nothing ran, and there is
  // no batch id to answer.
  Result<Outcome> Handle(const void* data, size_t size);

  // Handle in two halves, for a pipeline stage that runs the batch its own way in between:
  // Decode validates and reads the message (the batch stays valid until the next Decode), and
  // Finish shapes the outcome of the step that filled result() and returned `step`.
  Result<const sched::ForwardBatch*> Decode(const void* data, size_t size);
  sched::ForwardResult* result() { return &result_; }
  Outcome Finish(Status step);

 private:
  sched::Worker* worker_;
  sched::ForwardBatch batch_;
  sched::ForwardResult result_;
};

}  // namespace radixserve::nodes
