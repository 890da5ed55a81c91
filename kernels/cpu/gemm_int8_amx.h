// The int8 GEMM on AMX tiles: the GemmInt8Rows (gemm_int8.h) of the avx512-amx kernel set, which is
// the VNNI set with this GEMM (its own library, libradixserve_kernels_avx512_amx.so, compiled for
// AVX-512 VNNI + AMX-INT8; kernel_dispatch.cc makes the table). Each 16-row packed weight tile is
// an AMX B operand as it is and 16 tokens of the quantised batch the A operand; TDPBSUD sums each
// block's (or half-block's) integer products, and the scales and minimums are applied in floats
// in the VNNI kernel's order, so both sets give the same bits. Thread-safety: pure functions over
// caller buffers; each call configures and releases the calling thread's tiles.
#pragma once

#include <cstdint>

#include "kernels/cpu/gemm_int8.h"
#include "kernels/cpu/weight.h"

// The kernel on the CPU's tiles: only where AmxTilesPermitted() (cpu_features.h).
extern "C" void radixserve_gemm_int8_rows_amx(const radixserve::kernels::WeightView& w,
                                              const radixserve::kernels::QuantizedBatch& x, int64_t r0, int64_t r1,
                                              float* y, int64_t ldy, void* pack);
// For tests: the same kernel with its tiles emulated (amx_tiles.h), so that it runs, and is
// checked, on any CPU with AVX-512 VNNI.
extern "C" void radixserve_gemm_int8_rows_amx_emulated(const radixserve::kernels::WeightView& w,
                                                       const radixserve::kernels::QuantizedBatch& x, int64_t r0,
                                                       int64_t r1, float* y, int64_t ldy, void* pack);
