#!/usr/bin/env bash
# The speed program of issue #6: radixserve on a generated 'medium' model (../shared/models/README.md)
# under four workloads, 2 compute threads, greedy, ignore_eos, streaming, prompts as token ids.
#
#   bash bench/speed_program.sh [q8_0|f32 ...]       (default: q8_0 f32)
#
# Needs a build (scripts/build.sh). Models are generated into $RADIXSERVE_BENCH_DIR (default
# /tmp/radixserve-bench) with the llama-spm vocabulary from ../shared/vocab when present (32,000 tokens,
# as the reference figures used), else the built-in one. Results: one JSON per run in that directory.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${RADIXSERVE_BUILD_DIR:-$root/build}/bin/radixserve"
out="${RADIXSERVE_BENCH_DIR:-/tmp/radixserve-bench}"
port="${RADIXSERVE_BENCH_PORT:-30400}"
mkdir -p "$out"
types=("$@")
[ ${#types[@]} -eq 0 ] && types=(q8_0 f32)
vocab="$root/../shared/vocab/ggml-vocab-llama-spm.gguf"
tok_args=()
[ -f "$vocab" ] && tok_args=(--tokenizer-from "$vocab")

run_bench() {  # name, extra bench args...
  local name="$1"; shift
  echo "== $name"
  "$bin" bench --port "$port" --quiet --output-file "$out/$model_name-$name.json" "$@" | sed -n '/Successful requests/,$p'
}

for t in "${types[@]}"; do
  model_name="medium-$t"
  model="$out/$model_name.gguf"
  [ -f "$model" ] || "$bin" gen-model --size medium --type "$t" -o "$model" "${tok_args[@]}"
  log="$out/$model_name-launch.log"
  "$bin" launch "$root/launch/edge.yaml" model:="$model" port:="$port" threads:=2 >"$log" 2>&1 &
  launcher=$!
  trap 'kill -INT $launcher 2>/dev/null || true; wait $launcher 2>/dev/null || true' EXIT
  for _ in $(seq 1 600); do grep -q "radixserve is ready" "$log" && break; sleep 0.5; done
  grep -q "radixserve is ready" "$log" || { cat "$log"; exit 1; }
  echo "#### $model_name"
  run_bench shared --dataset prefix --prefix-len 512 --unique-len 32 --prefix-output-len 64 --num-prompts 64 \
    --max-concurrency 16
  run_bench unshared --dataset prefix --prefix-len 0 --unique-len 544 --prefix-output-len 64 --num-prompts 64 \
    --max-concurrency 16
  run_bench single --dataset random --random-input-len 256 --random-output-len 128 --random-range-ratio 1 \
    --num-prompts 8 --max-concurrency 1
  run_bench gsp --dataset generated-shared-prefix --gsp-num-groups 8 --gsp-prompts-per-group 16 \
    --gsp-system-prompt-len 1024 --gsp-question-len 64 --gsp-output-len 64 --max-concurrency 16
  kill -INT "$launcher"; wait "$launcher" || true
  trap - EXIT
done
