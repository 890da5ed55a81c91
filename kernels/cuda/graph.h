// StepGraph: a stream's work recorded once by CUDA stream capture and replayed with one launch,
// so that a decode step of many small kernels costs the host one call instead of one per kernel.
// A replay repeats the recorded kernels with the recorded arguments: the buffers they name must
// still be the ones alive at capture (their contents may change), and shapes are fixed.
// Plain C++ (no CUDA headers). Thread-safety: one owner; Launch is ordered on its stream.
#pragma once

#include <functional>

#include "kernels/cuda/device.h"

namespace radixserve::cuda {

class StepGraph {
 public:
  StepGraph() = default;
  // Records what `record` enqueues on `stream` (nothing runs) and instantiates it. The stream
  // must be idle of other captures; on an error the capture is ended and the stream usable.
  static Result<StepGraph> Capture(Stream stream, const std::function<Status()>& record);
  ~StepGraph();
  StepGraph(StepGraph&& other) noexcept;
  StepGraph& operator=(StepGraph&& other) noexcept;
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;

  Status Launch(Stream stream) const;

 private:
  void* exec_ = nullptr;  // cudaGraphExec_t
};

}  // namespace radixserve::cuda
