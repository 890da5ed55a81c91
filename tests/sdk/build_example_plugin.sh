#!/usr/bin/env bash
# The plugin SDK from a third party's side (a ctest fixture of launch_e2e_control_test, which swaps
# the result into a running pipeline): installs this build's SDK (cmake --install --component sdk)
# into <build>/sdk_example/prefix, builds examples/policy_plugin as a project of its own against it
# with find_package(radixserve), checks that it saw no header outside the installed prefix, and puts
# the plugin into <build>/sdk_example/plugins.
# Usage: build_example_plugin.sh <source dir> <build dir> <C++ compiler>
set -euo pipefail
src=$1 build=$2 cxx=$3
out=$build/sdk_example
rm -rf "$out"
cmake --install "$build" --component sdk --prefix "$out/prefix" >/dev/null
cmake -S "$src/examples/policy_plugin" -B "$out/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$out/prefix" >/dev/null
cmake --build "$out/build"
# Out of tree means it: no include path into the engine's sources or build.
if grep -E -- "-I($src|$build)[/ ]|-isystem ($src|$build)[/ ]" "$out/build/build.ninja" | grep -v "$out/prefix" >/dev/null; then
  echo "build_example_plugin.sh: the example was compiled against the source or build tree, not the SDK" >&2
  exit 1
fi
mkdir -p "$out/plugins"
cp "$out/build/libradixserve_policy_shortest_job_first.so" "$out/plugins/"
echo "built $out/plugins/libradixserve_policy_shortest_job_first.so against the SDK in $out/prefix"
