#!/usr/bin/env bash
# Pipeline parallelism of issue #16: the same model and the same two CPU threads served by one
# worker (launch/edge.yaml, threads:=2) and by two pipeline stages of one thread each
# (launch/pp2.yaml, each stage half of the layers), with one decode micro-batch per stage in flight
# and, to show what the overlap gives, with the stages taking turns (micro_batches:=1);
# `radixserve bench` with random prompts; one table: throughput, TTFT, time per output token, and
# how many batches the scheduler had in flight at most.
#
#   bash bench/compare_pipeline.sh        (RADIXSERVE_BENCH_SIZE=small by default; medium is slower)
#
# Workload: 64 requests of 256 prompt tokens and 128 output tokens, greedy, ignore_eos, at most 16
# in flight. Model: a generated q8_0 model of RADIXSERVE_BENCH_SIZE with a 2,048-token context.
# Needs a build (scripts/build.sh) and python3. Results: one JSON per run in $RADIXSERVE_BENCH_DIR.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${RADIXSERVE_BUILD_DIR:-$root/build}/bin/radixserve"
out="${RADIXSERVE_BENCH_DIR:-/tmp/radixserve-bench}"
port="${RADIXSERVE_BENCH_PORT:-30430}"
size="${RADIXSERVE_BENCH_SIZE:-small}"
command -v python3 >/dev/null || { echo "compare_pipeline.sh: python3 is needed for the table" >&2; exit 2; }
mkdir -p "$out"
model="$out/$size-q8_0-ctx2048.gguf"
[ -f "$model" ] || "$bin" gen-model --size "$size" --type q8_0 --context 2048 -o "$model" >/dev/null

run() {  # name launch-file threads [name:=value ...]
  local log="$out/pipeline-$1-launch.log"
  "$bin" launch "$root/launch/$2" model:="$model" port:="$port" threads:="$3" "${@:4}" >"$log" 2>&1 &
  local launcher=$!
  for _ in $(seq 1 600); do grep -q "radixserve is ready" "$log" && break; sleep 0.5; done
  grep -q "radixserve is ready" "$log" || { cat "$log"; kill -INT $launcher; exit 1; }
  "$bin" bench --port "$port" --quiet --warmup-requests 4 --output-file "$out/pipeline-$1.json" \
    --dataset random --num-prompts 64 --random-input-len 256 --random-output-len 128 --random-range-ratio 1 \
    --max-concurrency 16 >/dev/null || { echo "bench failed: $1" >&2; kill -INT $launcher; exit 1; }
  curl -s "http://127.0.0.1:$port/get_server_info" >"$out/pipeline-$1.info"
  kill -INT $launcher
  wait $launcher || true
}
run pp1 edge.yaml 2
run pp2-turns pp2.yaml 1 micro_batches:=1
run pp2 pp2.yaml 1

cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
python3 - "$out" "$cpu" "$size" <<'PY'
import json, sys
out, cpu, size = sys.argv[1:4]
print(f"pipeline stages on {cpu}, {size} q8_0 model, 2 CPU threads in all, one run each")
head = f"{'shape':<26}{'out tok/s':>10}{'req/s':>7}{'TTFT p50':>10}{'TPOT p50':>10}{'in flight':>10}"
print(head)
print("-" * len(head))
for name, what in (("pp1", "1 worker x 2 threads"), ("pp2-turns", "2 stages, taking turns"),
                   ("pp2", "2 stages, 2 micro-batches")):
    j = json.load(open(f"{out}/pipeline-{name}.json"))
    info = json.load(open(f"{out}/pipeline-{name}.info"))
    inflight = info.get("scheduler", {}).get("stats", {}).get("max_inflight_batches", "?")
    print(f"{what:<26}{j['output_throughput']:>10.0f}{j['request_throughput']:>7.2f}"
          f"{j['ttft_ms']['median']:>8.0f}ms{j['tpot_ms']['median']:>8.1f}ms{inflight:>10}")
PY
