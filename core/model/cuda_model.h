// CudaModel: the llama-family forward pass of LlamaModel (same inputs, same outputs) on one CUDA
// device, for servers with an NVIDIA GPU.
//
// Weights are uploaded once at load as F16: F16 tensors as they are, every other type (F32, BF16,
// the block types) dequantized on the host and rounded to F16; norms and biases stay F32. Every
// projection is one cuBLAS GEMM with the step's token count as M (kernels/cuda/gemm.h). The KV
// cache lives on the device, [layers][slots][kv_dim] in F16 or F32, written by slot id.
//
// A step stages its token ids, positions, the new tokens' slots and the sequences' slot rows in
// one pinned host buffer (laid out by core/model/step_staging.h) and copies it in with one
// transfer; activations live in device scratch that only grows, so a warm decode step allocates
// nothing; the logits come back in one copy, or, for a step that samples here
// (ForwardOptions::sampling, staged with the inputs), each row's token, log-probability and top
// logprobs, chosen on the device (kernels/cuda/sampling.h).
//
// Decode graphs (CudaModelOptions::decode_graphs): a decode step (one new token a sequence, last
// logits) whose batch size and padded slot-row width ran once eagerly is captured as a CUDA
// graph (kernels/cuda/graph.h) and replayed from then on, the least recently run of at most 64
// giving way (core/model/decode_graph_cache.h); graphs are dropped when scratch grows
// (their buffers go), and a capture that fails turns them off with a warning, the step running
// eagerly. Off by default until a GPU run measures them.
//
// Not yet: tensor and pipeline parallelism (refused at load).
// Thread-safety: Load is thread-safe; Forward must not run concurrently on one instance.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/model/forward_input.h"
#include "core/model/kv_cache.h"
#include "core/model/llama_config.h"
#include "core/model/model_backend.h"
#include "core/util/status.h"

namespace radixserve::model {

struct CudaModelOptions {
  int device = 0;
  KvType kv_type = KvType::kF16;
  int64_t num_slots = 0;  // KV slots on the device (> the scheduler's highest slot id)
  bool decode_graphs = false;
};

class CudaModel final : public ModelBackend {
 public:
  static Result<std::unique_ptr<CudaModel>> Load(std::shared_ptr<const gguf::GgufFile> file,
                                                 const CudaModelOptions& options);
  ~CudaModel() override;

  const LlamaConfig& config() const override { return config_; }
  bool last_stage() const override { return true; }
  bool samples_on_device() const override { return true; }
  std::string Describe() const override;
  int64_t num_slots() const { return num_slots_; }
  KvType kv_type() const { return kv_type_; }
  // The device, for logs: "NVIDIA H200 (sm_90, 132 SMs, 140 GiB)".
  const std::string& device_name() const { return device_name_; }

  // Runs the batch (see LlamaModel::Forward); logits are host memory. Pipeline fields of
  // `options` must be empty. Invalid inputs give InvalidArgument and leave the KV cache untouched.
  Status Forward(std::span<const SequenceInput> seqs, std::span<float> logits,
                 const ForwardOptions& options) override;

  // One slot's K or V row of a layer, as floats (tests).
  Status ReadKv(int layer, int64_t slot, std::vector<float>* k, std::vector<float>* v) const;

  // Decode steps replayed from a graph so far, and graphs captured (tests, benchmarks).
  int64_t graph_replays() const;
  int64_t graphs_captured() const;

 private:
  struct Impl;
  CudaModel();
  LlamaConfig config_;
  int64_t num_slots_ = 0;
  int device_ = 0;  // selected again by each call: the CUDA runtime's current device is per thread
  KvType kv_type_ = KvType::kF16;
  std::string device_name_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace radixserve::model
