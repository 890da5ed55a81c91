// The GEMM library, OpenBLAS, loaded at run time (dlopen) after the engine chose its core type
// from the CPU's feature flags: OpenBLAS picks its kernels by CPU model, and a model it does not
// know gets its oldest x86-64 kernels (0.3.21 on a Xeon family 6 model 207: "Prescott", several
// times slower). OPENBLAS_CORETYPE set by the user is kept. Loaded once; thread-safe.
#pragma once

#include <string>

#include "kernels/cpu/cpu_features.h"

namespace radixserve::kernels {

// OpenBLAS's name for the best kernels of a CPU with `f` ("COOPERLAKE", "SKYLAKEX", "HASWELL",
// "ZEN"), or "" to leave the choice to OpenBLAS.
std::string BlasCoreTypeFor(const CpuFeatures& f);

class Blas {
 public:
  // Row-major C[m][n] = A[m][k] * B[n][k]^T (lda = ldb = k, ldc given).
  void SgemmNT(int m, int n, int k, const float* a, const float* b, float* c, int ldc) const;
  void SetThreads(int n) const;
  // "OpenBLAS 0.3.21 ... core SkylakeX (chosen SKYLAKEX from the CPU flags)".
  std::string Describe() const;
  const std::string& core() const { return core_; }  // what OpenBLAS reports it runs

 private:
  friend const Blas& GetBlas();
  Blas() = default;
  using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                           int);
  SgemmFn sgemm_ = nullptr;
  void (*set_threads_)(int) = nullptr;
  std::string config_, core_, chosen_;
};

// Loads OpenBLAS on first use (aborts with a message when it cannot: nothing runs without it).
const Blas& GetBlas();

}  // namespace radixserve::kernels
