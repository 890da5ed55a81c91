#include "core/model/kv_cache.h"

#include <new>

namespace radixserve::model {

Result<std::unique_ptr<KvCache>> KvCache::Create(const LlamaConfig& config, int64_t num_slots) {
  if (num_slots <= 0) return Status::InvalidArgument("KV cache needs at least one slot, got " + std::to_string(num_slots));
  auto kv = std::unique_ptr<KvCache>(new KvCache());
  kv->num_layers_ = config.num_layers;
  kv->kv_dim_ = config.kv_dim();
  kv->num_slots_ = num_slots;
  const int64_t floats = static_cast<int64_t>(config.num_layers) * num_slots * config.kv_dim();
  kv->k_.reset(new (std::nothrow) float[floats]());
  kv->v_.reset(new (std::nothrow) float[floats]());
  if (!kv->k_ || !kv->v_)
    return Status::ResourceExhausted("cannot allocate KV cache of " + std::to_string(kv->bytes()) + " bytes");
  return kv;
}

}  // namespace radixserve::model
