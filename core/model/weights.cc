#include "core/model/weights.h"

#include "kernels/cpu/matmul.h"

namespace radixserve::model {

using kernels::WeightType;
using kernels::WeightView;

// The engine's type for a tensor's GGUF type; Unsupported names the tensor and its type.
Result<WeightType> ToWeightType(const gguf::TensorInfo& t) {
  using gguf::TensorType;
  switch (t.type) {
    case TensorType::kF32: return WeightType::kF32;
    case TensorType::kF16: return WeightType::kF16;
    case TensorType::kBF16: return WeightType::kBF16;
    case TensorType::kQ4_0: return WeightType::kQ4_0;
    case TensorType::kQ4_1: return WeightType::kQ4_1;
    case TensorType::kQ5_0: return WeightType::kQ5_0;
    case TensorType::kQ5_1: return WeightType::kQ5_1;
    case TensorType::kQ8_0: return WeightType::kQ8_0;
    case TensorType::kIQ4_NL: return WeightType::kIQ4_NL;
    case TensorType::kQ2_K: return WeightType::kQ2_K;
    case TensorType::kQ3_K: return WeightType::kQ3_K;
    case TensorType::kQ4_K: return WeightType::kQ4_K;
    case TensorType::kQ5_K: return WeightType::kQ5_K;
    case TensorType::kQ6_K: return WeightType::kQ6_K;
    default:
      return Status::Unsupported("tensor " + t.name + " has type " + gguf::TensorTypeName(t.type) +
                                 ", which is not supported (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, "
                                 "Q2_K, Q3_K, Q4_K, Q5_K, Q6_K)");
  }
}

namespace {

std::string ShapeString(const std::vector<uint64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

Result<const gguf::TensorInfo*> FindWithShape(const gguf::GgufFile& f, const std::string& name,
                                              std::vector<uint64_t> dims) {
  const gguf::TensorInfo* t = f.FindTensor(name);
  if (t == nullptr) return Status::NotFound(f.name() + ": tensor " + name + " is missing");
  if (t->dims != dims)
    return Status::InvalidArgument(f.name() + ": tensor " + name + " has shape " + ShapeString(t->dims) +
                                   ", expected " + ShapeString(dims));
  return t;
}

}  // namespace

Result<WeightView> GetMatrix(const gguf::GgufFile& f, const std::string& name, int64_t rows, int64_t cols) {
  RS_ASSIGN_OR_RETURN(const gguf::TensorInfo* t,
                      FindWithShape(f, name, {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)}));
  RS_ASSIGN_OR_RETURN(WeightType type, ToWeightType(*t));
  const kernels::WeightTypeInfo info = kernels::GetWeightTypeInfo(type);
  if (cols % info.block_elems != 0)
    return Status::InvalidArgument(f.name() + ": " + info.name + " tensor " + name + " has a row length of " +
                                   std::to_string(cols) + ", not a multiple of its block size " +
                                   std::to_string(info.block_elems));
  WeightView w;
  w.type = type;
  w.data = f.TensorData(*t);
  w.rows = rows;
  w.cols = cols;
  if (static_cast<uint64_t>(w.row_bytes() * rows) != t->num_bytes())
    return Status::Corrupt(f.name() + ": tensor " + name + " byte size does not match its shape");
  return w;
}

Result<std::vector<float>> GetVector(const gguf::GgufFile& f, const std::string& name, int64_t n) {
  RS_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, FindWithShape(f, name, {static_cast<uint64_t>(n)}));
  RS_ASSIGN_OR_RETURN(WeightType type, ToWeightType(*t));
  if (!kernels::IsFloatWeight(type))
    return Status::Unsupported("tensor " + name + " is a " + kernels::GetWeightTypeInfo(type).name +
                               " vector; norm weights and biases must be F32, F16 or BF16");
  WeightView w{type, f.TensorData(*t), 1, n};
  std::vector<float> out(n);
  kernels::DequantizeRows(w, 0, 1, out.data());
  return out;
}


Result<WeightView> GetAnyMatrix(const gguf::GgufFile& f, const std::string& name) {
  const gguf::TensorInfo* t = f.FindTensor(name);
  if (t == nullptr) return Status::NotFound(f.name() + ": tensor " + name + " is missing");
  if (t->dims.size() != 2) return Status::InvalidArgument(f.name() + ": tensor " + name + " is not a matrix");
  return GetMatrix(f, name, static_cast<int64_t>(t->dims[1]), static_cast<int64_t>(t->dims[0]));
}

}  // namespace radixserve::model
