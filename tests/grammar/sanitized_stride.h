// Corpus-wide grammar tests take every kSanitizedStride-th case under the sanitizers (several
// times slower; RADIXSERVE_SANITIZED is set by radixserve_test there); Release runs them all.
#pragma once

#include <cstddef>

namespace radixserve::grammar {
#if RADIXSERVE_SANITIZED
inline constexpr size_t kSanitizedStride = 4;
#else
inline constexpr size_t kSanitizedStride = 1;
#endif
}  // namespace radixserve::grammar
