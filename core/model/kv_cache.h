// KvCache: the worker's K and V buffers, indexed by KV slot
// (ARCHITECTURE section 3): [layers][slots][kv_heads][head_dim], F32.
// Slot allocation lives in the scheduler; this class only holds tensors.
// Thread-safety: none; the model writes it during Forward.
#pragma once

#include <cstdint>
#include <memory>

#include "core/model/llama_config.h"
#include "core/util/status.h"

namespace radixserve::model {

class KvCache {
 public:
  static Result<std::unique_ptr<KvCache>> Create(const LlamaConfig& config, int64_t num_slots);

  int64_t num_slots() const { return num_slots_; }
  int32_t num_layers() const { return num_layers_; }
  int32_t kv_dim() const { return kv_dim_; }  // kv_heads * head_dim: floats per slot per layer
  size_t bytes() const { return 2 * static_cast<size_t>(num_layers_) * num_slots_ * kv_dim_ * sizeof(float); }

  float* k(int layer) { return k_.get() + static_cast<int64_t>(layer) * num_slots_ * kv_dim_; }
  float* v(int layer) { return v_.get() + static_cast<int64_t>(layer) * num_slots_ * kv_dim_; }
  float* k(int layer, int64_t slot) { return k(layer) + slot * kv_dim_; }
  float* v(int layer, int64_t slot) { return v(layer) + slot * kv_dim_; }

 private:
  KvCache() = default;
  int32_t num_layers_ = 0;
  int32_t kv_dim_ = 0;
  int64_t num_slots_ = 0;
  std::unique_ptr<float[]> k_;
  std::unique_ptr<float[]> v_;
};

}  // namespace radixserve::model
