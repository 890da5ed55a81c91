#!/usr/bin/env bash
# The data-parallel comparison of issue #16: launch/dp2.yaml (two scheduler groups, each with its
# own prefix cache and a 1-thread worker) under each routing policy, switched while serving and
# with both caches flushed before each run; `radixserve bench` on SGLang's generated-shared-prefix
# workload; one table: cache hit rate (cached / prompt tokens, from the api's counters),
# throughput, TTFT, and how the router spread the requests.
#
#   bash bench/compare_routing.sh        (RADIXSERVE_ROUTINGS="round-robin cache-aware" by default)
#
# Workload: 24 system prompts of 1,024 tokens, 6 questions of 32 tokens each (144 requests,
# shuffled), 16 output tokens, greedy, ignore_eos, at most 8 requests in flight. Model: a generated
# 'small' q8_0 model with a 4,096-token context (as bench/compare_policies.sh). The system prompts
# together (24k tokens) overflow one group's KV pool (16,384 slots): a group that sees all of them
# evicts, one that sees half of them keeps them.
# Needs a build (scripts/build.sh) and python3. Results: one JSON per run in $RADIXSERVE_BENCH_DIR.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${RADIXSERVE_BUILD_DIR:-$root/build}/bin/radixserve"
out="${RADIXSERVE_BENCH_DIR:-/tmp/radixserve-bench}"
port="${RADIXSERVE_BENCH_PORT:-30420}"
routings=(${RADIXSERVE_ROUTINGS:-round-robin cache-aware})
command -v python3 >/dev/null || { echo "compare_routing.sh: python3 is needed for the table" >&2; exit 2; }
mkdir -p "$out"

model="$out/small-q8_0-ctx4096.gguf"
[ -f "$model" ] || "$bin" gen-model --size small --type q8_0 --context 4096 -o "$model" >/dev/null
log="$out/routing-launch.log"
"$bin" launch "$root/launch/dp2.yaml" model:="$model" port:="$port" >"$log" 2>&1 &
launcher=$!
trap 'kill -INT $launcher 2>/dev/null || true; wait $launcher 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do grep -q "radixserve is ready" "$log" && break; sleep 0.5; done
grep -q "radixserve is ready" "$log" || { cat "$log"; exit 1; }
url="http://127.0.0.1:$port"
ctl() { "$bin" ctl --url "$url" "$@" >/dev/null; }
routed() { curl -s "$url/metrics" | sed -n "s/^radixserve_router_routed_total{group=\"$1\"} //p"; }

for r in "${routings[@]}"; do
  ctl param set api routing_policy "$r"
  ctl cache flush
  before0=$(routed dp0) before1=$(routed dp1)
  "$bin" bench --port "$port" --quiet --warmup-requests 0 --output-file "$out/routing-$r.json" \
    --dataset generated-shared-prefix --gsp-num-groups 24 --gsp-prompts-per-group 6 \
    --gsp-system-prompt-len 1024 --gsp-question-len 32 --gsp-output-len 16 --max-concurrency 8 \
    >/dev/null || { echo "bench failed: $r" >&2; exit 1; }
  echo "$(( $(routed dp0) - before0 )) $(( $(routed dp1) - before1 ))" >"$out/routing-$r.split"
done

cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
python3 - "$out" "$cpu" "${routings[@]}" <<'PY'
import json, sys
out, cpu, routings = sys.argv[1], sys.argv[2], sys.argv[3:]
print(f"dp 2 routing comparison on {cpu} (2 groups, 1 worker thread each, small q8_0 model), one run each")
head = f"{'routing':<16}{'hit %':>7}{'req/s':>8}{'tok/s':>9}{'TTFT p50':>10}{'TTFT p99':>10}{'dp0/dp1':>11}"
print(head)
print("-" * len(head))
for r in routings:
    j = json.load(open(f"{out}/routing-{r}.json"))
    split = open(f"{out}/routing-{r}.split").read().split()
    t = j["ttft_ms"]
    hit = j["server"]["cached_token_ratio"]
    print(f"{r:<16}{hit*100:>7.1f}{j['request_throughput']:>8.1f}{j['total_throughput']:>9.0f}"
          f"{t['median']:>8.0f}ms{t['p99']:>8.0f}ms{split[0] + '/' + split[1]:>11}")
PY
