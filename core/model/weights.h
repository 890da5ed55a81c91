// Weights of a GGUF file as the kernels see them: each tensor's engine type, matrices used in
// place from the mapping, and small vectors (norms, biases) converted to F32. Every error names
// the file and the tensor. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/gguf/gguf_reader.h"
#include "core/util/status.h"
#include "kernels/cpu/weight.h"

namespace radixserve::model {

// The engine's type for a tensor's GGUF type; Unsupported names the tensor and its type.
Result<kernels::WeightType> ToWeightType(const gguf::TensorInfo& t);

// Tensor `name` as a [rows][cols] matrix (GGUF dims [cols, rows]), used in place.
Result<kernels::WeightView> GetMatrix(const gguf::GgufFile& f, const std::string& name, int64_t rows, int64_t cols);

// A 2-D tensor with whatever shape it has.
Result<kernels::WeightView> GetAnyMatrix(const gguf::GgufFile& f, const std::string& name);

// A vector of n values converted to F32 (it must be F32, F16 or BF16).
Result<std::vector<float>> GetVector(const gguf::GgufFile& f, const std::string& name, int64_t n);

}  // namespace radixserve::model
