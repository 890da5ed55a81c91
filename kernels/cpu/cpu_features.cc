#include "kernels/cpu/cpu_features.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>

#include "kernels/cpu/blas.h"
#include "kernels/cpu/gemm_float.h"
#include "kernels/cpu/gemm_int8.h"
#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/simd.h"

namespace radixserve::kernels {
namespace {

#if defined(__x86_64__)
struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

Regs CpuId(unsigned leaf, unsigned sub = 0) {
  Regs r;
  __cpuid_count(leaf, sub, r.a, r.b, r.c, r.d);
  return r;
}

bool Bit(unsigned v, int bit) { return (v >> bit) & 1u; }

uint64_t Xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

CpuFeatures Detect() {
  CpuFeatures f;
  Regs v = CpuId(0);
  const unsigned max_leaf = v.a;
  char vendor[13] = {};
  std::memcpy(vendor, &v.b, 4);
  std::memcpy(vendor + 4, &v.d, 4);
  std::memcpy(vendor + 8, &v.c, 4);
  f.vendor = vendor;
  Regs l1 = CpuId(1);
  const unsigned base_family = (l1.a >> 8) & 0xf, base_model = (l1.a >> 4) & 0xf;
  f.family = static_cast<int>(base_family == 0xf ? base_family + ((l1.a >> 20) & 0xff) : base_family);
  f.model = static_cast<int>(base_family == 0x6 || base_family == 0xf ? (((l1.a >> 16) & 0xf) << 4) | base_model
                                                                      : base_model);
  // The OS must save the registers: YMM (XCR0 bits 1-2), ZMM (5-7), AMX tiles (17-18).
  const bool osxsave = Bit(l1.c, 27);
  const uint64_t xcr0 = osxsave ? Xcr0() : 0;
  const bool os_avx = (xcr0 & 0x6) == 0x6;
  const bool os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;
  f.fma = os_avx && Bit(l1.c, 12);
  f.f16c = os_avx && Bit(l1.c, 29);
  if (max_leaf >= 7) {
    Regs l7 = CpuId(7, 0);
    Regs l7s1 = CpuId(7, 1);
    f.avx2 = os_avx && Bit(l7.b, 5);
    f.avx512f = os_avx512 && Bit(l7.b, 16);
    f.avx512dq = os_avx512 && Bit(l7.b, 17);
    f.avx512bw = os_avx512 && Bit(l7.b, 30);
    f.avx512vl = os_avx512 && Bit(l7.b, 31);
    f.avx512_vnni = os_avx512 && Bit(l7.c, 11);
    f.avx512_fp16 = os_avx512 && Bit(l7.d, 23);
    f.avx512_bf16 = os_avx512 && Bit(l7s1.a, 5);
    f.amx_bf16 = os_amx && Bit(l7.d, 22);
    f.amx_tile = os_amx && Bit(l7.d, 24);
    f.amx_int8 = os_amx && Bit(l7.d, 25);
  }
  if (CpuId(0x80000000).a >= 0x80000004) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      Regs r = CpuId(0x80000002 + i);
      std::memcpy(brand + 16 * i, &r, 16);
    }
    f.brand = brand;
    while (!f.brand.empty() && f.brand.back() == ' ') f.brand.pop_back();
    while (!f.brand.empty() && f.brand.front() == ' ') f.brand.erase(f.brand.begin());
  }
  return f;
}
#elif defined(__aarch64__)
bool Bit(unsigned long v, int bit) { return (v >> bit) & 1ul; }

// The value after "key<spaces>: " of the first /proc/cpuinfo line that starts with key.
std::string CpuInfoField(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t begin = line.find_first_not_of(" \t", colon + 1);
    return begin == std::string::npos ? "" : line.substr(begin);
  }
  return "";
}

CpuFeatures Detect() {
  CpuFeatures f;
  // Bit numbers of the kernel's arm64 uapi (asm/hwcap.h).
  const unsigned long hwcap = ::getauxval(AT_HWCAP), hwcap2 = ::getauxval(AT_HWCAP2);
  f.asimd = Bit(hwcap, 1);
  f.fp16 = Bit(hwcap, 9) && Bit(hwcap, 10);  // FPHP and ASIMDHP
  f.dotprod = Bit(hwcap, 20);
  f.sve = Bit(hwcap, 22);
  f.sve2 = Bit(hwcap2, 1);
  f.i8mm = Bit(hwcap2, 13);
  f.arm_bf16 = Bit(hwcap2, 14);
  f.vendor = "aarch64";
  f.family = static_cast<int>(std::strtol(CpuInfoField("CPU implementer").c_str(), nullptr, 0));
  f.model = static_cast<int>(std::strtol(CpuInfoField("CPU part").c_str(), nullptr, 0));
  f.brand = CpuInfoField("model name");
  return f;
}
#else
CpuFeatures Detect() { return CpuFeatures{}; }
#endif

}  // namespace

