#!/usr/bin/env bash
# The GEMM candidates of issue #11 on this CPU: one [512 x 768] x [768 x 2048] product (the medium
# model's FFN shape at a 512-token prefill), 2 threads, GFLOP/s:
#   - OpenBLAS 0.3.21 (what radixserve loads) as it detects the CPU, and with each core type forced;
#   - BLIS 0.9 (Debian's pthread build) and oneDNN 2.6 (matmul primitive, f32 / bf16 / int8);
#   - radixserve's own MatMul per weight type (kernels_bench), which is what prefill runs.
#
#   bash bench/compare_gemm.sh
#
# BLIS and oneDNN are not radixserve dependencies: their Debian packages are downloaded and unpacked
# into $RADIXSERVE_BENCH_DIR/gemm-deps (apt-get download + dpkg -x), never installed. Needs a
# radixserve build with the tests (for kernels_bench) and g++.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RADIXSERVE_BUILD_DIR:-$root/build}"
out="${RADIXSERVE_BENCH_DIR:-/tmp/radixserve-gemm}"
threads="${RADIXSERVE_BENCH_THREADS:-2}"
deps="$out/gemm-deps"
lib="$deps/usr/lib/x86_64-linux-gnu"
mkdir -p "$deps"
if [ ! -f "$lib/libdnnl.so.2" ] || [ ! -f "$lib/blis-pthread/libblis.so.4" ]; then
  (cd "$out" && apt-get download libdnnl-dev libdnnl2 libblis4-pthread ocl-icd-libopencl1 >/dev/null 2>&1) ||
    { echo "compare_gemm.sh: apt-get download failed (no Debian mirror?)" >&2; exit 2; }
  for deb in "$out"/*.deb; do dpkg -x "$deb" "$deps"; done
fi
prog="$out/gemm_candidates"
g++ -O2 -std=c++17 -I"$deps/usr/include" "$root/bench/gemm/gemm_candidates.cc" -L"$lib" -ldnnl -ldl \
  -Wl,-rpath,"$lib" -Wl,-rpath-link,"$lib" -o "$prog"
# The unpacked libraries (oneDNN and its OpenCL loader) only; OpenBLAS stays the system's.
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $threads threads"
echo "| library | path | GFLOP/s |"
echo "|---|---|---|"
row() { sed 's/^/| /; s/$/ |/'; }
env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS="$threads" "$prog" cblas libopenblas.so.0 | row
for core in HASWELL ZEN SKYLAKEX COOPERLAKE SAPPHIRERAPIDS; do
  OPENBLAS_CORETYPE=$core OPENBLAS_NUM_THREADS="$threads" "$prog" cblas libopenblas.so.0 | row
done
BLIS_NUM_THREADS="$threads" "$prog" cblas "$lib/blis-pthread/libblis.so.4" | row
for type in f32 bf16 int8; do
  OMP_NUM_THREADS="$threads" "$prog" dnnl "$type" | row
done
echo
echo "radixserve's MatMul (kernels_bench; type ids as in kernels/cpu/weight.h):"
"$build/bin/kernels_bench" --benchmark_filter="BM_MatMul/type:[0-9]+/n:512/rows:2048/cols:768/thr:$threads/" \
  --benchmark_min_time=0.5 2>/dev/null | grep -E "BM_MatMul|Benchmark"
