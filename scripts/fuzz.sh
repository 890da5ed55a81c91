#!/usr/bin/env bash
# Builds the libFuzzer targets in the sanitizer tree (scripts/build-sanitize.sh: clang-14, ASan +
# UBSan, build-sanitize/) and runs each for a bounded time on a copy of its seed corpus.
#   scripts/fuzz.sh                  # every target, FUZZ_SECONDS (default 60) each
#   FUZZ_SECONDS=600 scripts/fuzz.sh gguf tokenizer
# Crashes land in build-sanitize/crashes/<target>/; fix them, then keep the input in
# fuzz/regressions/<target>/ so that the fuzz_replay_<target>_test ctest replays it.
# Environment: FUZZ_SECONDS, FUZZ_JOBS (build parallelism, default 2), RADIXSERVE_SANITIZE_BUILD_DIR.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${RADIXSERVE_SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}"
SECONDS_EACH="${FUZZ_SECONDS:-60}"
JOBS="${FUZZ_JOBS:-2}"
ALL_TARGETS=(gguf tokenizer request_parser http_connection launch messages)
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL_TARGETS[@]}")

RADIXSERVE_SANITIZE_BUILD_DIR="$BUILD" RADIXSERVE_JOBS="$JOBS" \
  bash "$ROOT/scripts/build-sanitize.sh" $(printf 'fuzz_%s ' "${TARGETS[@]}")

status=0
passed=0
failed=0
for t in "${TARGETS[@]}"; do
  corpus="$BUILD/corpus/$t"
  crashes="$BUILD/crashes/$t"
  rm -rf "$corpus" "$crashes" && mkdir -p "$corpus" "$crashes"
  cp -r "$ROOT/fuzz/corpus/$t/." "$corpus/"
  [ -d "$ROOT/fuzz/regressions/$t" ] && cp -r "$ROOT/fuzz/regressions/$t/." "$corpus/"
  echo "fuzz.sh: $t for ${SECONDS_EACH}s"
  # Sockets and temp files in the targets: one process per target, bounded input size and memory.
  ok=1
  if ! (cd "$crashes" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
        "$BUILD/bin/fuzz_$t" -max_total_time="$SECONDS_EACH" -max_len=65536 -rss_limit_mb=2048 \
        -timeout=10 -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" 2>&1 | tail -n 25); then
    ok=0
  fi
  if compgen -G "$crashes/*" >/dev/null; then
    echo "fuzz.sh: $t found crashes: $(ls "$crashes")"
    ok=0
  fi
  if [ $ok = 1 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; fi
done
echo "fuzz: $passed passed, $failed failed"
exit $status
