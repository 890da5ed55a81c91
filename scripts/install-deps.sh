#!/usr/bin/env bash
# Installs every build and test dependency of radixserve from Debian's apt.
# Idempotent and non-interactive; any failure stops the script with a message.
set -euo pipefail

PACKAGES=(
  # toolchain
  g++ cmake ninja-build pkg-config git curl
  # shared-memory transport (iceoryx 2.x); libacl1-dev is a missing dependency of the hoofs headers
  iceoryx libiceoryx-posh-dev libiceoryx-hoofs-dev libacl1-dev
  # control plane and logging
  libprotobuf-dev protobuf-compiler libgoogle-glog-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # CPU GEMM
  libopenblas-dev
  # HTTP server, JSON, YAML launch files, command line
  libcpp-httplib-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev
  # fuzzing (scripts/fuzz.sh): clang with libFuzzer and the sanitizer runtimes
  clang-14 libfuzzer-14-dev libclang-rt-14-dev
)

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
