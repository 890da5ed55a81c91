#include "core/gguf/gguf_types.h"

#include <array>

namespace radixserve::gguf {

std::string_view ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kUint8: return "uint8";
    case ValueType::kInt8: return "int8";
    case ValueType::kUint16: return "uint16";
    case ValueType::kInt16: return "int16";
    case ValueType::kUint32: return "uint32";
    case ValueType::kInt32: return "int32";
    case ValueType::kFloat32: return "float32";
    case ValueType::kBool: return "bool";
    case ValueType::kString: return "string";
    case ValueType::kArray: return "array";
    case ValueType::kUint64: return "uint64";
    case ValueType::kInt64: return "int64";
    case ValueType::kFloat64: return "float64";
  }
  return "unknown";
}

namespace {
struct TypeEntry {
  TensorType type;
  TensorTypeTraits traits;
};
// Block layouts of ggml's types (elements per block, bytes per block).
constexpr std::array<TypeEntry, 31> kTypes = {{
    {TensorType::kF32, {"F32", 1, 4}},       {TensorType::kF16, {"F16", 1, 2}},
    {TensorType::kQ4_0, {"Q4_0", 32, 18}},   {TensorType::kQ4_1, {"Q4_1", 32, 20}},
    {TensorType::kQ5_0, {"Q5_0", 32, 22}},   {TensorType::kQ5_1, {"Q5_1", 32, 24}},
    {TensorType::kQ8_0, {"Q8_0", 32, 34}},   {TensorType::kQ8_1, {"Q8_1", 32, 36}},
    {TensorType::kQ2_K, {"Q2_K", 256, 84}},  {TensorType::kQ3_K, {"Q3_K", 256, 110}},
    {TensorType::kQ4_K, {"Q4_K", 256, 144}}, {TensorType::kQ5_K, {"Q5_K", 256, 176}},
    {TensorType::kQ6_K, {"Q6_K", 256, 210}}, {TensorType::kQ8_K, {"Q8_K", 256, 292}},
    {TensorType::kIQ2_XXS, {"IQ2_XXS", 256, 66}}, {TensorType::kIQ2_XS, {"IQ2_XS", 256, 74}},
    {TensorType::kIQ3_XXS, {"IQ3_XXS", 256, 98}}, {TensorType::kIQ1_S, {"IQ1_S", 256, 50}},
    {TensorType::kIQ4_NL, {"IQ4_NL", 32, 18}},    {TensorType::kIQ3_S, {"IQ3_S", 256, 110}},
    {TensorType::kIQ2_S, {"IQ2_S", 256, 82}},     {TensorType::kIQ4_XS, {"IQ4_XS", 256, 136}},
    {TensorType::kI8, {"I8", 1, 1}},         {TensorType::kI16, {"I16", 1, 2}},
    {TensorType::kI32, {"I32", 1, 4}},       {TensorType::kI64, {"I64", 1, 8}},
    {TensorType::kF64, {"F64", 1, 8}},       {TensorType::kIQ1_M, {"IQ1_M", 256, 56}},
    {TensorType::kBF16, {"BF16", 1, 2}},     {TensorType::kTQ1_0, {"TQ1_0", 256, 54}},
    {TensorType::kTQ2_0, {"TQ2_0", 256, 66}},
}};
}  // namespace

const TensorTypeTraits* GetTensorTypeTraits(TensorType t) {
  for (const auto& e : kTypes)
    if (e.type == t) return &e.traits;
  return nullptr;
}

std::string TensorTypeName(TensorType t) {
  if (const auto* tr = GetTensorTypeTraits(t)) return std::string(tr->name);
  return "type#" + std::to_string(static_cast<uint32_t>(t));
}

ValueType TypeOf(const Value& v) {
  static constexpr ValueType kByIndex[] = {
      ValueType::kUint8,   ValueType::kInt8,  ValueType::kUint16, ValueType::kInt16, ValueType::kUint32,
      ValueType::kInt32,   ValueType::kFloat32, ValueType::kBool, ValueType::kString, ValueType::kArray,
      ValueType::kUint64,  ValueType::kInt64, ValueType::kFloat64};
  return kByIndex[v.index()];
}

uint64_t TensorInfo::num_elements() const {
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  return n;
}

uint64_t TensorInfo::num_bytes() const {
  const auto* tr = GetTensorTypeTraits(type);
  if (!tr) return 0;
  return num_elements() / tr->block_elems * tr->block_bytes;
}

}  // namespace radixserve::gguf
