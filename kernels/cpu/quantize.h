// Quantisation of F32 rows into GGUF's block types (quant_blocks.h): the engine's own
// quantisers, for the model generator (tests and benchmarks make files of every type) and any
// tool that writes GGUF. Plain round-to-nearest with per-block scales (and one least-squares
// refinement for IQ4_NL's non-linear levels); scalar, so that the bytes are the same on every
// machine. Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "kernels/cpu/weight.h"

namespace radixserve::kernels {

// n values (a multiple of the type's block size) of x into blocks of `type` at dst
// (n / block_elems * block_bytes bytes). F32/F16/BF16 are stored as such.
void QuantizeBlocks(WeightType type, const float* x, void* dst, int64_t n);

}  // namespace radixserve::kernels
