// ModelBackend: one forward step of a llama-family model on one device, with the KV cache that
// device holds: what the worker runs, whichever device it is. The CPU's is a LlamaModel with a
// KvCache (MakeCpuBackend); the GPU's is CudaModel (cuda_model.h, where nvcc is found).
// Thread-safety: Forward must not run concurrently on one backend.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "core/model/forward_input.h"
#include "core/model/llama_config.h"
#include "core/util/status.h"

namespace radixserve::model {

class LlamaModel;

struct ModelBackend {
  virtual ~ModelBackend() = default;
  virtual const LlamaConfig& config() const = 0;
  // Whether this backend computes logits (false: a pipeline stage before the last).
  virtual bool last_stage() const = 0;
  // Runs the batch over the backend's KV cache (see LlamaModel::Forward); logits are host memory.
  virtual Status Forward(std::span<const SequenceInput> seqs, std::span<float> logits,
                         const ForwardOptions& options) = 0;
  // Whether Forward takes ForwardOptions::sampling (samples where the logits are).
  virtual bool samples_on_device() const { return false; }
  // For logs: "cpu (avx2, 2 threads)", "cuda: NVIDIA H200 (sm_90, ...)".
  virtual std::string Describe() const = 0;
};

// The CPU backend: `model` (shared: tests and tensor-parallel ranks may hold it too) over a KV
// cache of num_slots slots of the model's KV type.
Result<std::unique_ptr<ModelBackend>> MakeCpuBackend(std::shared_ptr<LlamaModel> model, int64_t num_slots);

}  // namespace radixserve::model
