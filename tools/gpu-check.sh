#!/usr/bin/env bash
# The GPU check, in two halves, so that a short loan of a GPU machine is spent on running, not
# building (that machine has CUDA 13.0 but not this project's Debian packages):
#   bash tools/gpu-check.sh pack   here: builds the CUDA test programs (build/, Release) and packs
#                                  them with every shared library they load, the C library and its
#                                  loader included, and the reference files they read (a subset of
#                                  ../shared/models/ref) into gpu-pack/bundle.tar.gz (git-ignored;
#                                  with the working tree it must travel in 64 MiB).
#                                  Left out: the NVIDIA driver (libcuda) and the CUDA libraries
#                                  (cudart, cuBLAS), which come from the GPU machine's own CUDA.
#   bash tools/gpu-check.sh run    there (the device tool's run, carrying gpu-pack): unpacks the
#                                  bundle (tar, gzip), runs each program with the packed loader
#                                  and prints one summary.
# Environment: RADIXSERVE_BUILD_DIR (default build/), CUDA_LIB (default /usr/local/cuda/lib64).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RADIXSERVE_BUILD_DIR:-$root/build}"
pack="$root/gpu-pack"
programs=(cuda_kernels_test cuda_model_test cuda_reference_test)  # tests
benchmarks=(cuda_model_bench)
# Libraries the GPU machine supplies: its driver and its CUDA toolkit (the same CUDA 13.0).
from_gpu_machine='^(libcuda|libcudart|libcublas|libcublasLt|libnvidia|libnvrtc)\.'

# The reference runs packed for cuda_reference_test: every weight-type family and architecture,
# both KV types, within the carry limit (all 33 runs' files are 108 MB).
ref_runs=(a_llama.F16.kv_f16 a_llama.Q8_0.kv_f16 a_llama.Q4_0.kv_f16 a_llama.Q4_K_M.kv_f16 a_llama.Q6_K.kv_f16
          a_llama.Q8_0.kv_f32 b_llama3rope.Q4_K_M.kv_f16 c_qwen2.Q4_K_M.kv_f16 d_phi3.Q4_K_M.kv_f16
          e_gemma.Q4_K_M.kv_f16)

pack() {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRADIXSERVE_BUILD_TESTS=ON >/dev/null
  grep -q 'cuda_kernels_test' "$build/build.ninja" ||
    { echo "gpu-check: this build has no CUDA backend (is nvcc at /usr/local/cuda/bin or on PATH?)" >&2; exit 1; }
  cmake --build "$build" -j "${RADIXSERVE_JOBS:-$(nproc)}" --target "${programs[@]}" "${benchmarks[@]}"
  rm -rf "$pack"
  mkdir -p "$pack/bin" "$pack/lib"
  # OpenBLAS is loaded at run time (kernels/cpu/blas.h), so ldd of the programs does not list it.
  local openblas
  openblas="$(ldconfig -p | awk '/libopenblas\.so\.0 .*x86-64/ { print $NF; exit }')"
  [ -n "$openblas" ] || { echo "gpu-check: libopenblas.so.0 not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
  cp -L "$openblas" "$pack/lib/libopenblas.so.0"
  for p in "${programs[@]}" "${benchmarks[@]}"; do
    cp "$build/bin/$p" "$pack/bin/"
  done
  for f in "$pack"/bin/* "$openblas"; do
    ldd "$f" | awk '/=> \// { print $1, $3 } /^\t\/lib.*ld-linux/ { print "loader", $1 }' |
      while read -r name path; do
        if [ "$name" = loader ]; then cp -L "$path" "$pack/lib/ld-linux.so"; continue; fi
        [[ "$name" =~ $from_gpu_machine ]] && continue
        cp -L "$path" "$pack/lib/$name"
      done
  done
  # The reference files the model tests read (the GPU machine has no ../shared).
  local shared="${RADIXSERVE_SHARED_DIR:-$root/../shared}"
  mkdir -p "$pack/shared/models"
  cp "$shared/models/stories260K.gguf" "$shared/models/golden_stories260K.json" "$pack/shared/models/"
  # The chosen runs' model and logit files, with a manifest of those runs alone.
  python3 - "$shared/models/ref" "$pack/shared/models/ref" "${ref_runs[@]}" <<'PY'
import json, os, shutil, sys
src, dst, names = sys.argv[1], sys.argv[2], sys.argv[3:]
manifest = json.load(open(os.path.join(src, "manifest.json")))
runs = {n: manifest["runs"][n] for n in names}  # a name not in the manifest fails here
paths = {r["model_path"] for r in runs.values()}
for r in runs.values():
    for p in r["prompts"]:
        paths |= {p["prefill_logits"]["path"], p["decode_logits"]["path"]}
for p in sorted(paths):
    os.makedirs(os.path.dirname(os.path.join(dst, p)), exist_ok=True)
    shutil.copyfile(os.path.join(src, p), os.path.join(dst, p))
json.dump({"runs": runs}, open(os.path.join(dst, "manifest.json"), "w"))
PY
  # One compressed bundle: OpenBLAS alone is 36 MB unpacked.
  tar -C "$pack" -czf "$root/gpu-pack.bundle.tar.gz" bin lib shared
  rm -rf "$pack"
  mkdir -p "$pack"
  mv "$root/gpu-pack.bundle.tar.gz" "$pack/bundle.tar.gz"
  echo "gpu-check: packed ${programs[*]} ${benchmarks[*]} and ${#ref_runs[@]} reference runs into gpu-pack/bundle.tar.gz ($(du -sh "$pack/bundle.tar.gz" | cut -f1))"
}

run() {
  [ -f "$pack/bundle.tar.gz" ] || { echo "gpu-check: no gpu-pack/bundle.tar.gz here (run 'tools/gpu-check.sh pack' first and carry gpu-pack)" >&2; exit 1; }
  unpacked="$(mktemp -d)"
  trap 'rm -rf "$unpacked"' EXIT
  tar -C "$unpacked" -xzf "$pack/bundle.tar.gz"
  pack="$unpacked"
  local cuda_lib="${CUDA_LIB:-/usr/local/cuda/lib64}"
  echo "== $(date +%H:%M:%S) GPU check on $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || true
  echo "CUDA libraries from $cuda_lib: $(ls "$cuda_lib" 2>/dev/null | grep -E '^lib(cudart|cublas)\.so\.[0-9]+$' | tr '\n' ' ')"
  local failed=0 summary=""
  # The packed C library and loader run the programs whatever the machine's own are.
  local loader=("$pack/lib/ld-linux.so" --library-path "$pack/lib:$cuda_lib")
  for p in "${programs[@]}"; do
    echo "== $(date +%H:%M:%S) $p"
    if RADIXSERVE_SHARED_DIR="$pack/shared" "${loader[@]}" "$pack/bin/$p" --gtest_color=no --gtest_brief=1; then
      summary+="PASS $p"$'\n'
    else
      summary+="FAIL $p"$'\n'
      failed=1
    fi
  done
  echo "== $(date +%H:%M:%S) cuda_model_bench (medium F16)"
  if "${loader[@]}" "$pack/bin/cuda_model_bench" ${RADIXSERVE_GPU_BENCH_ARGS:-}; then
    summary+="RAN  cuda_model_bench"$'\n'
  else
    summary+="FAIL cuda_model_bench"$'\n'
    failed=1
  fi
  echo "== summary"
  printf '%s' "$summary"
  return $failed
}

case "${1:-}" in
  pack) pack ;;
  run) run ;;
  *) echo "usage: tools/gpu-check.sh pack|run" >&2; exit 2 ;;
esac
