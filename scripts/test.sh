#!/usr/bin/env bash
# The test command (CI runs exactly this): installs dependencies, then
#   1. builds the Release tree (build/) and runs every test with ctest;
#   2. builds the sanitizer tree (build-sanitize/: clang-14, ASan + UBSan, see build-sanitize.sh)
#      and runs every unit test and the end-to-end tests that drive node code on it
#      (tests/sanitizer_scope.cmake): memory errors and undefined behaviour fail the test;
#   3. runs each libFuzzer target from that tree for FUZZ_SECONDS (default 30) on its seed corpus.
# ctest -L unit / -L e2e in either tree runs the one-process tests or those that start processes.
# RADIXSERVE_TEST_QUICK=1 stops after step 1 (for iterating on a change).
# Environment: RADIXSERVE_TEST_JOBS (ctest parallelism, default 2), FUZZ_SECONDS.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RADIXSERVE_BUILD_DIR:-$root/build}"
sanitize="${RADIXSERVE_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
jobs="${RADIXSERVE_TEST_JOBS:-2}"
step() { echo "== $(date +%H:%M:%S) $*"; }

step "installing dependencies"
bash "$root/scripts/install-deps.sh"
step "Release build and tests"
# CUDA code is compiled wherever nvcc is (its GPU tests run only where a GPU is), also in a
# build/ that run.sh configured without it.
bash "$root/scripts/build.sh" -DRADIXSERVE_BUILD_TESTS=ON -DRADIXSERVE_ENABLE_CUDA="${RADIXSERVE_ENABLE_CUDA:-ON}"
# No test is retried: a flaky test is a bug.
(cd "$build" && ctest --output-on-failure -j "$jobs")
[ "${RADIXSERVE_TEST_QUICK:-0}" = 1 ] && exit 0

step "sanitizers: unit tests and node end-to-end tests on an ASan + UBSan build"
RADIXSERVE_SANITIZE_BUILD_DIR="$sanitize" bash "$root/scripts/build-sanitize.sh"
# Leak checking is off here: node processes end by signal, and LeakSanitizer reports what a killed
# process still held (the fuzz runs below check leaks). Timeouts scale for the slower build.
(cd "$sanitize" && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j "$jobs")

step "fuzzing: each target for ${FUZZ_SECONDS:-30} s"
RADIXSERVE_SANITIZE_BUILD_DIR="$sanitize" FUZZ_SECONDS="${FUZZ_SECONDS:-30}" bash "$root/scripts/fuzz.sh"
step "all tests passed"
