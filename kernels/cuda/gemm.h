// Matrix products on a CUDA device through cuBLAS: y[T][rows] = x[T][cols] · W[rows][cols]^T,
// with W an F16 weight matrix stored row-major (as GGUF stores it), x F16 activations and y F32,
// accumulated in F32. The token count T is the GEMM's M, so decode (T = batch) and prefill use
// the same call. Owns one cuBLAS handle bound to one stream, with a workspace of its own so that
// the calls record into a CUDA graph (graph.h) as they run outside one.
// Thread-safety: one caller at a time (cuBLAS handles are not shared across threads here).
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/cuda/device.h"

namespace radixserve::cuda {

class Gemm {
 public:
  static Result<std::unique_ptr<Gemm>> Create(Stream stream);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  Status F16(const uint16_t* w, int64_t rows, int64_t cols, const uint16_t* x, int64_t tokens, float* y);

 private:
  Gemm() = default;
  void* handle_ = nullptr;  // cublasHandle_t
  DeviceBuffer workspace_;
};

}  // namespace radixserve::cuda
