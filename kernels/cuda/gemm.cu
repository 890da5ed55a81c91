#include "kernels/cuda/gemm.h"

#include <climits>

#include "kernels/cuda/cuda_check.h"

namespace radixserve::cuda {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

Result<std::unique_ptr<Gemm>> Gemm::Create(Stream stream) {
  std::unique_ptr<Gemm> g(new Gemm());
  cublasHandle_t h = nullptr;
  RS_RETURN_IF_ERROR(CublasStatus(cublasCreate(&h), "cublasCreate"));
  g->handle_ = h;
  RS_RETURN_IF_ERROR(CublasStatus(cublasSetStream(h, stream), "cublasSetStream"));
  // Set after the stream (setting a stream resets it): the size cuBLAS advises for Hopper.
  RS_ASSIGN_OR_RETURN(g->workspace_, DeviceBuffer::Allocate(kWorkspaceBytes));
  RS_RETURN_IF_ERROR(CublasStatus(cublasSetWorkspace(h, g->workspace_.data(), kWorkspaceBytes), "cublasSetWorkspace"));
  return std::move(g);
}

Gemm::~Gemm() {
  if (handle_) cublasDestroy(static_cast<cublasHandle_t>(handle_));
}

Status Gemm::F16(const uint16_t* w, int64_t rows, int64_t cols, const uint16_t* x, int64_t tokens, float* y) {
  if (rows > INT_MAX || cols > INT_MAX || tokens > INT_MAX)
    return Status::InvalidArgument("Gemm::F16: a dimension exceeds cuBLAS's int range");
  if (tokens == 0) return Status::Ok();
  // cuBLAS is column-major: row-major W is W^T [cols x rows] (ld cols), row-major x is x^T
  // [cols x tokens] (ld cols); C = (W^T)^T x^T = W x^T is [rows x tokens], row-major y[tokens][rows].
  const float alpha = 1.0f, beta = 0.0f;
  return CublasStatus(cublasGemmEx(static_cast<cublasHandle_t>(handle_), CUBLAS_OP_T, CUBLAS_OP_N,
                                   static_cast<int>(rows), static_cast<int>(tokens), static_cast<int>(cols), &alpha, w,
                                   CUDA_R_16F, static_cast<int>(cols), x, CUDA_R_16F, static_cast<int>(cols), &beta, y,
                                   CUDA_R_32F, static_cast<int>(rows), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                      "cublasGemmEx (F16 x F16 -> F32)");
}

}  // namespace radixserve::cuda
