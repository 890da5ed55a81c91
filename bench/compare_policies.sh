#!/usr/bin/env bash
# The policy comparison of issue #15: the same three workloads under every scheduling policy, one
# launch, the policy hot-swapped between runs (and the prefix cache flushed, so each run starts
# cold), then one table: throughput, TTFT p50/p99 (all requests, and the short ones of the mixed
# workload), cache hit rate and the longest wait (max TTFT).
#
#   bash bench/compare_policies.sh            (every policy; RADIXSERVE_POLICIES="fcfs hrrn" for fewer)
#
# Workloads (greedy, ignore_eos, all requests at once, prompts as token ids):
#   shared    64 prompts: a 512-token common prefix + 32 unique tokens, 16 output tokens
#   unshared  64 prompts of 544 unique tokens, 16 output tokens
#   mixed     4 prompts of 2,000 tokens spread among 60 of 100 (the first is long), 16 output tokens
# Model: a generated 'small' q8_0 model with a 4,096-token context, 2 worker threads. "fcfs+fair" is
# fcfs with the scheduler's fair_prefill_chunk = 256 (set at run time), the fair chunked prefill.
# Needs a build (scripts/build.sh) and python3 (the table). Results: one JSON per run in
# $RADIXSERVE_BENCH_DIR (default /tmp/radixserve-bench).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${RADIXSERVE_BUILD_DIR:-$root/build}/bin/radixserve"
out="${RADIXSERVE_BENCH_DIR:-/tmp/radixserve-bench}"
port="${RADIXSERVE_BENCH_PORT:-30410}"
policies=(${RADIXSERVE_POLICIES:-fcfs fcfs+fair lpm hrrn shortest-prefill-first routing-key dfs-weight lof priority random})
command -v python3 >/dev/null || { echo "compare_policies.sh: python3 is needed for the table" >&2; exit 2; }
mkdir -p "$out"

model="$out/small-q8_0-ctx4096.gguf"
[ -f "$model" ] || "$bin" gen-model --size small --type q8_0 --context 4096 -o "$model" >/dev/null
log="$out/compare-launch.log"
"$bin" launch "$root/launch/edge.yaml" model:="$model" port:="$port" threads:=2 >"$log" 2>&1 &
launcher=$!
trap 'kill -INT $launcher 2>/dev/null || true; wait $launcher 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do grep -q "radixserve is ready" "$log" && break; sleep 0.5; done
grep -q "radixserve is ready" "$log" || { cat "$log"; exit 1; }
ctl() { "$bin" ctl --url "http://127.0.0.1:$port" "$@" >/dev/null; }

declare -A workload=(
  [shared]="--dataset prefix --prefix-len 512 --unique-len 32 --prefix-output-len 16 --num-prompts 64"
  [unshared]="--dataset prefix --prefix-len 0 --unique-len 544 --prefix-output-len 16 --num-prompts 64"
  [mixed]="--dataset mixed --mixed-num-long 4 --mixed-long-len 2000 --mixed-num-short 60 --mixed-short-len 100 --mixed-output-len 16"
)
for p in "${policies[@]}"; do
  name="${p%+fair}"
  ctl policy swap "$name"
  if [ "$p" != "$name" ]; then ctl param set scheduler fair_prefill_chunk 256; else ctl param set scheduler fair_prefill_chunk 0; fi
  for w in shared unshared mixed; do
    ctl cache flush
    # shellcheck disable=SC2086
    "$bin" bench --port "$port" --quiet --warmup-requests 0 --output-file "$out/compare-$p-$w.json" ${workload[$w]} \
      >/dev/null || { echo "bench failed: $p $w" >&2; exit 1; }
  done
done
ctl param set scheduler fair_prefill_chunk 0

cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
python3 - "$out" "$cpu" "${policies[@]}" <<'EOF'
import json, sys
out, cpu, policies = sys.argv[1], sys.argv[2], sys.argv[3:]
print(f"policy comparison on {cpu} (2 worker threads), one run each")
head = f"{'policy':<24}{'workload':<10}{'tok/s':>8}{'TTFT p50':>10}{'TTFT p99':>10}{'short p50':>11}{'short p99':>11}{'hit %':>7}{'max wait':>10}"
print(head)
print("-" * len(head))
for p in policies:
    for w in ("shared", "unshared", "mixed"):
        j = json.load(open(f"{out}/compare-{p}-{w}.json"))
        t, s = j["ttft_ms"], j.get("ttft_short_ms")
        hit = j["server"]["cached_token_ratio"]
        ms = lambda v: f"{v:.0f}ms"
        print(f"{p:<24}{w:<10}{j['total_throughput']:>8.0f}{ms(t['median']):>10}{ms(t['p99']):>10}"
              f"{(ms(s['median']) if s else '-'):>11}{(ms(s['p99']) if s else '-'):>11}"
              f"{(f'{hit*100:.1f}' if hit is not None else 'n/a'):>7}{ms(t['max']):>10}")
EOF
