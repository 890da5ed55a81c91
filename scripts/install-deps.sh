#!/usr/bin/env bash
# Installs radixserve's dependencies from Debian's apt.
#   install-deps.sh            # everything: build, run, tests, benchmarks, fuzzing (the test command),
#                              # and the pinned JavaScript clients of the client tests (npm, into
#                              # .cache/npm-clients: install-npm-clients.sh), so that tests need no network
#   install-deps.sh --runtime  # only what building and running the product needs (the main job)
#   install-deps.sh --cuda     # the run-time packages and Debian's CUDA toolkit (11.8 on bookworm, from
#                              # contrib and non-free, which it adds to apt's Debian entries if missing)
# Idempotent and non-interactive; any failure stops the script with a message.
set -euo pipefail

RUNTIME_PACKAGES=(
  # toolchain
  g++ cmake ninja-build pkg-config git curl
  # shared-memory transport (iceoryx 2.x); libacl1-dev is a missing dependency of the hoofs headers
  iceoryx libiceoryx-posh-dev libiceoryx-hoofs-dev libacl1-dev
  # control plane and logging
  libprotobuf-dev protobuf-compiler libgoogle-glog-dev
  # CPU GEMM
  libopenblas-dev
  # HTTP server, JSON, YAML launch files, command line
  libcpp-httplib-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev
)
TEST_PACKAGES=(
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # the JSON Schema reference validator of grammar_sampling_test (tests/grammar/validate_json_instances.py)
  python3-jsonschema
  # fuzzing (scripts/fuzz.sh): clang with libFuzzer and the sanitizer runtimes
  clang-14 libfuzzer-14-dev libclang-rt-14-dev
  # past one machine: the DDS bridge (Cyclone DDS and its IDL compiler), and the two-host test's
  # network namespaces (ip, unshare)
  cyclonedds-dev cyclonedds-tools iproute2 util-linux
)

# Debian's CUDA toolkit; it brings the g++-11 its nvcc runs as host compiler.
CUDA_PACKAGES=(nvidia-cuda-toolkit)
CUDA=0

NPM_CLIENTS=0
case "${1:-}" in
  --runtime) PACKAGES=("${RUNTIME_PACKAGES[@]}") ;;
  --cuda) PACKAGES=("${RUNTIME_PACKAGES[@]}")
          # a CUDA already installed (NVIDIA's, at /usr/local/cuda, or any nvcc on PATH) is kept
          if nvcc="$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)"; then
            echo "install-deps: CUDA found ($nvcc), not installing Debian's toolkit"
          else
            PACKAGES+=("${CUDA_PACKAGES[@]}"); CUDA=1
          fi ;;
  "") PACKAGES=("${RUNTIME_PACKAGES[@]}" "${TEST_PACKAGES[@]}")
      # the official openai npm client test needs Node.js and npm (a newer one may be installed already)
      command -v node >/dev/null && command -v npm >/dev/null || PACKAGES+=(nodejs npm)
      NPM_CLIENTS=1 ;;
  *) echo "install-deps: unknown argument '$1' (use --runtime, --cuda or nothing)" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

npm_clients() { [ "$NPM_CLIENTS" = 0 ] || bash "$(dirname "${BASH_SOURCE[0]}")/install-npm-clients.sh"; }
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  npm_clients
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q || { echo "install-deps: apt-get update failed" >&2; exit 1; }
# (the policy is read whole: grep -q would stop reading early and pipefail would see apt-cache's SIGPIPE)
cuda_candidate() { [[ "$(apt-cache policy nvidia-cuda-toolkit 2>/dev/null)" =~ Candidate:\ [0-9] ]]; }
if [ "$CUDA" = 1 ] && ! cuda_candidate; then
  # nvidia-cuda-toolkit lives in Debian's non-free component, and the driver library it needs
  # depends on contrib's nvidia-support; a default install has neither. They are added to the
  # Debian entries apt already has (a second entry for the same archive would have to repeat their
  # Signed-By exactly), keeping a copy of each file changed.
  changed=""
  for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
    [ -f "$f" ] || continue
    # the lines that list components: deb822's Components:, or a one-line entry's deb lines
    lines='/^deb(-src)? .*debian/'
    [ "${f##*.}" = sources ] && lines='/^Components:/'
    edit="$lines { / contrib( |\$)/! s/\$/ contrib/; / non-free( |\$)/! s/\$/ non-free/ }"
    if ! sed -E "$edit" "$f" | cmp -s - "$f"; then
      $SUDO cp "$f" "$f.before-radixserve"
      $SUDO sed -i -E "$edit" "$f"
      changed="$changed $f"
    fi
  done
  [ -n "$changed" ] || { echo "install-deps: no nvidia-cuda-toolkit, and no Debian entry in apt's sources to add contrib and non-free to" >&2; exit 1; }
  echo "install-deps: added Debian's contrib and non-free components to$changed (copies: *.before-radixserve)"
  $SUDO apt-get update -q || { echo "install-deps: apt-get update failed" >&2; exit 1; }
  cuda_candidate || { echo "install-deps: no nvidia-cuda-toolkit in Debian's non-free component here; install CUDA from NVIDIA's repository instead" >&2; exit 1; }
fi
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" \
  || { echo "install-deps: apt-get install failed for: ${missing[*]}" >&2; exit 1; }
npm_clients
echo "install-deps: done"
