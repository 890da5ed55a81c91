#include "core/model/kv_cache.h"

#include <cstring>
#include <new>

#include "kernels/cpu/convert.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/quantize.h"

namespace radixserve::model {

const char* KvTypeName(KvType type) {
  switch (type) {
    case KvType::kF32: return "f32";
    case KvType::kF16: return "f16";
    case KvType::kQ8_0: return "q8_0";
    case KvType::kQ4_0: return "q4_0";
  }
  return "?";
}

Result<KvType> ParseKvType(const std::string& name, bool gpu) {
  if (name == "auto") return gpu ? KvType::kF16 : KvType::kF32;
  for (KvType t : {KvType::kF32, KvType::kF16, KvType::kQ8_0, KvType::kQ4_0})
    if (name == KvTypeName(t)) return t;
  return Status::InvalidArgument("unknown KV cache type '" + name + "': auto, f32, f16, q8_0 or q4_0");
}

kernels::WeightType KvElementType(KvType type) {
  switch (type) {
    case KvType::kF32: return kernels::WeightType::kF32;
    case KvType::kF16: return kernels::WeightType::kF16;
    case KvType::kQ8_0: return kernels::WeightType::kQ8_0;
    case KvType::kQ4_0: return kernels::WeightType::kQ4_0;
  }
  return kernels::WeightType::kF32;
}

int64_t KvBytesPerToken(KvType type, int64_t layers, int64_t kv_dim) {
  return 2 * layers * kernels::KvBytes(KvElementType(type), kv_dim);
}

Status CheckKvTypeFits(KvType type, int64_t head_dim) {
  const int64_t block = kernels::GetWeightTypeInfo(KvElementType(type)).block_elems;
  if (head_dim % block != 0)
    return Status::InvalidArgument(std::string("KV cache type ") + KvTypeName(type) + " quantises each head's " +
                                   std::to_string(block) + "-value blocks; this model's head_dim " +
                                   std::to_string(head_dim) + " is not a multiple of " + std::to_string(block) +
                                   ": use kv_type f16 or f32");
  return Status::Ok();
}

Result<std::unique_ptr<KvCache>> KvCache::Create(const LlamaConfig& config, int64_t num_slots, KvType type) {
  if (num_slots <= 0) return Status::InvalidArgument("KV cache needs at least one slot, got " + std::to_string(num_slots));
  RS_RETURN_IF_ERROR(CheckKvTypeFits(type, config.head_dim));
  auto kv = std::unique_ptr<KvCache>(new KvCache());
  kv->type_ = type;
  kv->num_layers_ = config.num_layers;
  kv->kv_dim_ = config.kv_dim();
  kv->num_slots_ = num_slots;
  const size_t half = kv->bytes() / 2;
  kv->k_.reset(new (std::nothrow) uint8_t[half]());
  kv->v_.reset(new (std::nothrow) uint8_t[half]());
  if (!kv->k_ || !kv->v_)
    return Status::ResourceExhausted("cannot allocate KV cache of " + std::to_string(kv->bytes()) + " bytes");
  return kv;
}

void KvCache::Store(const float* x, uint8_t* row) {
  switch (type_) {
    case KvType::kF32: std::memcpy(row, x, kv_dim_ * sizeof(float)); return;
    case KvType::kF16: kernels::ConvertF32ToF16(x, reinterpret_cast<uint16_t*>(row), kv_dim_); return;
    case KvType::kQ8_0: kernels::QuantizeRowQ8_0(x, reinterpret_cast<kernels::BlockQ8_0*>(row), kv_dim_); return;
    case KvType::kQ4_0: kernels::QuantizeBlocks(kernels::WeightType::kQ4_0, x, row, kv_dim_); return;
  }
}

void KvCache::Write(int layer, int64_t slot, const float* k, const float* v) {
  Store(k, At(k_, layer, slot));
  Store(v, At(v_, layer, slot));
}

void KvCache::Read(const std::unique_ptr<uint8_t[]>& buf, int layer, int64_t slot, float* out) const {
  const uint8_t* row = At(buf, layer, slot);
  switch (type_) {
    case KvType::kF32: std::memcpy(out, row, kv_dim_ * sizeof(float)); return;
    case KvType::kF16: kernels::ConvertF16ToF32(reinterpret_cast<const uint16_t*>(row), out, kv_dim_); return;
    default: kernels::DequantizeBlocks(KvElementType(type_), row, out, kv_dim_); return;
  }
}

void KvCache::ReadK(int layer, int64_t slot, float* out) const { Read(k_, layer, slot, out); }
void KvCache::ReadV(int layer, int64_t slot, float* out) const { Read(v_, layer, slot, out); }

kernels::KvLayerView KvCache::Layer(int layer) const {
  kernels::KvLayerView view;
  view.k = At(k_, layer, 0);
  view.v = At(v_, layer, 0);
  view.slot_stride = kv_dim_;
  view.type = KvElementType(type_);
  return view;
}

}  // namespace radixserve::model
