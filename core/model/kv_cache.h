// KvCache: the worker's K and V buffers, indexed by KV slot
// (ARCHITECTURE section 3): [layers][slots][kv_heads][head_dim], stored as
// F32, F16, Q8_0 or Q4_0 (F16 halves the memory and the bytes attention reads;
// Q8_0 and Q4_0 quantise each head's row in blocks of 32 with an fp16 scale, as
// llama.cpp's -ctk/-ctv, and attention reads the blocks in place).
// Slot allocation lives in the scheduler; this class only holds tensors.
// Thread-safety: none; the model writes it during Forward.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/model/llama_config.h"
#include "core/util/status.h"
#include "kernels/cpu/attention.h"

namespace radixserve::model {

enum class KvType { kF32, kF16, kQ8_0, kQ4_0 };

// The name a user gives a KV type (f32, f16, q8_0, q4_0; as llama.cpp's -ctk), and back. "auto"
// is the device's own: F32 on the CPU (llama.cpp's F32 arithmetic exactly), F16 on a GPU.
const char* KvTypeName(KvType type);
Result<KvType> ParseKvType(const std::string& name, bool gpu = false);
// The kernels' element type of a KV type.
kernels::WeightType KvElementType(KvType type);
// Bytes of one slot's K and V over every layer of a model of `layers` layers and `kv_dim` values
// (kv_heads * head_dim) per K or V row: the cost of one cached token.
int64_t KvBytesPerToken(KvType type, int64_t layers, int64_t kv_dim);
// OK when a model of this head size can hold its KV as `type`: the block types quantise each
// head's row on its own, so head_dim must be a multiple of their 32-value block.
Status CheckKvTypeFits(KvType type, int64_t head_dim);

class KvCache {
 public:
  static Result<std::unique_ptr<KvCache>> Create(const LlamaConfig& config, int64_t num_slots,
                                                 KvType type = KvType::kF32);

  KvType type() const { return type_; }
  int64_t num_slots() const { return num_slots_; }
  int32_t num_layers() const { return num_layers_; }
  int32_t kv_dim() const { return kv_dim_; }  // kv_heads * head_dim: values per slot per layer
  // Bytes of one slot's K (or V) row in one layer.
  int64_t row_bytes() const { return kernels::KvBytes(KvElementType(type_), kv_dim_); }
  size_t bytes() const { return 2 * static_cast<size_t>(num_layers_) * num_slots_ * row_bytes(); }

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
    return buf.get() + (static_cast<int64_t>(layer) * num_slots_ + slot) * row_bytes();
  }
  void Store(const float* x, uint8_t* row);
  void Read(const std::unique_ptr<uint8_t[]>& buf, int layer, int64_t slot, float* out) const;

  KvType type_ = KvType::kF32;
  int32_t num_layers_ = 0;
  int32_t kv_dim_ = 0;
  int64_t num_slots_ = 0;
  std::unique_ptr<uint8_t[]> k_;
  std::unique_ptr<uint8_t[]> v_;
};

}  // namespace radixserve::model
