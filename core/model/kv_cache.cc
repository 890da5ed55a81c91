#include "core/model/kv_cache.h"

#include <cstring>
#include <new>

#include "kernels/cpu/convert.h"

namespace radixserve::model {

Result<std::unique_ptr<KvCache>> KvCache::Create(const LlamaConfig& config, int64_t num_slots, KvType type) {
  if (num_slots <= 0) return Status::InvalidArgument("KV cache needs at least one slot, got " + std::to_string(num_slots));
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

void KvCache::Write(int layer, int64_t slot, const float* k, const float* v) {
  if (type_ == KvType::kF16) {
    kernels::ConvertF32ToF16(k, reinterpret_cast<uint16_t*>(At(k_, layer, slot)), kv_dim_);
    kernels::ConvertF32ToF16(v, reinterpret_cast<uint16_t*>(At(v_, layer, slot)), kv_dim_);
  } else {
    std::memcpy(At(k_, layer, slot), k, kv_dim_ * sizeof(float));
    std::memcpy(At(v_, layer, slot), v, kv_dim_ * sizeof(float));
  }
}

void KvCache::Read(const std::unique_ptr<uint8_t[]>& buf, int layer, int64_t slot, float* out) const {
  if (type_ == KvType::kF16) {
    kernels::ConvertF16ToF32(reinterpret_cast<const uint16_t*>(At(buf, layer, slot)), out, kv_dim_);
  } else {
    std::memcpy(out, At(buf, layer, slot), kv_dim_ * sizeof(float));
  }
}

void KvCache::ReadK(int layer, int64_t slot, float* out) const { Read(k_, layer, slot, out); }
void KvCache::ReadV(int layer, int64_t slot, float* out) const { Read(v_, layer, slot, out); }

kernels::KvLayerView KvCache::Layer(int layer) const {
  kernels::KvLayerView view;
  view.k = At(k_, layer, 0);
  view.v = At(v_, layer, 0);
  view.slot_stride = kv_dim_;
  view.f16 = type_ == KvType::kF16;
  return view;
}

}  // namespace radixserve::model
