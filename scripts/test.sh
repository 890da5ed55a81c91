#!/usr/bin/env bash
# The test command: installs dependencies, builds, and runs every test (ctest) on the Release build.
# RADIXSERVE_TEST_FULL=1 also runs
#   2. every test again on an AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan/);
#   3. each libFuzzer target for a bounded time (FUZZ_SECONDS, default 60) on its seed corpus.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RADIXSERVE_BUILD_DIR:-$root/build}"
jobs="${RADIXSERVE_TEST_JOBS:-2}"
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
(cd "$build" && ctest --output-on-failure -j "$jobs")
[ "${RADIXSERVE_TEST_FULL:-0}" = 1 ] || exit 0

echo "== sanitizers: ASan + UBSan build of the unit and integration tests"
asan="$root/build-asan"
cmake -S "$root" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRADIXSERVE_SANITIZE=ON \
  -DRADIXSERVE_BUILD_BENCHMARKS=OFF -DRADIXSERVE_ENABLE_CUDA=OFF
cmake --build "$asan" -j "$(nproc)"
# Leak checking is off: node processes end by signal, and LeakSanitizer reports what a killed
# process still held. Memory errors and undefined behaviour fail the test that hits them.
(cd "$asan" && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j "$jobs")

echo "== fuzzing: each target for ${FUZZ_SECONDS:-60} s"
FUZZ_SECONDS="${FUZZ_SECONDS:-60}" bash "$root/scripts/fuzz.sh"
