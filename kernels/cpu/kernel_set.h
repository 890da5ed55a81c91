// Kernel sets: the engine's own SIMD kernels (dot products, norms, attention, Q8_0, the decode
// matmul rows, conversions) are compiled once per instruction set into their own libraries
// (libradixserve_kernels_{scalar,avx2,avx512,avx512_vnni}.so; the avx512-bf16 set is the VNNI one with
// the float GEMM of libradixserve_kernels_avx512_bf16.so, the avx512-amx set that one with the int8
// GEMM of libradixserve_kernels_avx512_amx.so), and the set this CPU runs best is
// chosen at run time from its feature flags, so that one build serves every x86-64 CPU.
// RADIXSERVE_KERNELS=<set> chooses a lower one (to compare or test them).
//
// Inside a set's library the kernel headers declare its functions in namespace
// radixserve::kernels::<RS_KERNEL_ISA> (RS_KERNELS_BEGIN/END); everywhere else they declare the
// dispatching functions of radixserve::kernels. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/status.h"

#if defined(RS_KERNEL_ISA)
#define RS_KERNELS_BEGIN namespace RS_KERNEL_ISA {
#define RS_KERNELS_END }
#else
#define RS_KERNELS_BEGIN
#define RS_KERNELS_END
#endif

namespace radixserve::kernels {

struct BlockQ8_0;
struct KvLayerView;
struct WeightView;
struct QuantizedActivations;
struct QuantizedBatch;
enum class WeightType : uint8_t;

// One set's entry points, in the order of the kernel headers.
struct KernelTable {
  const char* name;
  float (*dot_f32)(const float*, const float*, int64_t);
  float (*dot_f16_f32)(const uint16_t*, const float*, int64_t);
  float (*dot_bf16_f32)(const uint16_t*, const float*, int64_t);
  void (*axpy)(float, const float*, float*, int64_t);
  void (*rms_norm)(const float*, const float*, float, float*, int64_t);
  void (*silu_mul)(const float*, const float*, float*, int64_t);
  void (*softmax)(float*, int64_t);
  void (*soft_cap)(float*, int64_t, float);
  void (*rope_norm)(float*, int, int, int, const float*);
  void (*rope_neox)(float*, int, int, int, const float*);
  void (*gelu_mul)(const float*, const float*, float*, int64_t);
  void (*quantize_row_q8_0)(const float*, BlockQ8_0*, int64_t);
  void (*quantize_row_q8_shared)(const float*, BlockQ8_0*, int64_t, int);
  void (*dequantize_row_q8_0)(const BlockQ8_0*, float*, int64_t);
  float (*dot_q8_0)(const BlockQ8_0*, const BlockQ8_0*, int64_t);
  const float* (*kv_row_f32)(const void*, const KvLayerView&, int, int32_t, int, float*);
  void (*attend_slots)(const float*, int, const KvLayerView&, int, const int32_t*, int64_t, int, float, float*,
                       float*, float);
  void (*convert_f16_to_f32)(const uint16_t*, float*, int64_t);
  void (*convert_f32_to_f16)(const float*, uint16_t*, int64_t);
  void (*convert_bf16_to_f32)(const uint16_t*, float*, int64_t);
  void (*convert_f32_to_bf16)(const float*, uint16_t*, int64_t);
  void (*dequantize_blocks)(WeightType, const void*, float*, int64_t);
  bool (*gemm_int8_supports)(WeightType);
  void (*gemm_int8_rows)(const WeightView&, const QuantizedBatch&, int64_t, int64_t, float*, int64_t, void*);
  void (*stream_rows)(const WeightView&, const float*, const QuantizedActivations&, int64_t, int64_t, int64_t, float*);
  bool (*gemm_float_supports)(WeightType);
  void (*gemm_float_pack_x)(WeightType, const float*, int64_t, int64_t, void*, int64_t, int64_t);
  void (*gemm_float_rows)(const WeightView&, const void*, int64_t, int64_t, int64_t, float*, int64_t, void*);
};

// Every set, best last: "scalar", "avx2", "avx512", "avx512-vnni", "avx512-bf16" (the VNNI set
// with its float GEMM multiplying BF16 weights in BF16 pairs), "avx512-amx" (the BF16 set with its
// int8 GEMM on AMX tiles).
std::vector<std::string> KernelSetNames();
// The sets this CPU can run.
std::vector<std::string> RunnableKernelSets();
// The set in use (chosen on first use: RADIXSERVE_KERNELS if runnable, else the best runnable).
const char* ActiveKernelSet();
// Switches to `name`: InvalidArgument for an unknown name, Unsupported when this CPU cannot run
// it. For tests and benchmarks; not while kernels run on other threads.
Status UseKernelSet(std::string_view name);

}  // namespace radixserve::kernels
