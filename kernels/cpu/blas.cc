#include "kernels/cpu/blas.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace radixserve::kernels {
namespace {

// cblas.h's enum values, fixed by the CBLAS standard.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

template <typename Fn>
Fn Symbol(void* lib, const char* name, const char* path) {
  void* p = ::dlsym(lib, name);
  if (p == nullptr) {
    std::fprintf(stderr, "radixserve: %s has no %s: %s\n", path, name, ::dlerror());
    std::abort();
  }
  return reinterpret_cast<Fn>(p);
}

}  // namespace

std::string BlasCoreTypeFor(const CpuFeatures& f) {
  // By feature flags, never by model number: a CPU newer than the library still gets the
  // widest kernels it can run. OpenBLAS 0.3.21 has no AMX kernels; Cooperlake's are the
  // AVX-512 ones plus BF16.
  if (f.avx512() && f.avx512_bf16) return "COOPERLAKE";
  if (f.avx512()) return "SKYLAKEX";
  if (f.avx2 && f.fma) return f.vendor == "AuthenticAMD" ? "ZEN" : "HASWELL";
  return "";
}

void Blas::SgemmNT(int m, int n, int k, const float* a, const float* b, float* c, int ldc) const {
  sgemm_(kRowMajor, kNoTrans, kTrans, m, n, k, 1.0f, a, k, b, k, 0.0f, c, ldc);
}

void Blas::SetThreads(int n) const { set_threads_(n); }

std::string Blas::Describe() const {
  std::string s = config_ + ", core " + core_;
  s += chosen_.empty() ? " (OpenBLAS's own choice)" : " (" + chosen_ + ")";
  return s;
}

const Blas& GetBlas() {
  static const Blas* blas = [] {
    auto* b = new Blas();
    if (const char* user = std::getenv("OPENBLAS_CORETYPE"); user && *user) {
      b->chosen_ = std::string("OPENBLAS_CORETYPE=") + user + " from the environment";
    } else if (std::string core = BlasCoreTypeFor(DetectCpu()); !core.empty()) {
      ::setenv("OPENBLAS_CORETYPE", core.c_str(), 1);  // read by OpenBLAS when it loads, just below
      b->chosen_ = "chosen " + core + " from the CPU flags";
    }
    const char* path = "libopenblas.so.0";
    void* lib = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      std::fprintf(stderr, "radixserve: cannot load OpenBLAS (%s): %s\n", path, ::dlerror());
      std::abort();
    }
    b->sgemm_ = Symbol<Blas::SgemmFn>(lib, "cblas_sgemm", path);
    b->set_threads_ = Symbol<void (*)(int)>(lib, "openblas_set_num_threads", path);
    b->core_ = Symbol<char* (*)()>(lib, "openblas_get_corename", path)();
    std::string config = Symbol<char* (*)()>(lib, "openblas_get_config", path)();
    // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..." -> "OpenBLAS 0.3.21".
    size_t second_space = config.find(' ', config.find(' ') + 1);
    b->config_ = config.substr(0, second_space);
    return b;
  }();
  return *blas;
}

}  // namespace radixserve::kernels
