// Turns CUDA runtime and cuBLAS results into Status values (for the .cu files of kernels/cuda).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

#include "core/util/status.h"

namespace radixserve::cuda {

inline Status CudaStatus(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::Ok();
  return Status::Internal(std::string(what) + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

inline Status CublasStatus(cublasStatus_t st, const char* what) {
  if (st == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return Status::Internal(std::string(what) + ": " + cublasGetStatusString(st));
}

// After a kernel launch: a bad configuration shows here, a fault at the next synchronisation.
inline Status LaunchStatus(const char* kernel) { return CudaStatus(cudaGetLastError(), kernel); }

}  // namespace radixserve::cuda
