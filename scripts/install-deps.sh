#!/usr/bin/env bash
# Installs radixserve's dependencies from Debian's apt.
#   install-deps.sh            # everything: build, run, tests, benchmarks, fuzzing (the test command)
#   install-deps.sh --runtime  # only what building and running the product needs (the main job)
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
  # fuzzing (scripts/fuzz.sh): clang with libFuzzer and the sanitizer runtimes
  clang-14 libfuzzer-14-dev libclang-rt-14-dev
  # past one machine: the DDS bridge (Cyclone DDS and its IDL compiler), and the two-host test's
  # network namespaces (ip, unshare)
  cyclonedds-dev cyclonedds-tools iproute2 util-linux
)

case "${1:-}" in
  --runtime) PACKAGES=("${RUNTIME_PACKAGES[@]}") ;;
  "") PACKAGES=("${RUNTIME_PACKAGES[@]}" "${TEST_PACKAGES[@]}")
      # the official openai npm client test needs Node.js and npm (a newer one may be installed already)
      command -v node >/dev/null && command -v npm >/dev/null || PACKAGES+=(nodejs npm) ;;
  *) echo "install-deps: unknown argument '$1' (use --runtime or nothing)" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
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
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" \
  || { echo "install-deps: apt-get install failed for: ${missing[*]}" >&2; exit 1; }
echo "install-deps: done"
