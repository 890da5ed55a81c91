#!/usr/bin/env bash
# The soak of issue #7 as a long run: the soak test program (tests/pipeline/soak_test.cc) from an
# existing build, rounds of 96 mixed requests above capacity until RADIXSERVE_SOAK_SECONDS (default
# 600) have passed, then a summary: rounds, requests by outcome, node RSS first vs last round, and
# RouDi's used shared-memory chunks per pool before the first round and after the last.
#
#   bash bench/soak.sh [BUILD_DIR]      (default $RADIXSERVE_BUILD_DIR, else build/)
#
# Builds nothing. Needs the build's bin/pipeline_soak_test and bin/radixserve; waits while another
# RouDi runs on the machine (one per machine). The full output stays in $RADIXSERVE_SOAK_LOG
# (default: a new /tmp/radixserve-soak-*.log). Exit status: the test program's.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${RADIXSERVE_BUILD_DIR:-$root/build}}"
test_bin="$build/bin/pipeline_soak_test"
seconds="${RADIXSERVE_SOAK_SECONDS:-600}"
log="${RADIXSERVE_SOAK_LOG:-$(mktemp /tmp/radixserve-soak-XXXXXX.log)}"
for f in "$test_bin" "$build/bin/radixserve"; do
  [ -x "$f" ] || { echo "error: $f not found: build first (scripts/build.sh, or cmake --build $build)" >&2; exit 2; }
done

echo "soak: $test_bin for $seconds s, output in $log"
start=$(date +%s)
RADIXSERVE_SOAK_SECONDS="$seconds" "$test_bin" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
elapsed=$(( $(date +%s) - start ))

# The test prints "pools before: used N N ...: ..." once and per round
# "round R: requests N, completed N, refused N, hung up N, other N, node RSS N KiB (api N, ...), pools used N N ...: ...".
awk -v status="$status" -v elapsed="$elapsed" '
  function after(line, key,   s) { s = substr(line, index(line, key) + length(key)); return s }
  /^pools before: used / { before = after($0, "pools before: used "); sub(/:.*/, "", before) }
  /^round [0-9]+: requests / {
    rounds++
    requests += after($0, "requests ") + 0
    completed += after($0, "completed ") + 0
    refused += after($0, "refused ") + 0
    hung_up += after($0, "hung up ") + 0
    other += after($0, "other ") + 0
    rss = after($0, "node RSS ") + 0
    nodes = after($0, " KiB ("); sub(/\).*/, "", nodes)
    if (rounds == 1) { rss_first = rss; nodes_first = nodes }
    rss_last = rss; nodes_last = nodes
    pools = after($0, "pools used "); sub(/:.*/, "", pools)
  }
  END {
    printf "\n== soak summary (%d s, test exit status %d)\n", elapsed, status
    printf "rounds            %d\n", rounds
    printf "requests          %d: completed %d, refused (503) %d, hung up %d, other %d\n",
           requests, completed, refused, hung_up, other
    printf "node RSS          %d KiB after the first round, %d KiB after the last (%+d KiB)\n",
           rss_first, rss_last, rss_last - rss_first
    printf "  per node, KiB   first: %s\n                  last:  %s\n", nodes_first, nodes_last
    printf "pool used chunks  before: %s\n", before
    printf "                  after:  %s\n", pools
  }' "$log"
exit "$status"
