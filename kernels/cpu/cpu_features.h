// What the CPU this process runs on offers, read once: on x86-64 with CPUID and XGETBV (an
// instruction set counts only when the OS saves its registers too), on arm64 from the kernel's
// hardware capabilities (getauxval), and the one-line summary that workers log at
// start-up and server info shows (llama.cpp's system_info line is the model). Thread-safe.
#pragma once

#include <string>

#include "core/util/status.h"

namespace radixserve::kernels {

struct CpuFeatures {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", ...
  std::string brand;   // the processor brand string
  int family = 0, model = 0;
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512_vnni = false, avx512_bf16 = false, avx512_fp16 = false;
  bool amx_tile = false, amx_int8 = false, amx_bf16 = false;
  // arm64 (getauxval AT_HWCAP / AT_HWCAP2): Advanced SIMD, SDOT/UDOT, SMMLA, BF16, FP16 arithmetic,
  // SVE, SVE2. On arm64 family/model are the MIDR's implementer and part numbers.
  bool asimd = false, dotprod = false, i8mm = false, arm_bf16 = false, fp16 = false, sve = false, sve2 = false;
  // AVX-512 F/BW/VL/DQ together: what the AVX-512 kernels need.
  bool avx512() const { return avx512f && avx512bw && avx512vl && avx512dq; }
};

// Read on first use.
const CpuFeatures& DetectCpu();

// Whether this process may use the AMX tiles: the CPU and OS have them (amx_tile, amx_int8) and
// Linux granted the process their register state (arch_prctl ARCH_REQ_XCOMP_PERM, asked for once;
// without it the first tile instruction dies of SIGILL).
bool AmxTilesPermitted();

// What the build's compiler flags target outside the kernel sets ("avx2" for the portable build,
// the build machine's widest for -march=native): the CPU must offer it (CheckCpuRunsThisBuild).
const char* BuildTarget();

// Unsupported, naming what is missing, when a CPU with `f` lacks an instruction set the build's
// flags allow the compiler to use (its code would die of SIGILL).
Status CheckCpuRunsThisBuild(const CpuFeatures& f = DetectCpu());

// "cpu: <brand> (<vendor> family F model M) | AVX2 = 1 | ... | kernels: K (...) | gemm: G".
std::string SystemInfo();

}  // namespace radixserve::kernels
