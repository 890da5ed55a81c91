// gemm_candidates: the GEMM libraries radixserve could use for prefill, measured on one shape.
//
// Built and run by bench/compare_gemm.sh (oneDNN and BLIS are not radixserve dependencies; the
// script unpacks Debian's packages into a private folder). One product C[M x N] = A[M x K] * W^T,
// W being [N x K] as a model's weight matrix is stored, timed as the best of several runs:
//   cblas LIB         cblas_sgemm from a shared library (OpenBLAS, BLIS), F32;
//   dnnl f32|bf16|int8  oneDNN's matmul primitive, weights reordered once into its own layout
//                      (as a loaded model would keep them), F32 output; prints the kernel chosen.
//
// usage: gemm_candidates cblas LIB | dnnl f32|bf16|int8   [M K N] (default 512 768 2048)
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

namespace {

using Clock = std::chrono::steady_clock;

template <typename Fn>
double BestSeconds(Fn&& run) {
  run();  // warm-up: first-touch, library start-up
  double best = 1e30;
  for (int i = 0; i < 10; ++i) {
    auto t0 = Clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

int Cblas(const char* lib_path, int m, int k, int n) {
  void* lib = ::dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", lib_path, ::dlerror());
    return 1;
  }
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                         float*, int);
  auto sgemm = reinterpret_cast<Sgemm>(::dlsym(lib, "cblas_sgemm"));
  if (sgemm == nullptr) {
    std::fprintf(stderr, "%s has no cblas_sgemm\n", lib_path);
    return 1;
  }
  std::string what = lib_path;
  if (auto core = reinterpret_cast<char* (*)()>(::dlsym(lib, "openblas_get_corename"))) what += ", core " + std::string(core());
  if (auto arch = reinterpret_cast<int (*)()>(::dlsym(lib, "bli_arch_query_id"))) {
    auto name = reinterpret_cast<const char* (*)(int)>(::dlsym(lib, "bli_arch_string"));
    what += ", arch " + std::string(name ? name(arch()) : "?");
  }
  std::vector<float> a(static_cast<size_t>(m) * k, 0.25f), w(static_cast<size_t>(n) * k, 0.5f), c(static_cast<size_t>(m) * n);
  constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
  const double s = BestSeconds([&] { sgemm(kRowMajor, kNoTrans, kTrans, m, n, k, 1.0f, a.data(), k, w.data(), k, 0.0f, c.data(), n); });
  std::printf("cblas_sgemm f32 | %s | %.0f GFLOP/s\n", what.c_str(), 2.0 * m * n * k / s / 1e9);
  return 0;
}

int Dnnl(const std::string& type, int m, int k, int n) {
  using dnnl::memory;
  using dt = memory::data_type;
  using tag = memory::format_tag;
  const dt src_t = type == "f32" ? dt::f32 : type == "bf16" ? dt::bf16 : dt::u8;
  const dt wei_t = type == "f32" ? dt::f32 : type == "bf16" ? dt::bf16 : dt::s8;
  if (type != "f32" && type != "bf16" && type != "int8") {
    std::fprintf(stderr, "dnnl type must be f32, bf16 or int8\n");
    return 2;
  }
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(eng);
  memory::desc src_md({m, k}, src_t, tag::ab);
  memory::desc wei_any({k, n}, wei_t, tag::any);
  memory::desc wei_plain({k, n}, wei_t, tag::ba);  // [N x K] row-major, read as K x N
  memory::desc dst_md({m, n}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_any, dst_md), eng);
  memory src(src_md, eng), wei_user(wei_plain, eng), wei(pd.weights_desc(), eng), dst(dst_md, eng);
  std::fill_n(static_cast<uint8_t*>(src.get_data_handle()), src_md.get_size(), 1);
  std::fill_n(static_cast<uint8_t*>(wei_user.get_data_handle()), wei_plain.get_size(), 1);
  dnnl::reorder(wei_user, wei).execute(stream, wei_user, wei);  // once, at "load"
  dnnl::matmul mm(pd);
  const double s = BestSeconds([&] {
    mm.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    stream.wait();
  });
  std::printf("oneDNN %s matmul %s | %s | %.0f GFLOP/s\n", dnnl_version()->major == 2 ? "2" : "?", type.c_str(),
              pd.impl_info_str(), 2.0 * m * n * k / s / 1e9);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gemm_candidates cblas LIB | dnnl f32|bf16|int8 [M K N]\n");
    return 2;
  }
  const int m = argc > 5 ? std::atoi(argv[3]) : 512, k = argc > 5 ? std::atoi(argv[4]) : 768,
            n = argc > 5 ? std::atoi(argv[5]) : 2048;
  const std::string mode = argv[1];
  if (mode == "cblas") return Cblas(argv[2], m, k, n);
  if (mode == "dnnl") return Dnnl(argv[2], m, k, n);
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
