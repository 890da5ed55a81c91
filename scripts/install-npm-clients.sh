#!/usr/bin/env bash
# Installs the JavaScript clients the client tests drive (tests/pipeline/*.mjs): the openai SDK, the
# Vercel AI SDK and LangChain.js, pinned, into one folder (default .cache/npm-clients). Run by
# install-deps.sh (the test command's first step), so that no test needs the network.
# Idempotent: a folder that already holds exactly these versions is left as it is.
#   install-npm-clients.sh [DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-$root/.cache/npm-clients}"
# @langchain/openai 0.6 is the last line that runs on Node.js 20.
PACKAGES=(openai@4.104.0 ai@6.0.333 @ai-sdk/openai@3.0.141 zod@4.6.7 @langchain/openai@0.6.17 @langchain/core@0.3.80)

installed() {  # whether node_modules holds package $1 at version $2
  local pj="$dir/node_modules/$1/package.json"
  [ -f "$pj" ] && node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' "$pj" "$2"
}
missing=()
for p in "${PACKAGES[@]}"; do
  name="${p%@*}" version="${p##*@}"
  installed "$name" "$version" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-npm-clients: all ${#PACKAGES[@]} packages already in $dir"
  exit 0
fi
echo "install-npm-clients: installing ${missing[*]} into $dir"
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --save-exact "${PACKAGES[@]}" >/dev/null \
  || { echo "install-npm-clients: npm install failed (the npm registry must be reachable)" >&2; exit 1; }
for p in "${PACKAGES[@]}"; do
  installed "${p%@*}" "${p##*@}" || { echo "install-npm-clients: $p missing after npm install" >&2; exit 1; }
done
echo "install-npm-clients: done"
