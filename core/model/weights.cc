#include "core/model/weights.h"

#include "kernels/cpu/matmul.h"

namespace radixserve::model {

using kernels::WeightType;
using kernels::WeightView;

// The engine's type for a tensor's GGUF type; Unsupported names the tensor and its type.
Result<WeightType> ToWeightType(const gguf::TensorInfo& t) {
  WeightType w;
  if (kernels::WeightTypeFromGgml(static_cast<uint32_t>(t.type), &w)) return w;
  std::string known;
  for (WeightType k : kernels::kAllWeightTypes) known += std::string(known.empty() ? "" : ", ") + GetWeightTypeInfo(k).name;
  return Status::Unsupported("tensor " + t.name + " has type " + gguf::TensorTypeName(t.type) +
                             ", which is not supported (" + known + ")");
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
