// GGUF value and tensor types, and the block layout of each tensor type.
// Plain data; thread-safe to read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace radixserve::gguf {

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
inline constexpr uint32_t kDefaultAlignment = 32;

enum class ValueType : uint32_t {
  kUint8 = 0, kInt8 = 1, kUint16 = 2, kInt16 = 3, kUint32 = 4, kInt32 = 5, kFloat32 = 6,
  kBool = 7, kString = 8, kArray = 9, kUint64 = 10, kInt64 = 11, kFloat64 = 12,
};
std::string_view ValueTypeName(ValueType t);

// ggml tensor types; only some are computable (see model/), all are readable.
enum class TensorType : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ8_1 = 9,
  kQ2_K = 10, kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kQ8_K = 15,
  kIQ2_XXS = 16, kIQ2_XS = 17, kIQ3_XXS = 18, kIQ1_S = 19, kIQ4_NL = 20, kIQ3_S = 21,
  kIQ2_S = 22, kIQ4_XS = 23, kI8 = 24, kI16 = 25, kI32 = 26, kI64 = 27, kF64 = 28,
  kIQ1_M = 29, kBF16 = 30, kTQ1_0 = 34, kTQ2_0 = 35,
};

struct TensorTypeTraits {
  std::string_view name;
  uint32_t block_elems;   // elements per block (1 for plain types)
  uint32_t block_bytes;   // bytes per block
};
// Traits of a known type, or nullptr for a type id this reader does not know.
const TensorTypeTraits* GetTensorTypeTraits(TensorType t);
std::string TensorTypeName(TensorType t);  // "Q8_0", or "type#N" when unknown

struct Array;
// One metadata value. Arrays are held by pointer so that Value stays small.
using Value = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                           std::string, std::shared_ptr<Array>, uint64_t, int64_t, double>;
struct Array {
  ValueType elem_type = ValueType::kUint8;
  std::vector<Value> items;
};
ValueType TypeOf(const Value& v);

struct KeyValue {
  std::string key;
  Value value;
};

struct TensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ggml order: dims[0] is the contiguous (row) length
  TensorType type = TensorType::kF32;
  uint64_t offset = 0;         // from the start of the data section
  uint64_t num_elements() const;
  uint64_t num_bytes() const;  // 0 when the type is unknown
};

}  // namespace radixserve::gguf
