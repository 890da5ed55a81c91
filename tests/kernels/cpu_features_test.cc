// CPU feature detection agrees with what the kernel reports in /proc/cpuinfo, the OpenBLAS core
// type follows the feature flags (never the model number), and OpenBLAS runs the chosen core.
#include "kernels/cpu/cpu_features.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/blas.h"
#include "kernels/cpu/gemm_float.h"
#include "kernels/cpu/kernel_set.h"

namespace radixserve::kernels {
namespace {

// The kernel's feature words for this CPU: x86's "flags" line, arm64's "Features" line.
std::set<std::string> ProcCpuFlags() {
#if defined(__aarch64__)
  const char* key = "Features";
#else
  const char* key = "flags";
#endif
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

TEST(CpuFeatures, AgreeWithProcCpuinfo) {
  const std::set<std::string> flags = ProcCpuFlags();
  ASSERT_FALSE(flags.empty()) << "no flags line in /proc/cpuinfo";
  const CpuFeatures& f = DetectCpu();
#if defined(__aarch64__)
  const std::pair<const char*, bool> checks[] = {
      {"asimd", f.asimd}, {"asimddp", f.dotprod}, {"i8mm", f.i8mm}, {"bf16", f.arm_bf16},
      {"asimdhp", f.fp16}, {"sve", f.sve},        {"sve2", f.sve2},
  };
#else
  const std::pair<const char*, bool> checks[] = {
      {"avx2", f.avx2},           {"fma", f.fma},                 {"f16c", f.f16c},
      {"avx512f", f.avx512f},     {"avx512bw", f.avx512bw},       {"avx512vl", f.avx512vl},
      {"avx512dq", f.avx512dq},   {"avx512_vnni", f.avx512_vnni}, {"avx512_bf16", f.avx512_bf16},
      {"avx512_fp16", f.avx512_fp16}, {"amx_tile", f.amx_tile},   {"amx_int8", f.amx_int8},
      {"amx_bf16", f.amx_bf16},
  };
#endif
  for (const auto& [name, detected] : checks) EXPECT_EQ(detected, flags.count(name) > 0) << name;
  EXPECT_FALSE(f.vendor.empty());
}

CpuFeatures Avx2Only(const char* vendor) {
  CpuFeatures f;
  f.vendor = vendor;
  f.avx2 = f.fma = f.f16c = true;
  return f;
}
CpuFeatures WithAvx512(CpuFeatures f) {
  f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = f.avx512_vnni = true;
  return f;
}

TEST(BlasCoreType, FollowsTheFeatureFlags) {
  EXPECT_EQ(BlasCoreTypeFor(CpuFeatures{}), "");  // nothing known: OpenBLAS decides
  EXPECT_EQ(BlasCoreTypeFor(Avx2Only("GenuineIntel")), "HASWELL");
  EXPECT_EQ(BlasCoreTypeFor(Avx2Only("AuthenticAMD")), "ZEN");  // Zen 2/3
  CpuFeatures icelake = WithAvx512(Avx2Only("GenuineIntel"));
  icelake.model = 106;
  EXPECT_EQ(BlasCoreTypeFor(icelake), "SKYLAKEX");
  CpuFeatures zen4 = WithAvx512(Avx2Only("AuthenticAMD"));
  zen4.avx512_bf16 = true;
  EXPECT_EQ(BlasCoreTypeFor(zen4), "COOPERLAKE");
  // A model number OpenBLAS 0.3.21 does not know (Emerald Rapids): still the AVX-512 kernels.
  CpuFeatures emerald = WithAvx512(Avx2Only("GenuineIntel"));
  emerald.model = 207;
  emerald.avx512_bf16 = emerald.avx512_fp16 = emerald.amx_tile = emerald.amx_int8 = emerald.amx_bf16 = true;
  EXPECT_EQ(BlasCoreTypeFor(emerald), "COOPERLAKE");
  CpuFeatures half = Avx2Only("GenuineIntel");
  half.avx512f = true;  // AVX-512F alone is not what the AVX-512 kernels need
  EXPECT_EQ(BlasCoreTypeFor(half), "HASWELL");
}

TEST(CpuFeatures, ThisBuildRunsHereAndSaysWhatAnOlderCpuLacks) {
  EXPECT_TRUE(CheckCpuRunsThisBuild().ok()) << CheckCpuRunsThisBuild().ToString();
  const Status old = CheckCpuRunsThisBuild(CpuFeatures{});  // a CPU without AVX2
  if (std::string(BuildTarget()) == "scalar" || std::string(BuildTarget()) == "armv8-a") {
    EXPECT_TRUE(old.ok());
  } else {
    ASSERT_FALSE(old.ok());
    EXPECT_EQ(old.code(), StatusCode::kUnsupported);
    EXPECT_NE(old.message().find("AVX2"), std::string::npos) << old.message();
    EXPECT_NE(old.message().find("RADIXSERVE_NATIVE=OFF"), std::string::npos) << old.message();
  }
}

TEST(Blas, RunsTheCoreTypeChosenForThisCpu) {
  const char* user = std::getenv("OPENBLAS_CORETYPE");  // the user's choice wins over ours
  const std::string want = user && *user ? std::string(user) : BlasCoreTypeFor(DetectCpu());
  const Blas& blas = GetBlas();
  EXPECT_FALSE(blas.core().empty());
  if (!want.empty()) {
    EXPECT_EQ(Lower(blas.core()), Lower(want)) << blas.Describe();
  }
  const std::string info = SystemInfo();
  EXPECT_NE(info.find("gemm: OpenBLAS"), std::string::npos) << info;
  EXPECT_NE(info.find(std::string("kernels: ") + ActiveKernelSet()), std::string::npos) << info;
  // The quantised prefill path follows the kernel set: AMX tiles, VNNI's int8 GEMM, AVX2's (also
  // in the avx512 set, which has no VNNI), or the scalar set's streamed rows.
  const std::string set = ActiveKernelSet();
  const char* prefill = set == "avx512-amx"    ? "quantised prefill: int8 AMX tiles (TDPBSUD)"
                        : set == "avx512-vnni" || set == "avx512-bf16" ? "quantised prefill: int8 VNNI GEMM"
                        : set == "scalar"      ? "quantised prefill: int8 dot products streamed per row"
                                               : "quantised prefill: int8 AVX2 GEMM (maddubs)";
  EXPECT_NE(info.find(prefill), std::string::npos) << info;
  // Float prefill: the AVX-512 sets' own GEMM (BF16 pairs where the set has AVX-512 BF16), else OpenBLAS.
  EXPECT_EQ(GemmFloatRoundsActivationsToBf16(), set == "avx512-amx" || set == "avx512-bf16");
  const char* float_prefill = set == "avx512-amx" || set == "avx512-bf16"
                                  ? "float prefill: AVX-512 GEMM (BF16 weights: vdpbf16ps)"
                              : set == "avx512" || set == "avx512-vnni" ? "float prefill: AVX-512 GEMM"
                                                                        : "float prefill: OpenBLAS sgemm on F32 tiles";
  EXPECT_NE(info.find(float_prefill), std::string::npos) << info;
  // A small product through the loaded library: C = A * B^T.
  const float a[2 * 3] = {1, 2, 3, 4, 5, 6}, b[2 * 3] = {1, 0, 1, 0, 1, 0};
  float c[4] = {};
  blas.SgemmNT(2, 2, 3, a, b, c, 2);
  EXPECT_EQ(c[0], 4.0f);
  EXPECT_EQ(c[1], 2.0f);
  EXPECT_EQ(c[2], 10.0f);
  EXPECT_EQ(c[3], 5.0f);
}

TEST(KernelSets, TheBestSetThisCpuRunsIsChosenAndLowerOnesCanBe) {
  const std::vector<std::string> all = KernelSetNames();
#if defined(__aarch64__)
  ASSERT_EQ(all, (std::vector<std::string>{"scalar"}));
#else
  ASSERT_EQ(all, (std::vector<std::string>{"scalar", "avx2", "avx512", "avx512-vnni", "avx512-bf16", "avx512-amx"}));
#endif
  const std::vector<std::string> runnable = RunnableKernelSets();
  ASSERT_FALSE(runnable.empty());
  EXPECT_EQ(runnable.front(), "scalar");  // the portable fallback runs anywhere
  const CpuFeatures& f = DetectCpu();
  const bool avx2 = f.avx2 && f.fma && f.f16c;
  EXPECT_EQ(std::count(runnable.begin(), runnable.end(), "avx2"), avx2 ? 1 : 0);
  EXPECT_EQ(std::count(runnable.begin(), runnable.end(), "avx512"), avx2 && f.avx512() ? 1 : 0);
  EXPECT_EQ(std::count(runnable.begin(), runnable.end(), "avx512-vnni"), avx2 && f.avx512() && f.avx512_vnni ? 1 : 0);
  // AMX also needs Linux's grant of the tile state, which a CPU with the flags gets from any
  // kernel since 5.16.
  EXPECT_EQ(AmxTilesPermitted(), f.amx_tile && f.amx_int8);
  EXPECT_EQ(std::count(runnable.begin(), runnable.end(), "avx512-bf16"),
            avx2 && f.avx512() && f.avx512_vnni && f.avx512_bf16 ? 1 : 0);
  EXPECT_EQ(std::count(runnable.begin(), runnable.end(), "avx512-amx"),
            avx2 && f.avx512() && f.avx512_vnni && f.avx512_bf16 && f.amx_tile && f.amx_int8 ? 1 : 0);
  const char* forced = std::getenv("RADIXSERVE_KERNELS");
  EXPECT_EQ(ActiveKernelSet(), forced && *forced ? std::string(forced) : runnable.back());
  const std::string before = ActiveKernelSet();
  const Status unknown = UseKernelSet("sse9");
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
#if defined(__aarch64__)
  EXPECT_NE(unknown.message().find("(scalar)"), std::string::npos)
#else
  EXPECT_NE(unknown.message().find("scalar, avx2, avx512, avx512-vnni, avx512-bf16, avx512-amx"), std::string::npos)
#endif
      << unknown.message();
  EXPECT_EQ(ActiveKernelSet(), before);
  ASSERT_TRUE(UseKernelSet("scalar").ok());
  EXPECT_STREQ(ActiveKernelSet(), "scalar");
  ASSERT_TRUE(UseKernelSet(before).ok());
}

}  // namespace
}  // namespace radixserve::kernels
