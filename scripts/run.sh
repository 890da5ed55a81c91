#!/usr/bin/env bash
# The main job: installs dependencies, builds, and answers a request with the
# built-in default model (generated into ~/.cache/radixserve on first use).
# Extra arguments are passed to `radixserve generate`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RADIXSERVE_BUILD_DIR:-$root/build}"
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
if [ $# -eq 0 ]; then
  set -- --prompt "Once upon a time" --max-tokens 32
fi
exec "$build/bin/radixserve" generate "$@"
