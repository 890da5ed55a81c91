#!/usr/bin/env bash
# The GPU check, in two halves, so that a short loan of a GPU machine is spent on running, not
# building (that machine has CUDA 13.0 but not this project's Debian packages):
#   bash tools/gpu-check.sh pack   here: builds (build/, Release) and packs the CUDA test programs,
#                                  the CUDA benchmark, radixserve with its node and plugin
#                                  libraries, iox-roudi, every shared library they load (the C
#                                  library and its loader in glibc/, the rest in lib/) and the
#                                  reference files the tests read (a subset of ../shared/models/ref)
#                                  into gpu-pack/bundle.tar.gz (git-ignored; with the working tree
#                                  it must travel in 64 MiB). Left out: the NVIDIA driver (libcuda)
#                                  and the CUDA libraries (cudart, cuBLAS), which come from the GPU
#                                  machine's own CUDA.
#   bash tools/gpu-check.sh run    there (the device tool's run, carrying gpu-pack): unpacks the
#                                  bundle (tar, gzip); runs the test programs and the benchmark
#                                  with the packed loader and C library; then the pipeline under the
#                                  machine's own loader (radixserve launch re-executes itself and
#                                  starts iox-roudi, which a loader run by hand would not follow):
#                                  the same greedy ids from the CPU and the CUDA worker over HTTP,
#                                  and radixserve bench at 64 concurrent requests; one summary.
#                                  Every step has a time limit; full logs go to $OUT (the device
#                                  tool's folder that comes back) or RADIXSERVE_GPU_LOG_DIR.
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

# The C library's own files: under the packed loader they come from glibc/, under the machine's
# loader from the machine (a C library must match the loader that runs it).
glibc_names='^(ld-linux-x86-64|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl)\.so'

