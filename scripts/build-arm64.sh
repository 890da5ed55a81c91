#!/usr/bin/env bash
# Cross-compiles radixserve for arm64 (aarch64) on an x86-64 Debian machine (issue 43): makes the
# arm64 sysroot (scripts/arm64-sysroot.sh), configures with cmake/toolchain-aarch64.cmake and builds.
#
#   build-arm64.sh [TARGET ...]      # default: every target
#
# Environment: RADIXSERVE_ARM64_SYSROOT (default ~/.cache/radixserve/arm64-sysroot), RADIXSERVE_ARM64_BUILD (the
# build folder, default build-arm64 in the repository), JOBS (default 2), CMAKE_ARGS (more -D options).
# Needs crossbuild-essential-arm64 and qemu-user-static (apt-get install them). On an arm64 machine
# build natively instead, with the README's commands.
set -euo pipefail

die() { echo "build-arm64: error: $*" >&2; exit 1; }
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
export RADIXSERVE_ARM64_SYSROOT="${RADIXSERVE_ARM64_SYSROOT:-$HOME/.cache/radixserve/arm64-sysroot}"
BUILD="${RADIXSERVE_ARM64_BUILD:-$ROOT/build-arm64}"

command -v aarch64-linux-gnu-g++ >/dev/null || die "no aarch64-linux-gnu-g++: apt-get install crossbuild-essential-arm64"
command -v qemu-aarch64-static >/dev/null || die "no qemu-aarch64-static: apt-get install qemu-user-static"
[ "$(uname -m)" != aarch64 ] || die "this is an arm64 machine: build natively (README, 'Building by hand')"

bash "$ROOT/scripts/arm64-sysroot.sh" "$RADIXSERVE_ARM64_SYSROOT"
# shellcheck disable=SC2086  # CMAKE_ARGS is a list of options
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/toolchain-aarch64.cmake" \
  -DRADIXSERVE_ARM64_SYSROOT="$RADIXSERVE_ARM64_SYSROOT" -DCMAKE_BUILD_TYPE=Release \
  -DRADIXSERVE_ENABLE_CUDA=OFF ${CMAKE_ARGS:-}
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$BUILD" -j "${JOBS:-2}" "${targets[@]}"
echo "build-arm64: done: $BUILD (run a program with: qemu-aarch64-static -L /usr/aarch64-linux-gnu" \
     "-E LD_LIBRARY_PATH=$RADIXSERVE_ARM64_SYSROOT/lib/aarch64-linux-gnu:$RADIXSERVE_ARM64_SYSROOT/usr/lib/aarch64-linux-gnu PROGRAM)"
