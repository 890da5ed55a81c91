// Test helper: writes a small llama GGUF in memory with GgufWriter
// (deterministic weights; F32, F16, BF16, Q8_0 or any type id for refusal
// tests) and parses it into a GgufFile that owns its bytes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "core/modelgen/model_generator.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/q8_0.h"

namespace radixserve::testing_util {

struct TinyLlamaSpec {
  uint32_t dim = 64, layers = 2, heads = 4, kv_heads = 2, ffn = 96, vocab = 160, context = 256;
  uint32_t rope_dim = 0;  // 0: head_dim
  bool tied = false;
  uint32_t sliding_window = 0;  // 0: no llama.attention.sliding_window key
  gguf::TensorType type = gguf::TensorType::kF32;
  std::map<std::string, gguf::TensorType> type_override;  // per tensor name
  std::vector<std::string> skip;                           // tensors left out
  uint64_t seed = 7;
};

inline std::vector<uint8_t> EncodeTensor(const std::vector<float>& v, gguf::TensorType type) {
  std::vector<uint8_t> out = modelgen::EncodeTensor(v, type);
  if (out.empty()) {  // any other type: zero bytes of the right size (for refusal tests)
    const auto* tr = gguf::GetTensorTypeTraits(type);
    out.assign(v.size() / tr->block_elems * tr->block_bytes, 0);
  }
  return out;
}

// Holds the bytes and the parsed file together.
struct OwnedGguf {
  std::vector<uint8_t> bytes;
  std::unique_ptr<gguf::GgufFile> file;
};

inline std::shared_ptr<const gguf::GgufFile> MakeTinyLlama(const TinyLlamaSpec& s) {
  gguf::GgufWriter w;
  w.SetString("general.architecture", "llama");
  w.SetString("general.name", "tiny-test");
  w.SetU32("llama.embedding_length", s.dim);
  w.SetU32("llama.block_count", s.layers);
  w.SetU32("llama.attention.head_count", s.heads);
  w.SetU32("llama.attention.head_count_kv", s.kv_heads);
  w.SetU32("llama.feed_forward_length", s.ffn);
  w.SetU32("llama.context_length", s.context);
  w.SetF32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.SetU32("llama.rope.dimension_count", s.rope_dim ? s.rope_dim : s.dim / s.heads);
  if (s.sliding_window) w.SetU32("llama.attention.sliding_window", s.sliding_window);
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto add = [&](const std::string& name, uint32_t cols, uint32_t rows, float stddev, bool norm) {
    if (std::find(s.skip.begin(), s.skip.end(), name) != s.skip.end()) return;
    std::vector<float> v(static_cast<size_t>(cols) * rows);
    for (float& x : v) x = norm ? 1.0f + 0.1f * normal(rng) : stddev * normal(rng);
    gguf::TensorType t = norm ? gguf::TensorType::kF32 : s.type;
    if (auto it = s.type_override.find(name); it != s.type_override.end()) t = it->second;
    std::vector<uint64_t> dims = rows == 1 ? std::vector<uint64_t>{cols} : std::vector<uint64_t>{cols, rows};
    Status st = w.AddTensor(name, dims, t, EncodeTensor(v, t));
    if (!st.ok()) std::abort();
  };
  const uint32_t hd = s.dim / s.heads;
  add("token_embd.weight", s.dim, s.vocab, 1.0f, false);
  for (uint32_t l = 0; l < s.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    add(p + "attn_norm.weight", s.dim, 1, 0, true);
    add(p + "attn_q.weight", s.dim, s.heads * hd, 1.0f / std::sqrt(float(s.dim)), false);
    add(p + "attn_k.weight", s.dim, s.kv_heads * hd, 1.0f / std::sqrt(float(s.dim)), false);
    add(p + "attn_v.weight", s.dim, s.kv_heads * hd, 1.0f / std::sqrt(float(s.dim)), false);
    add(p + "attn_output.weight", s.heads * hd, s.dim, 1.0f / std::sqrt(float(s.dim)), false);
    add(p + "ffn_norm.weight", s.dim, 1, 0, true);
    add(p + "ffn_gate.weight", s.dim, s.ffn, 1.0f / std::sqrt(float(s.dim)), false);
    add(p + "ffn_up.weight", s.dim, s.ffn, 1.0f / std::sqrt(float(s.dim)), false);
    add(p + "ffn_down.weight", s.ffn, s.dim, 1.0f / std::sqrt(float(s.ffn)), false);
  }
  add("output_norm.weight", s.dim, 1, 0, true);
  if (!s.tied) add("output.weight", s.dim, s.vocab, 1.0f / std::sqrt(float(s.dim)), false);
  auto owned = std::make_shared<OwnedGguf>();
  auto bytes = w.Serialize();
  if (!bytes.ok()) std::abort();
  owned->bytes = std::move(bytes).value();
  auto file = gguf::GgufFile::Parse(owned->bytes, "tiny-test.gguf");
  if (!file.ok()) std::abort();
  owned->file = std::move(file).value();
  return std::shared_ptr<const gguf::GgufFile>(owned, owned->file.get());
}

}  // namespace radixserve::testing_util
