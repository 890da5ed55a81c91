// The worker's CUDA backend as a module of its own (libradixserve_worker_cuda.so), loaded only
// when a worker runs with device:=cuda: the CUDA runtime and cuBLAS it links keep about 145 MiB
// resident in a process (cuBLASLt's code and zero-filled data), which a CPU worker never pays.
// The module is built with the worker from the same sources, so the two share one C++ ABI.
// Thread-safety: LoadCudaBackend may be called from any thread.
#pragma once

#include <memory>

#include "core/gguf/gguf_reader.h"
#include "core/model/kv_cache.h"
#include "core/model/model_backend.h"
#include "core/util/status.h"

namespace radixserve::nodes {

// What the worker asks of a CUDA backend (model::CudaModelOptions' fields, without its header).
struct CudaBackendOptions {
  int64_t num_slots = 0;
  model::KvType kv_type = model::KvType::kF16;
  bool decode_graphs = false;
};

// The module's one entry point: the backend, or nullptr with *status saying why.
using CudaBackendLoadFn = model::ModelBackend* (*)(const std::shared_ptr<const gguf::GgufFile>& file,
                                                  const CudaBackendOptions& options, Status* status);
inline constexpr const char kCudaBackendModule[] = "libradixserve_worker_cuda.so";
inline constexpr const char kCudaBackendEntry[] = "radixserve_worker_cuda_load";

// Loads the module that sits beside the worker's own library and runs its entry point.
Result<std::unique_ptr<model::ModelBackend>> LoadCudaBackend(std::shared_ptr<const gguf::GgufFile> file,
                                                             const CudaBackendOptions& options);

}  // namespace radixserve::nodes
