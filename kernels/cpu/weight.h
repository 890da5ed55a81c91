// The weight matrices kernels compute on: their element types (the GGUF block types the engine
// runs) and a view of one [rows][cols] matrix stored as GGUF lays it out (each row contiguous,
// made of whole blocks). The one place that knows each type's block size. Plain data; thread-safe.
#pragma once

#include <cstdint>

namespace radixserve::kernels {

enum class WeightType : uint8_t {
  kF32, kF16, kBF16,
  kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0, kIQ4_NL,  // 32-element blocks
  kQ2_K, kQ3_K, kQ4_K, kQ5_K, kQ6_K,           // 256-element super-blocks
};

struct WeightTypeInfo {
  const char* name;
  int32_t block_elems;  // elements per block (1 for the float types)
  int32_t block_bytes;
  uint32_t ggml_type;   // the type's id in GGUF files (ggml_type)
};

inline constexpr WeightTypeInfo GetWeightTypeInfo(WeightType t) {
  switch (t) {
    case WeightType::kF32: return {"F32", 1, 4, 0};
    case WeightType::kF16: return {"F16", 1, 2, 1};
    case WeightType::kBF16: return {"BF16", 1, 2, 30};
    case WeightType::kQ4_0: return {"Q4_0", 32, 18, 2};
    case WeightType::kQ4_1: return {"Q4_1", 32, 20, 3};
    case WeightType::kQ5_0: return {"Q5_0", 32, 22, 6};
    case WeightType::kQ5_1: return {"Q5_1", 32, 24, 7};
    case WeightType::kQ8_0: return {"Q8_0", 32, 34, 8};
    case WeightType::kIQ4_NL: return {"IQ4_NL", 32, 18, 20};
    case WeightType::kQ2_K: return {"Q2_K", 256, 84, 10};
    case WeightType::kQ3_K: return {"Q3_K", 256, 110, 11};
    case WeightType::kQ4_K: return {"Q4_K", 256, 144, 12};
    case WeightType::kQ5_K: return {"Q5_K", 256, 176, 13};
    case WeightType::kQ6_K: return {"Q6_K", 256, 210, 14};
  }
  return {"?", 1, 0, ~0u};
}

// Every type, in enum order (for tests and tools that go over all of them).
inline constexpr WeightType kAllWeightTypes[] = {
    WeightType::kF32,  WeightType::kF16,  WeightType::kBF16, WeightType::kQ4_0,   WeightType::kQ4_1,
    WeightType::kQ5_0, WeightType::kQ5_1, WeightType::kQ8_0, WeightType::kIQ4_NL, WeightType::kQ2_K,
    WeightType::kQ3_K, WeightType::kQ4_K, WeightType::kQ5_K, WeightType::kQ6_K,
};

// The engine's type for a GGUF tensor type id; false when it has none.
inline constexpr bool WeightTypeFromGgml(uint32_t ggml_type, WeightType* out) {
  for (WeightType t : kAllWeightTypes)
    if (GetWeightTypeInfo(t).ggml_type == ggml_type) {
      *out = t;
      return true;
    }
  return false;
}

inline constexpr bool IsFloatWeight(WeightType t) {
  return t == WeightType::kF32 || t == WeightType::kF16 || t == WeightType::kBF16;
}

struct WeightView {
  WeightType type = WeightType::kF32;
  const void* data = nullptr;  // rows * row_bytes() bytes
  int64_t rows = 0;
  int64_t cols = 0;  // a multiple of the type's block_elems
  int64_t row_bytes() const {
    const WeightTypeInfo info = GetWeightTypeInfo(type);
    return cols / info.block_elems * info.block_bytes;
  }
  // Rows [begin, begin + count) as a matrix of their own (fused tensors are split this way).
  WeightView Rows(int64_t begin, int64_t count) const {
    return {type, static_cast<const uint8_t*>(data) + begin * row_bytes(), count, cols};
  }
};

}  // namespace radixserve::kernels
