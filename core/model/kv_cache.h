// KvCache: the worker's K and V buffers, indexed by KV slot
// (ARCHITECTURE section 3): [layers][slots][kv_heads][head_dim], stored as
// F32 or F16 (F16 halves the memory and the bytes attention reads).
// Slot allocation lives in the scheduler; this class only holds tensors.
// Thread-safety: none; the model writes it during Forward.
#pragma once

#include <cstdint>
#include <memory>

#include "core/model/llama_config.h"
#include "core/util/status.h"
#include "kernels/cpu/attention.h"

namespace radixserve::model {

enum class KvType { kF32, kF16 };

class KvCache {
 public:
  static Result<std::unique_ptr<KvCache>> Create(const LlamaConfig& config, int64_t num_slots,
                                                 KvType type = KvType::kF32);

  KvType type() const { return type_; }
  int64_t num_slots() const { return num_slots_; }
  int32_t num_layers() const { return num_layers_; }
  int32_t kv_dim() const { return kv_dim_; }  // kv_heads * head_dim: values per slot per layer
  size_t element_bytes() const { return type_ == KvType::kF16 ? 2 : 4; }
  size_t bytes() const { return 2 * static_cast<size_t>(num_layers_) * num_slots_ * kv_dim_ * element_bytes(); }

  // Stores one slot's K and V rows (kv_dim floats each), converting to the cache type.
  void Write(int layer, int64_t slot, const float* k, const float* v);
  // Reads one slot's K or V row back as floats (tests, debugging).
  void ReadK(int layer, int64_t slot, float* out) const;
  void ReadV(int layer, int64_t slot, float* out) const;
  // The view attention kernels read.
  kernels::KvLayerView Layer(int layer) const;

 private:
  KvCache() = default;
  uint8_t* At(const std::unique_ptr<uint8_t[]>& buf, int layer, int64_t slot) const {
    return buf.get() + ((static_cast<int64_t>(layer) * num_slots_ + slot) * kv_dim_) * element_bytes();
  }
  void Read(const std::unique_ptr<uint8_t[]>& buf, int layer, int64_t slot, float* out) const;

  KvType type_ = KvType::kF32;
  int32_t num_layers_ = 0;
  int32_t kv_dim_ = 0;
  int64_t num_slots_ = 0;
  std::unique_ptr<uint8_t[]> k_;
  std::unique_ptr<uint8_t[]> v_;
};

}  // namespace radixserve::model
