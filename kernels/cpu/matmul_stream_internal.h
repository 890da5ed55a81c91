// What the streaming kernels' files (matmul_stream*.cc, one per instruction set) share:
// the entry points of the per-set files, which StreamRows (matmul_stream.cc) dispatches to;
// the helpers they all use (Row, ByTokens).
// Internal to kernels/cpu; compiled into each kernel set, in its namespace. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/cpu/kernel_set.h"
#include "kernels/cpu/matmul_stream.h"
#include "kernels/cpu/weight.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace internal {

// Not inline, as before the split into files: declared inline, GCC inlines it into every row loop
// and their code changes.
[[maybe_unused]] static const uint8_t* Row(const WeightView& w, int64_t r) {
  return static_cast<const uint8_t*>(w.data) + r * w.row_bytes();
}

// Calls fn(std::integral_constant<int, nt>) for nt in 1..4: a tile's token count as a constant.
template <class Fn>
inline void ByTokens(int nt, Fn&& fn) {
  switch (nt) {
    case 4: return fn(std::integral_constant<int, 4>{});
    case 3: return fn(std::integral_constant<int, 3>{});
    case 2: return fn(std::integral_constant<int, 2>{});
    default: return fn(std::integral_constant<int, 1>{});
  }
}

// The contract of StreamRows; each is defined in the sets named only.
// F32/F16/BF16 weights in AVX-512 FMA tiles (matmul_stream_avx512.cc: avx512, avx512-vnni).
void StreamRowsFloatAvx512(const WeightView& w, const float* x, int64_t n, int64_t r0, int64_t r1, float* y);
// Block-type weights against xq in 256-bit int8 tiles (matmul_stream_avx2.cc: avx2, avx512);
// false for a type without an int8 decoder.
bool StreamRowsInt8Avx2(const WeightView& w, const QuantizedActivations& xq, int64_t n, int64_t r0, int64_t r1,
                        float* y);
// The same with two blocks per step in 512-bit VNNI tiles (matmul_stream_avx512_vnni.cc: avx512-vnni).
bool StreamRowsInt8Vnni(const WeightView& w, const QuantizedActivations& xq, int64_t n, int64_t r0, int64_t r1,
                        float* y);

}  // namespace internal
RS_KERNELS_END
}  // namespace radixserve::kernels
