// Generates llama-architecture GGUF models with deterministic weights.
//
// Used for the built-in default model (the product never needs an external
// model to start), for speed work at fixed sizes, and by tests. Weights follow
// ../shared/models/README.md: matrices N(0, 1/fan_in), embeddings N(0, 1),
// norms 1.0. The same options and seed always give the same bytes.
// Stateless functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/gguf/gguf_types.h"
#include "core/gguf/gguf_writer.h"
#include "core/util/status.h"

namespace radixserve::modelgen {

// The types of a generated file's matrices, assigned as llama-quantize's presets do: the _M
// presets give output.weight and the attn_v/ffn_down of some layers more bits.
struct WeightTypes {
  gguf::TensorType base = gguf::TensorType::kF32;       // every matrix but those below
  gguf::TensorType output = gguf::TensorType::kF32;     // output.weight (token_embd.weight when tied)
  gguf::TensorType more_bits = gguf::TensorType::kF32;  // attn_v and ffn_down of the favoured layers
  static WeightTypes All(gguf::TensorType t) { return {t, t, t}; }
};

struct ModelSpec {
  std::string name = "radixserve-generated";
  uint32_t dim = 256;
  uint32_t layers = 4;
  uint32_t heads = 8;
  uint32_t kv_heads = 4;
  uint32_t ffn = 768;
  uint32_t context = 2048;
  float rope_base = 10000.0f;
  float rms_eps = 1e-5f;
  bool tied_output = false;
  WeightTypes weights;
  uint64_t seed = 1;
  // Tokenizer: copied from this GGUF's tokenizer.* keys when set, else the built-in vocabulary.
  std::string tokenizer_from;
};

// Named sizes of ../shared/models/README.md: "tiny" (the built-in default), "small", "medium".
Result<ModelSpec> SpecForSize(const std::string& size);
// A type name as llama-quantize spells it (any case): f32, f16, bf16, q8_0, q4_0, q4_1, q5_0,
// q5_1, iq4_nl (output.weight in Q6_K, as llama-quantize writes these), q2_k, q3_k, q4_k, q5_k,
// q6_k (every matrix), q4_k_m and q5_k_m (the mixes of section 1 of ../shared/models/ref).
Result<WeightTypes> ParseWeightType(const std::string& name);

// F32 values encoded as `type` (any type the engine runs; rows a multiple of its block size,
// quantised by kernels/cpu/quantize.h); empty for any other type.
std::vector<uint8_t> EncodeTensor(const std::vector<float>& values, gguf::TensorType type);

// Fills a writer with metadata, tokenizer and tensors.
Status BuildModel(const ModelSpec& spec, gguf::GgufWriter* out);
// BuildModel and write to `path` (atomically: a temp file renamed into place).
Status GenerateModel(const ModelSpec& spec, const std::string& path);

}  // namespace radixserve::modelgen
