// LlamaModel: the forward pass of the llama family (llama, qwen2, qwen3, qwen3moe, phi3, gemma,
// gemma2, gemma3, granite, smollm3; see LlamaConfig for what differs; qwen3moe's mixture of
// experts: moe.h) on the CPU over a slot-indexed KV cache.
//
// Sliding-window layers (Mistral; gemma2/gemma3's local layers) keep every position in the KV
// cache and mask keys with pos_q - pos_k >= window per layer, as llama.cpp's swa_full does; so a
// cached prefix of any length is reused as is, across the window boundary too.
//
// One Forward call runs a batch that mixes prefill, extend-after-a-cached-
// prefix and decode sequences. Each sequence gives its cached length, its new
// tokens and the KV slots of ALL its positions: slots [0, cached_len) are
// read, slots [cached_len, cached_len + n_new) are written and then read.
// Attention reads only the sequence's own slots (causal within new tokens).
// Sequences may share (read) prefix slots; the slots written in one call must
// be distinct.
//
// Weights are used in place from the GGUF mapping (every WeightType, mixed per tensor; fused
// tensors are split into row ranges); norm vectors and biases are copied to F32. A file with a
// tensor this forward pass would not use is refused, naming the tensor. Scratch buffers live in the model and only
// grow, so a decode step does not allocate once warm.
//
// Thread-safety: Load is thread-safe; Forward must not run concurrently on the
// same instance (it uses the instance's scratch and thread pool). The
// GgufFile is shared and must stay alive (held by shared_ptr).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/model/forward_input.h"
#include "core/model/kv_cache.h"
#include "core/model/llama_config.h"
#include "core/model/tensor_parallel.h"
#include "core/model/weights.h"
#include "core/util/status.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/thread_pool.h"

namespace radixserve::model {

struct ModelOptions {
  int num_threads = 2;            // compute threads (the caller's thread counts as one)
  KvType kv_type = KvType::kF32;  // element type of caches made by CreateKvCache
  // Tensor parallelism (tensor_parallel.h): this rank's collective; the model then computes only
  // its rank's shard (the rows of each matrix it reads), and its KV cache holds only its K/V heads.
  // Null: the whole model.
  // Not owned; it must outlive the model.
  Collective* collective = nullptr;
  // Pipeline parallelism: this stage runs layers [layer_begin, layer_end) (-1: through the last).
  // The first stage embeds tokens, the last one computes logits; its KV cache holds its layers only.
  int layer_begin = 0;
  int layer_end = -1;
  // The served context (served_context.h: the `context` launch argument, llama.cpp's n_ctx);
  // 0: ServedContext's default. It picks phi3's LongRoPE factors as llama.cpp's n_ctx does
  // (LlamaConfig::uses_long_rope_factors). More than the file's context_length is refused.
  int64_t context = 0;
};

class LlamaModel {
 public:
  static Result<std::unique_ptr<LlamaModel>> Load(std::shared_ptr<const gguf::GgufFile> file,
                                                  const ModelOptions& options);
  ~LlamaModel();

  const LlamaConfig& config() const { return config_; }
  // ModelOptions::context as ServedContext resolved it.
  int32_t served_context() const { return served_context_; }
  int num_threads() const { return pool_->num_threads(); }

  // A KV cache shaped for this model (this rank's K/V heads), of ModelOptions::kv_type.
  Result<std::unique_ptr<KvCache>> CreateKvCache(int64_t num_slots) const {
    return KvCache::Create(kv_config_, num_slots, kv_type_);
  }
  const TpShard& shard() const { return shard_; }
  // The layers this instance runs, [layer_begin, layer_end); all of them without pipeline stages.
  int layer_begin() const { return layer_begin_; }
  int layer_end() const { return layer_end_; }
  bool first_stage() const { return layer_begin_ == 0; }
  bool last_stage() const { return layer_end_ == config_.num_layers; }

  // Runs the batch; see the class comment. Invalid inputs give InvalidArgument
  // and leave the KV cache untouched.
  Status Forward(std::span<const SequenceInput> seqs, KvCache& kv, std::span<float> logits,
                 const ForwardOptions& options = {});

 private:
  using Layer = LayerWeights;
  struct Workspace;

  LlamaModel() = default;
  Status LoadWeights();
  Status ShardWeights();  // keeps this rank's part of each layer
  Status Validate(std::span<const SequenceInput> seqs, const KvCache& kv, std::span<float> logits,
                  const ForwardOptions& options, int64_t* total_tokens) const;
  void Attention(int layer, std::span<const SequenceInput> seqs, KvCache& kv, int64_t total_tokens);
  // out (T x w's full output) = w x in; with tensor parallelism `in` holds this rank's in_cols of
  // each row and `w` its output rows: the ranks gather inputs and outputs around the product.
  void ScaleLogits(std::span<float> logits) const;  // granite's logit divisor, gemma2's final soft-cap
  Status Project(const kernels::WeightView& w, const float* in, int64_t in_cols, int64_t T, float* out);

  std::shared_ptr<const gguf::GgufFile> file_;
  LlamaConfig config_;
  LlamaConfig kv_config_;  // config_ with this rank's K/V heads: the shape of its KV cache
  TpShard shard_;
  Collective* collective_ = nullptr;
  int layer_begin_ = 0, layer_end_ = 0;
  int32_t served_context_ = 0;
  KvType kv_type_ = KvType::kF32;
  kernels::WeightView token_embd_, output_;
  std::vector<float> output_norm_;
  std::vector<Layer> layers_;
  std::vector<float> rope_inv_freq_;  // [rope_dim / 2], rope_freqs.weight's (or LongRoPE's chosen) divisors applied
  std::vector<float> rope_inv_freq_swa_;  // the local layers' (gemma3: rope.freq_base_swa)
  std::unique_ptr<kernels::ThreadPool> pool_;
  std::unique_ptr<kernels::MatMulScratch> matmul_scratch_;
  std::unique_ptr<Workspace> ws_;
};

}  // namespace radixserve::model
