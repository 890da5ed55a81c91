#include <string>

#include "core/model/kv_cache.h"
#include "core/model/llama_model.h"
#include "core/model/model_backend.h"
#include "kernels/cpu/kernel_set.h"

namespace radixserve::model {
namespace {

class CpuBackend final : public ModelBackend {
 public:
  CpuBackend(std::shared_ptr<LlamaModel> model, std::unique_ptr<KvCache> kv)
      : model_(std::move(model)), kv_(std::move(kv)) {}
  const LlamaConfig& config() const override { return model_->config(); }
  bool last_stage() const override { return model_->last_stage(); }
  Status Forward(std::span<const SequenceInput> seqs, std::span<float> logits,
                 const ForwardOptions& options) override {
    return model_->Forward(seqs, *kv_, logits, options);
  }
  std::string Describe() const override {
    return std::string("cpu (kernels ") + kernels::ActiveKernelSet() + ", " + std::to_string(model_->num_threads()) +
           " threads, KV " + KvTypeName(kv_->type()) + " " + std::to_string(kv_->num_slots()) + " slots, " +
           std::to_string(kv_->bytes() >> 20) + " MiB)";
  }

 private:
  std::shared_ptr<LlamaModel> model_;
  std::unique_ptr<KvCache> kv_;
};

}  // namespace

Result<std::unique_ptr<ModelBackend>> MakeCpuBackend(std::shared_ptr<LlamaModel> model, int64_t num_slots) {
  if (!model) return Status::InvalidArgument("MakeCpuBackend: no model");
  RS_ASSIGN_OR_RETURN(std::unique_ptr<KvCache> kv, model->CreateKvCache(num_slots));
  return std::unique_ptr<ModelBackend>(new CpuBackend(std::move(model), std::move(kv)));
}

}  // namespace radixserve::model
