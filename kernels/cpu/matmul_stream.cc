// StreamRows: the dispatch to the per-instruction-set files (matmul_stream_internal.h);
// the generic path: the scalar set's, and the other sets' for the types their files do not take.
#include "kernels/cpu/matmul_stream.h"

#include <cstdint>
#include <vector>

#include "kernels/cpu/matmul_stream_internal.h"
#include "kernels/cpu/q8_0.h"
#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/vec_ops.h"

namespace radixserve::kernels {
RS_KERNELS_BEGIN
namespace internal {
namespace {

// A per-thread row buffer for dequantised block-type rows (grows once, then reused).
float* RowBuffer(int64_t floats) {
  thread_local std::vector<float> buffer;
  if (static_cast<int64_t>(buffer.size()) < floats) buffer.resize(floats);
  return buffer.data();
}

// Fallback: one dot product per (row, token); block types other than Q8_0 are dequantised a
// row at a time into L1 and dotted in F32.
void StreamRowsGeneric(const WeightView& w, const float* x, const BlockQ8_0* xq, int64_t n, int64_t r0, int64_t r1,
                       float* y) {
  const int64_t rows = w.rows, cols = w.cols, xq_blocks = cols / kQ8BlockSize;
  const bool dequantize = !IsFloatWeight(w.type) && w.type != WeightType::kQ8_0;
  float* buffer = dequantize ? RowBuffer(cols) : nullptr;
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* wr = Row(w, r);
    if (dequantize) DequantizeBlocks(w.type, wr, buffer, cols);
    for (int64_t t = 0; t < n; ++t) {
      float v = 0.0f;
      switch (w.type) {
        case WeightType::kF32: v = DotF32(reinterpret_cast<const float*>(wr), x + t * cols, cols); break;
        case WeightType::kF16: v = DotF16F32(reinterpret_cast<const uint16_t*>(wr), x + t * cols, cols); break;
        case WeightType::kBF16: v = DotBf16F32(reinterpret_cast<const uint16_t*>(wr), x + t * cols, cols); break;
        case WeightType::kQ8_0: v = DotQ8_0(reinterpret_cast<const BlockQ8_0*>(wr), xq + t * xq_blocks, cols); break;
        default: v = DotF32(buffer, x + t * cols, cols); break;
      }
      y[t * rows + r] = v;
    }
  }
}

}  // namespace

void StreamRows(const WeightView& w, const float* x, const QuantizedActivations& xq, int64_t n, int64_t r0,
                int64_t r1, float* y) {
#if RS_HAVE_AVX2
  switch (w.type) {
    case WeightType::kF32:
    case WeightType::kF16:
    case WeightType::kBF16:
#if RS_HAVE_AVX512
      return StreamRowsFloatAvx512(w, x, n, r0, r1, y);
#else
      break;
#endif
    default:
#if RS_HAVE_AVX512_VNNI
      if (StreamRowsInt8Vnni(w, xq, n, r0, r1, y)) return;
#else
      if (StreamRowsInt8Avx2(w, xq, n, r0, r1, y)) return;
#endif
      break;
  }
#endif
  StreamRowsGeneric(w, x, xq.blocks, n, r0, r1, y);
}

}  // namespace internal
RS_KERNELS_END
}  // namespace radixserve::kernels