pack() {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRADIXSERVE_BUILD_TESTS=ON >/dev/null
  grep -q 'cuda_kernels_test' "$build/build.ninja" ||
    { echo "gpu-check: this build has no CUDA backend (is nvcc at /usr/local/cuda/bin or on PATH?)" >&2; exit 1; }
  # Everything: radixserve loads its nodes and plugins at run time, so no target lists them all.
  cmake --build "$build" -j "${RADIXSERVE_JOBS:-$(nproc)}"
  rm -rf "$pack"
  mkdir -p "$pack/bin" "$pack/lib" "$pack/glibc"
  # OpenBLAS is loaded at run time (kernels/cpu/blas.h), so ldd of the programs does not list it.
  # (awk reads all of ldconfig's output: leaving early would end ldconfig by SIGPIPE, a failure
  # under pipefail.)
  local openblas roudi
  openblas="$(ldconfig -p | awk '/libopenblas\.so\.0 .*x86-64/ && !p { p = $NF } END { print p }')"
  [ -n "$openblas" ] || { echo "gpu-check: libopenblas.so.0 not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
  roudi="$(command -v iox-roudi)" || { echo "gpu-check: iox-roudi not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
  cp -L "$openblas" "$pack/lib/libopenblas.so.0"
  for p in "${programs[@]}" "${benchmarks[@]}" radixserve; do
    cp "$build/bin/$p" "$pack/bin/"
  done
  cp -L "$roudi" "$pack/bin/iox-roudi"
  cp "$build"/lib/*.so "$pack/lib/"
  for f in "$pack"/bin/* "$pack"/lib/*.so*; do
    ldd "$f" | awk '/=> \// { print $1, $3 } /^\t\/lib.*ld-linux/ { print $1, $1 }' |
      while read -r name path; do
        name="$(basename "$name")"
        [[ "$name" =~ $from_gpu_machine ]] && continue
        local dir=lib
        [[ "$name" =~ $glibc_names ]] && dir=glibc
        [ -e "$pack/$dir/$name" ] || cp -L "$path" "$pack/$dir/$name"
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
  tar -C "$pack" -czf "$root/gpu-pack.bundle.tar.gz" bin lib glibc shared
  rm -rf "$pack"
  mkdir -p "$pack"
  mv "$root/gpu-pack.bundle.tar.gz" "$pack/bundle.tar.gz"
  echo "gpu-check: packed ${programs[*]} ${benchmarks[*]} radixserve iox-roudi and ${#ref_runs[@]} reference runs into gpu-pack/bundle.tar.gz ($(du -sh "$pack/bundle.tar.gz" | cut -f1))"
}

# The directory of the driver's libcuda.so.1 ("" when the loader's cache already has it).
driver_dir() {
  ldconfig -p 2>/dev/null | grep 'libcuda\.so\.1 ' >/dev/null && return 0  # (no -q: SIGPIPE)
  local d
  for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
    [ -e "$d/libcuda.so.1" ] && { echo "$d"; return 0; }
  done
  return 0
}

# One greedy /generate over HTTP; prints the output ids as a JSON array.
greedy_ids() {  # port
  python3 - "$1" <<'PY'
import json, sys, urllib.request
body = {"input_ids": [1, 15, 27, 300, 41, 7, 99, 411], "sampling_params":
        {"temperature": 0, "max_new_tokens": 24, "ignore_eos": True}}
req = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/generate", json.dumps(body).encode(),
                             {"Content-Type": "application/json"})
print(json.dumps(json.load(urllib.request.urlopen(req, timeout=60))["output_ids"]))
PY
}

# Starts `radixserve launch launch/edge.yaml` with the given args in the background; waits for
# "radixserve is ready" (60 s). Sets launcher to its pid.
serve() {  # log args...
  local log="$1"
  shift
  "${sys_env[@]}" "$pack/bin/radixserve" launch "$root/launch/edge.yaml" "$@" >"$log" 2>&1 &
  launcher=$!
  for _ in $(seq 1 120); do
    grep -q "radixserve is ready" "$log" && return 0
    kill -0 "$launcher" 2>/dev/null || break  # it gave up (a node failed to start)
    sleep 0.5
  done
  echo "gpu-check: the pipeline did not become ready ($*):"; grep -E "error|fail|Fail" "$log" | head -20
  return 1
}

unserve() {
  kill -INT "$launcher" 2>/dev/null || true
  wait "$launcher" 2>/dev/null || true
}

# The pipeline step of run, in its own process (GPU_CHECK_PACK, _LOGS and _PATHS set by run).
pipeline_check() {
  pack="$GPU_CHECK_PACK" logs="$GPU_CHECK_LOGS"
  sys_env=(env LD_LIBRARY_PATH="$pack/lib:$GPU_CHECK_PATHS" RADIXSERVE_ROUDI="$pack/bin/iox-roudi"
           RADIXSERVE_CACHE_DIR=/tmp/radixserve-cache)
  # Under the machine's own loader and C library (this C library is older or the same).
  "${sys_env[@]}" "$pack/bin/radixserve" --help >/dev/null || return 1
  local model=/tmp/radixserve-medium-f16.gguf port=30500 cpu_ids cuda_ids
  # Greedy equality on the built-in stories260K: a trained model, whose greedy choices are not
  # near-ties (random-weight models' are, and may fork between two correct products).
  serve "$logs/pipeline-cpu.log" port:=$port device:=cpu threads:=8 || { unserve; return 1; }
  cpu_ids="$(greedy_ids $port)" || { unserve; return 1; }
  unserve
  serve "$logs/pipeline-cuda.log" port:=$port device:=cuda || { unserve; return 1; }
  cuda_ids="$(greedy_ids $port)" || { unserve; return 1; }
  unserve
  echo "stories260K greedy ids, CPU worker:  $cpu_ids"
  echo "stories260K greedy ids, CUDA worker: $cuda_ids"
  [ "$cpu_ids" = "$cuda_ids" ] || { echo "gpu-check: the CUDA worker's greedy ids differ from the CPU worker's"; return 1; }
  "${sys_env[@]}" "$pack/bin/radixserve" gen-model --size medium --type f16 -o "$model" >/dev/null || return 1
  serve "$logs/pipeline-cuda-medium.log" model:="$model" port:=$port device:=cuda || { unserve; return 1; }
  local b=("${sys_env[@]}" "$pack/bin/radixserve" bench --port $port --warmup-requests 2 --max-concurrency 64)
  echo "-- radixserve bench, CUDA worker, medium F16, generated-shared-prefix, 64 concurrent"
  "${b[@]}" --dataset generated-shared-prefix --gsp-num-groups 8 --gsp-prompts-per-group 16 \
    --gsp-system-prompt-len 1024 --gsp-question-len 128 --gsp-output-len 128 || { unserve; return 1; }
  echo "-- radixserve bench, CUDA worker, medium F16, random, 64 concurrent"
  "${b[@]}" --dataset random --num-prompts 128 --random-input-len 512 --random-output-len 128 \
    --random-range-ratio 1 || { unserve; return 1; }
  unserve
}

run() {
  [ -f "$pack/bundle.tar.gz" ] || { echo "gpu-check: no gpu-pack/bundle.tar.gz here (run 'tools/gpu-check.sh pack' first and carry gpu-pack)" >&2; exit 1; }
  unpacked="$(mktemp -d)"
  trap 'rm -rf "$unpacked"' EXIT
  tar -C "$unpacked" -xzf "$pack/bundle.tar.gz"
  pack="$unpacked"
  logs="${RADIXSERVE_GPU_LOG_DIR:-${OUT:-/tmp/radixserve-gpu-check}}"
  mkdir -p "$logs"
  local cuda_lib="${CUDA_LIB:-/usr/local/cuda/lib64}" driver
  driver="$(driver_dir)"
  echo "== $(date +%H:%M:%S) GPU check on $(hostname); logs in $logs"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || true
  echo "CUDA libraries from $cuda_lib: $(ls "$cuda_lib" 2>/dev/null | grep -E '^lib(cudart|cublas)\.so\.[0-9]+$' | tr '\n' ' ')"
  echo "libcuda.so.1: ${driver:-found through ldconfig}; machine C library: $(ldd --version 2>&1 | head -1)"
  local paths="$cuda_lib${driver:+:$driver}"
  local failed=0 summary=""
  step() {  # name limit-seconds command...
    local name="$1" limit="$2"
    shift 2
    echo "== $(date +%H:%M:%S) $name"
    local rc=0
    timeout "$limit" "$@" 2>&1 | tee "$logs/$name.log" || rc=$?
    if [ $rc = 0 ]; then summary+="PASS $name"$'\n'
    elif [ $rc = 124 ]; then summary+="FAIL $name (over its $limit s)"$'\n'; failed=1
    else summary+="FAIL $name (exit $rc)"$'\n'; failed=1; fi
  }
  # The packed C library and loader run the programs whatever the machine's own are.
  local loader=("$pack/glibc/ld-linux-x86-64.so.2" --library-path "$pack/glibc:$pack/lib:$paths")
  # Limits (seconds) sum to 415, inside one device call with time left for a second.
  local -A limit=([cuda_kernels_test]=45 [cuda_model_test]=100 [cuda_reference_test]=60)
  for p in "${programs[@]}"; do
    step "$p" "${limit[$p]}" env RADIXSERVE_SHARED_DIR="$pack/shared" "${loader[@]}" "$pack/bin/$p" --gtest_color=no --gtest_brief=1
  done
  # shellcheck disable=SC2086
  step cuda_model_bench 60 "${loader[@]}" "$pack/bin/cuda_model_bench" ${RADIXSERVE_GPU_BENCH_ARGS:-}
  # timeout runs programs, not shell functions: the pipeline step is this script again.
  step pipeline 150 env GPU_CHECK_PACK="$pack" GPU_CHECK_LOGS="$logs" GPU_CHECK_PATHS="$paths" \
    bash "${BASH_SOURCE[0]}" pipeline-step
  echo "== summary"
  printf '%s' "$summary"
  return $failed
}

case "${1:-}" in
  pack) pack ;;
  run) run ;;
  pipeline-step) pipeline_check ;;
  *) echo "usage: tools/gpu-check.sh pack|run" >&2; exit 2 ;;
esac
