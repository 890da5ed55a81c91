// The table of one kernel set: compiled into each set's library with RS_KERNEL_ISA (its namespace),
// RS_KERNEL_SET_NAME and RS_KERNEL_TABLE_FN (its one exported symbol) set by CMake.
#include "kernels/cpu/attention.h"
#include "kernels/cpu/convert.h"
#include "kernels/cpu/gemm_float.h"
#include "kernels/cpu/gemm_int8.h"
#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/matmul_stream.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/vec_ops.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace {
constexpr KernelTable kTable = {
    RS_KERNEL_SET_NAME, &DotF32,           &DotF16F32,        &DotBf16F32,       &Axpy,
    &RmsNorm,           &SiluMul,          &Softmax,          &SoftCap,          &RopeNorm,         &RopeNeox,         &GeluMul,          &QuantizeRowQ8_0,
    &QuantizeRowQ8Shared,
    &DequantizeRowQ8_0, &DotQ8_0,          &KvRowF32,         &AttendSlots,      &ConvertF16ToF32,  &ConvertF32ToF16,
    &ConvertBf16ToF32,  &ConvertF32ToBf16, &DequantizeBlocks, &GemmInt8Supports, &GemmInt8Rows,
    &internal::StreamRows, &GemmFloatSupports, &GemmFloatPackX, &GemmFloatRows,
};
}  // namespace
RS_KERNELS_END
}  // namespace radixserve::kernels

extern "C" __attribute__((visibility("default"))) const radixserve::kernels::KernelTable* RS_KERNEL_TABLE_FN() {
  return &radixserve::kernels::RS_KERNEL_ISA::kTable;
}
