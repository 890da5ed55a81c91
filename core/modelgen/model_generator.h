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
  gguf::TensorType weight_type = gguf::TensorType::kF32;  // F32, F16, BF16 or Q8_0
  uint64_t seed = 1;
  // Tokenizer: copied from this GGUF's tokenizer.* keys when set, else the built-in vocabulary.
  std::string tokenizer_from;
};

// Named sizes of ../shared/models/README.md: "tiny" (the built-in default), "small", "medium".
Result<ModelSpec> SpecForSize(const std::string& size);
// "f32", "f16", "bf16", "q8_0" (any case).
Result<gguf::TensorType> ParseWeightType(const std::string& name);

// F32 values encoded as `type` (F32, F16, BF16 or Q8_0; rows a multiple of 32 for Q8_0); empty for
// any other type.
std::vector<uint8_t> EncodeTensor(const std::vector<float>& values, gguf::TensorType type);

// Fills a writer with metadata, tokenizer and tensors.
Status BuildModel(const ModelSpec& spec, gguf::GgufWriter* out);
// BuildModel and write to `path` (atomically: a temp file renamed into place).
Status GenerateModel(const ModelSpec& spec, const std::string& path);

}  // namespace radixserve::modelgen