const CpuFeatures& DetectCpu() {
  static const CpuFeatures features = Detect();
  return features;
}

bool AmxTilesPermitted() {
  static const bool permitted = [] {
    const CpuFeatures& f = DetectCpu();
    if (!f.amx_tile || !f.amx_int8) return false;
#if defined(__x86_64__) && defined(__linux__) && defined(SYS_arch_prctl)
    constexpr long kReqXcompPerm = 0x1023, kXfeatureTileData = 18;  // asm/prctl.h, XFEATURE_XTILEDATA
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureTileData) == 0;
#else
    return false;
#endif
  }();
  return permitted;
}

const char* BuildTarget() {
#if RS_HAVE_AVX512_VNNI
  return "avx512-vnni";
#elif RS_HAVE_AVX512
  return "avx512";
#elif RS_HAVE_AVX2
  return "avx2";
#elif defined(__aarch64__)
  return "armv8-a";
#else
  return "scalar";
#endif
}

Status CheckCpuRunsThisBuild(const CpuFeatures& f) {
  std::string missing;
  auto need = [&](bool compiled, bool present, const char* name) {
    if (compiled && !present) missing += std::string(missing.empty() ? "" : ", ") + name;
  };
  need(RS_HAVE_AVX2, f.avx2 && f.fma && f.f16c, "AVX2/FMA/F16C");
  need(RS_HAVE_AVX512, f.avx512(), "AVX-512 F/BW/VL/DQ");
  need(RS_HAVE_AVX512_VNNI, f.avx512_vnni, "AVX-512 VNNI");
  if (missing.empty()) return Status::Ok();
  return Status::Unsupported(std::string("this build (") + BuildTarget() + ") needs " + missing +
                             ", which this CPU (" + f.brand + ") lacks: build with -DRADIXSERVE_NATIVE=OFF "
                             "(AVX2 baseline) or on this machine");
}

std::string SystemInfo() {
  const CpuFeatures& f = DetectCpu();
  auto flag = [](const char* name, bool on) { return std::string(" | ") + name + " = " + (on ? "1" : "0"); };
  std::string s = "cpu: " + (f.brand.empty() ? std::string("unknown") : f.brand) + " (" + f.vendor + " family " +
                  std::to_string(f.family) + " model " + std::to_string(f.model) + ")";
#if defined(__aarch64__)
  s += flag("ASIMD", f.asimd) + flag("DOTPROD", f.dotprod) + flag("I8MM", f.i8mm) + flag("BF16", f.arm_bf16) +
       flag("FP16", f.fp16) + flag("SVE", f.sve) + flag("SVE2", f.sve2);
#else
  s += flag("AVX2", f.avx2) + flag("FMA", f.fma) + flag("F16C", f.f16c) + flag("AVX512", f.avx512()) +
       flag("AVX512_VNNI", f.avx512_vnni) + flag("AVX512_BF16", f.avx512_bf16) + flag("AVX512_FP16", f.avx512_fp16) +
       flag("AMX_INT8", f.amx_int8) + flag("AMX_BF16", f.amx_bf16);
#endif
  s += std::string(" | kernels: ") + ActiveKernelSet() + " (of " + std::to_string(RunnableKernelSets().size()) +
       " this CPU runs; build " + BuildTarget() + ")";
  s += " | gemm: " + GetBlas().Describe();
  // The prefill path of quantised weights (decode multiplies them in place with int8 products).
  s += std::string(" | quantised prefill: ") +
       (!GemmInt8Supports(WeightType::kQ8_0)                   ? "int8 dot products streamed per row"
        : ActiveKernelSet() == std::string_view("avx512-amx")  ? "int8 AMX tiles (TDPBSUD)"
        : ActiveKernelSet() == std::string_view("avx512-vnni") ||
                ActiveKernelSet() == std::string_view("avx512-bf16") ? "int8 VNNI GEMM"
                                                                : "int8 AVX2 GEMM (maddubs)");
  // The prefill path of float weights.
  s += std::string(" | float prefill: ") +
       (!GemmFloatSupports(WeightType::kF16)    ? "OpenBLAS sgemm on F32 tiles"
        : GemmFloatRoundsActivationsToBf16() ? "AVX-512 GEMM (BF16 weights: vdpbf16ps)"
                                             : "AVX-512 GEMM");
  // AMX the CPU has but Linux did not grant: say so, rather than run VNNI silently.
  if (f.amx_int8 && f.amx_tile && !AmxTilesPermitted()) s += " (AMX present, not granted by the OS)";
  return s;
}

}  // namespace radixserve::kernels
