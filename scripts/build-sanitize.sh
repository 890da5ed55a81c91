#!/usr/bin/env bash
# Configures and builds the sanitizer tree (build-sanitize/): clang-14 with AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer's coverage instrumentation in every library, so that one
# build serves both the sanitizer run of every test and the fuzz targets (RADIXSERVE_FUZZ=ON).
#   scripts/build-sanitize.sh                    # everything (tests, tools, plugins, fuzz targets)
#   scripts/build-sanitize.sh fuzz_gguf ...      # only these targets
# Environment: RADIXSERVE_SANITIZE_BUILD_DIR (default build-sanitize/), RADIXSERVE_JOBS, CC/CXX.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RADIXSERVE_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
jobs="${RADIXSERVE_JOBS:-$(nproc)}"
export CC="${CC:-clang-14}" CXX="${CXX:-clang++-14}"
command -v "$CXX" >/dev/null || { echo "build-sanitize.sh: $CXX not found (scripts/install-deps.sh installs clang-14)" >&2; exit 1; }
# Optimised so that the model-running tests stay fast; line tables only (for stack traces) keep
# the objects and the links small; asserts stay on.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only" \
  -DRADIXSERVE_FUZZ=ON -DRADIXSERVE_ENABLE_CUDA=OFF -DRADIXSERVE_BUILD_BENCHMARKS=OFF >/dev/null
if [ $# -gt 0 ]; then
  cmake --build "$build" -j "$jobs" --target "$@"
else
  cmake --build "$build" -j "$jobs"
fi
