#include "kernels/cuda/graph.h"

#include <utility>

#include "kernels/cuda/cuda_check.h"

namespace radixserve::cuda {

Result<StepGraph> StepGraph::Capture(Stream stream, const std::function<Status()>& record) {
  // Thread-local mode: only this thread's unsafe calls (an allocation) break the capture.
  RS_RETURN_IF_ERROR(CudaStatus(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
                                "cudaStreamBeginCapture"));
  const Status recorded = record();
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  if (!recorded.ok()) {
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaGetLastError();  // a launch refused inside the capture leaves its error behind
    return recorded;
  }
  RS_RETURN_IF_ERROR(CudaStatus(ended, "cudaStreamEndCapture"));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiateWithFlags(&exec, graph, 0);
  cudaGraphDestroy(graph);
  RS_RETURN_IF_ERROR(CudaStatus(made, "cudaGraphInstantiate"));
  StepGraph g;
  g.exec_ = exec;
  return std::move(g);
}

StepGraph::~StepGraph() {
  if (exec_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));
}

StepGraph::StepGraph(StepGraph&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}

StepGraph& StepGraph::operator=(StepGraph&& other) noexcept {
  if (this != &other) {
    if (exec_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));
    exec_ = std::exchange(other.exec_, nullptr);
  }
  return *this;
}

Status StepGraph::Launch(Stream stream) const {
  if (exec_ == nullptr) return Status::FailedPrecondition("StepGraph::Launch: no graph was captured");
  return CudaStatus(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), stream), "cudaGraphLaunch");
}

}  // namespace radixserve::cuda
