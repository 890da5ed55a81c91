// libradixserve_worker_cuda.so: model::CudaModel behind cuda_module.h's entry point.
#include "core/model/cuda_model.h"
#include "nodes/worker/cuda_module.h"

extern "C" __attribute__((visibility("default"))) radixserve::model::ModelBackend* radixserve_worker_cuda_load(
    const std::shared_ptr<const radixserve::gguf::GgufFile>& file, const radixserve::nodes::CudaBackendOptions& options,
    radixserve::Status* status) {
  radixserve::model::CudaModelOptions co;
  co.num_slots = options.num_slots;
  co.kv_type = options.kv_type;
  co.decode_graphs = options.decode_graphs;
  auto m = radixserve::model::CudaModel::Load(file, co);
  if (!m.ok()) {
    *status = m.status();
    return nullptr;
  }
  return std::move(m).value().release();
}
