#!/usr/bin/env bash
# The main job: installs the run-time dependencies, builds the radixserve binary with its plugins
# and node components, launches the pipeline from launch/edge.yaml (api, scheduler, worker and
# detokenizer as four processes over iceoryx) with the built-in default model (stories260K,
# embedded in the binary) and answers one completion request.
#
#   bash scripts/run.sh                      # answer one request, then stop
#   RADIXSERVE_KEEP_RUNNING=1 bash scripts/run.sh   # keep serving until Ctrl-C
#   bash scripts/run.sh model:=/path/model.gguf port:=8080   # launch arguments
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RADIXSERVE_BUILD_DIR:-$root/build}"
# Only what the product needs: no test frameworks or fuzzer toolchain, no tests or benchmarks built.
bash "$root/scripts/install-deps.sh" --runtime
# The CUDA backend only where a GPU is (nvidia-smi lists one): on a machine that has nvcc but no
# GPU its minute of nvcc buys this CPU run nothing. RADIXSERVE_ENABLE_CUDA=ON|OFF decides instead.
cuda="${RADIXSERVE_ENABLE_CUDA:-}"
if [ -z "$cuda" ]; then
  cuda=OFF
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then cuda=ON; fi
fi
bash "$root/scripts/build.sh" -DRADIXSERVE_BUILD_TESTS=OFF -DRADIXSERVE_ENABLE_CUDA="$cuda"

port=30000
for a in "$@"; do case "$a" in port:=*) port="${a#port:=}";; esac; done
log="$(mktemp -t radixserve-launch.XXXXXX)"
"$build/bin/radixserve" launch "$root/launch/edge.yaml" "$@" >"$log" 2>&1 &
launcher=$!
stop() { kill -INT "$launcher" 2>/dev/null || true; wait "$launcher" 2>/dev/null || true; }
trap stop EXIT

echo "launching radixserve (log: $log) ..."
for _ in $(seq 1 600); do
  if grep -q "radixserve is ready" "$log"; then break; fi
  if ! kill -0 "$launcher" 2>/dev/null; then cat "$log"; echo "the launch failed" >&2; exit 1; fi
  sleep 0.5
done
grep "radixserve is ready" "$log" || { cat "$log"; echo "the server did not become ready" >&2; exit 1; }

# The built-in model continues stories (it has no chat template): a completion-style prompt.
request='{"model": "default", "prompt": "Once upon a time", "max_tokens": 48, "temperature": 0}'
echo "POST http://127.0.0.1:$port/v1/completions"
echo "$request"
curl -sS --fail-with-body "http://127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' -d "$request"
echo
if [ "${RADIXSERVE_KEEP_RUNNING:-0}" = 1 ]; then
  echo "serving on http://127.0.0.1:$port/v1 until Ctrl-C"
  wait "$launcher"
fi
