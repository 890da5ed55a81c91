#!/usr/bin/env bash
# Builds an arm64 (aarch64) sysroot for cross-compiling radixserve on an x86-64 Debian machine
# (issue 43; used by cmake/toolchain-aarch64.cmake).
#
#   arm64-sysroot.sh [--runtime] [--update] [DIR]
#
#   DIR        where the sysroot goes (default: $RADIXSERVE_ARM64_SYSROOT, else ~/.cache/radixserve/arm64-sysroot)
#   --runtime  only what building the product needs (as install-deps.sh --runtime); without it
#              also GoogleTest, Google Benchmark and Cyclone DDS, which a build with tests needs
#   --update   refresh the arm64 package lists even if they are less than a day old
#
# Why apart from the host: installing the arm64 -dev packages next to the amd64 ones with dpkg
# multiarch does not work for all of them (glog and yaml-cpp are not co-installable), so the arm64
# packages are unpacked into a folder instead, and nothing is installed on the host. The host's apt
# and dpkg are left alone: the arm64 package lists live in a private apt state next to the sysroot
# (APT_CONFIG), whose only architecture is arm64, so no `dpkg --add-architecture` is needed.
#
# What it does, each step skipped where its result is already there:
#   1. a private apt configuration with the Debian release of the host (bookworm), arm64 only,
#      and its package lists (apt-get update into that private state, needs no root);
#   2. resolves the arm64 packages: the -dev packages of scripts/install-deps.sh and their whole
#      dependency closure, with apt's own resolver (apt-get --simulate install) against a private
#      dpkg status that marks what the cross toolchain (crossbuild-essential-arm64) already
#      provides as installed: libc6, libc6-dev, libstdc++, libgcc, linux-libc-dev, ... (the
#      installed *-arm64-cross packages). The list is written to CACHE/packages.txt;
#   3. downloads the .deb files with apt-get download into CACHE/debs;
#   4. unpacks each with dpkg-deb -x into the sysroot (no maintainer scripts run), then makes
#      the links that the packages' postinst scripts would make with update-alternatives (OpenBLAS's
#      libblas.so.3, libopenblas.so.0, ...), and rewrites every absolute symlink inside the sysroot
#      (e.g. lib*.so -> /lib/aarch64-linux-gnu/...) as a relative one, so that it resolves inside
#      the sysroot wherever the sysroot lies.
#
# The cache (private apt state and .deb files) is CACHE = $RADIXSERVE_ARM64_CACHE, else DIR.cache.
# The Debian mirrors are $RADIXSERVE_ARM64_MIRROR (default http://deb.debian.org/debian) and
# $RADIXSERVE_ARM64_SECURITY_MIRROR (default http://deb.debian.org/debian-security).
#
# Needs: apt, dpkg, and crossbuild-essential-arm64 installed (its packages are what the sysroot
# leaves out). Then:
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake
set -euo pipefail

die() { echo "arm64-sysroot: error: $*" >&2; exit 1; }
say() { echo "arm64-sysroot: $*"; }

# ---- arguments ----------------------------------------------------------------------------------
RUNTIME_ONLY=0
FORCE_UPDATE=0
SYSROOT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runtime) RUNTIME_ONLY=1 ;;
    --update) FORCE_UPDATE=1 ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    -*) die "unknown option '$1' (use --runtime, --update, --help)" ;;
    *) [ -z "$SYSROOT" ] || die "more than one DIR given ('$SYSROOT', '$1')"; SYSROOT="$1" ;;
  esac
  shift
done
SYSROOT="${SYSROOT:-${RADIXSERVE_ARM64_SYSROOT:-$HOME/.cache/radixserve/arm64-sysroot}}"
mkdir -p "$SYSROOT" || die "cannot create $SYSROOT"
SYSROOT="$(cd "$SYSROOT" && pwd -P)"
CACHE="${RADIXSERVE_ARM64_CACHE:-$SYSROOT.cache}"
mkdir -p "$CACHE" || die "cannot create $CACHE"
CACHE="$(cd "$CACHE" && pwd -P)"
MIRROR="${RADIXSERVE_ARM64_MIRROR:-http://deb.debian.org/debian}"
SECURITY_MIRROR="${RADIXSERVE_ARM64_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
ARCH=arm64
TRIPLET=aarch64-linux-gnu

# The arm64 packages the build needs: the libraries and headers of scripts/install-deps.sh (its
# tools, compilers and test programs run on the host and are not needed here). iceoryx and
# cyclonedds-tools hold executables (iox-roudi, idlc) that their CMake packages name as imported
# targets, so they must be there for find_package to succeed.
RUNTIME_PACKAGES=(
  iceoryx libiceoryx-posh-dev libiceoryx-hoofs-dev libacl1-dev
  libprotobuf-dev libgoogle-glog-dev
  libopenblas-dev
  libcpp-httplib-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev
)
TEST_PACKAGES=(libgtest-dev libgmock-dev libbenchmark-dev cyclonedds-dev cyclonedds-tools)
ROOTS=("${RUNTIME_PACKAGES[@]}")
[ "$RUNTIME_ONLY" = 1 ] || ROOTS+=("${TEST_PACKAGES[@]}")

# ---- checks -------------------------------------------------------------------------------------
for tool in apt-get apt-cache dpkg-deb dpkg-query realpath; do
  command -v "$tool" >/dev/null || die "'$tool' not found (this script needs a Debian host with apt and dpkg)"
done
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$KEYRING" ] || die "$KEYRING missing: apt-get install debian-archive-keyring"
CODENAME="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
[ -n "$CODENAME" ] || die "no VERSION_CODENAME in /etc/os-release (is this Debian?)"
# What the cross toolchain provides (name version), from the installed *-arm64-cross packages.
mapfile -t TOOLCHAIN < <(dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' '*-arm64-cross' 2>/dev/null \
  | awk '$1 == "ii" { sub(/-arm64-cross$/, "", $2); sub(/cross[0-9]+$/, "", $3); print $2, $3 }')
if [ ${#TOOLCHAIN[@]} -eq 0 ] || ! command -v "$TRIPLET-g++" >/dev/null; then
  die "the arm64 cross toolchain is not installed: apt-get install crossbuild-essential-arm64"
fi
say "sysroot $SYSROOT, cache $CACHE, Debian $CODENAME $ARCH"

# ---- 1. private apt configuration and package lists ---------------------------------------------
APT_DIR="$CACHE/apt"
mkdir -p "$APT_DIR"/etc/apt.conf.d "$APT_DIR"/etc/preferences.d "$APT_DIR"/etc/sources.list.d \
         "$APT_DIR"/state/lists/partial "$APT_DIR"/cache/archives/partial "$CACHE/debs"
sources="deb [arch=$ARCH signed-by=$KEYRING] $MIRROR $CODENAME main
deb [arch=$ARCH signed-by=$KEYRING] $MIRROR $CODENAME-updates main
deb [arch=$ARCH signed-by=$KEYRING] $SECURITY_MIRROR $CODENAME-security main"
if [ "$(cat "$APT_DIR/etc/sources.list" 2>/dev/null)" != "$sources" ]; then
  echo "$sources" > "$APT_DIR/etc/sources.list"
  FORCE_UPDATE=1   # new or other mirrors: their lists are not there yet
fi
: > "$APT_DIR/etc/apt.conf"
# Read first (APT_CONFIG), it points every other configuration and state path into APT_DIR, so the
# host's apt.conf.d, sources, pins, lists and dpkg status are neither read nor written. A proxy the
# host's apt uses is kept.
{
  echo "Dir::Etc::Parts \"$APT_DIR/etc/apt.conf.d\";"
  echo "Dir::Etc::main \"$APT_DIR/etc/apt.conf\";"
  echo "Dir::Etc::SourceList \"$APT_DIR/etc/sources.list\";"
  echo "Dir::Etc::SourceParts \"$APT_DIR/etc/sources.list.d\";"
  echo "Dir::Etc::Preferences \"$APT_DIR/etc/preferences\";"
  echo "Dir::Etc::PreferencesParts \"$APT_DIR/etc/preferences.d\";"
  echo "Dir::State \"$APT_DIR/state\";"
  echo "Dir::State::Lists \"$APT_DIR/state/lists\";"
  echo "Dir::State::status \"$APT_DIR/state/status\";"
  echo "Dir::Cache \"$APT_DIR/cache\";"
  echo "Dir::Cache::srcpkgcache \"\";"     # one binary cache is enough
  echo "APT::Architecture \"$ARCH\";"
  echo "APT::Architectures { \"$ARCH\"; };"
  echo "Acquire::Languages \"none\";"
  echo "Acquire::GzipIndexes \"true\";"   # keep the lists compressed (19 MB instead of 50)
  echo "Acquire::CompressionTypes::Order { \"gz\"; };"
  # root would hand downloads to the _apt user, which may not be able to write into CACHE
  [ "$(id -u)" -ne 0 ] || echo "APT::Sandbox::User \"root\";"
  apt-config dump 2>/dev/null | grep -iE '^Acquire::(https?|ftp)::Proxy' || true
} > "$APT_DIR/apt.conf"
export APT_CONFIG="$APT_DIR/apt.conf"
touch "$APT_DIR/state/status"

lists_fresh() {
  [ -n "$(find "$APT_DIR/state/lists" -maxdepth 1 -name "*_${CODENAME}_*Packages*" -mmin -1440 2>/dev/null)" ]
}
if [ "$FORCE_UPDATE" = 1 ] || ! lists_fresh; then
  say "fetching the $ARCH package lists of $MIRROR $CODENAME (private apt state in $APT_DIR)"
  apt-get update -q >"$APT_DIR/update.log" 2>&1 || { cat "$APT_DIR/update.log" >&2
    die "apt-get update failed for $ARCH (mirror $MIRROR; set RADIXSERVE_ARM64_MIRROR to one that works)"; }
  grep -E '^(W|E):' "$APT_DIR/update.log" >&2 || true
else
  say "package lists are less than a day old (--update refreshes them)"
fi

# ---- 2. resolve the dependency closure ----------------------------------------------------------
# A private dpkg status that holds what the cross toolchain provides as installed (at the cross
# packages' versions), so apt's resolver neither picks them nor follows their dependencies.
# Their virtual names (libc6-dev provides libc-dev, ...) come from the arm64 packages of the same name.
declare -A PROVIDES=()
while IFS='|' read -r pkg provides; do PROVIDES[$pkg]="$provides"; done < <(
  apt-cache show --no-all-versions "${TOOLCHAIN[@]%% *}" 2>/dev/null \
    | awk '/^Package:/ { p = $2 } /^Provides:/ { print p "|" substr($0, 11) }' || true)
{
  for entry in "${TOOLCHAIN[@]}"; do
    read -r pkg ver <<<"$entry"
    provides="${PROVIDES[$pkg]:-}"
    echo "Package: $pkg"
    echo "Status: hold ok installed"
    echo "Architecture: $ARCH"
    echo "Multi-Arch: same"
    echo "Version: $ver"
    [ -z "$provides" ] || echo "Provides: $provides"
    echo "Maintainer: none"
    echo "Description: provided by the cross toolchain ($pkg-$ARCH-cross)"
    echo
  done
} > "$APT_DIR/state/status"
say "left to the cross toolchain: $(printf '%s\n' "${TOOLCHAIN[@]}" | awk '{printf "%s%s", sep, $1; sep=" "}')"

# apt-get --simulate install prints "Inst NAME (VERSION ...)" for each package it would install: the
# closure, with the alternatives apt itself would choose (libopenblas0-pthread, not all three
# OpenBLAS variants that `apt-cache depends --recurse` would list).
if ! apt-get --simulate install --no-install-recommends -q "${ROOTS[@]}" >"$CACHE/resolve.log" 2>&1; then
  cat "$CACHE/resolve.log" >&2
  die "apt cannot resolve the $ARCH packages (see above; --update refreshes stale lists)"
fi
awk '$1 == "Inst" { v = $3; if (v ~ /^\[/) v = $4; gsub(/[()]/, "", v); print $2, v }' "$CACHE/resolve.log" \
  | sort > "$CACHE/packages.txt"
[ -s "$CACHE/packages.txt" ] || die "the resolution is empty (see $CACHE/resolve.log)"
say "resolved $(wc -l < "$CACHE/packages.txt") $ARCH packages (${#ROOTS[@]} requested + dependencies): $CACHE/packages.txt"

# Versions differing from the host's installed amd64 packages (the x86 build's) are worth knowing.
for pkg in "${ROOTS[@]}"; do
  host_ver="$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)"
  arm_ver="$(awk -v p="$pkg" '$1 == p { print $2 }' "$CACHE/packages.txt")"
  if [ -n "$host_ver" ] && [ -n "$arm_ver" ] && [ "$host_ver" != "$arm_ver" ]; then
    say "note: $pkg is $arm_ver for $ARCH but $host_ver on this host"
  fi
done

# ---- 3. download --------------------------------------------------------------------------------
deb_file() { echo "${1}_${2//:/%3a}_"; }   # apt-get download's file name up to the architecture
missing=()
while read -r pkg ver; do
  compgen -G "$CACHE/debs/$(deb_file "$pkg" "$ver")*.deb" >/dev/null || missing+=("$pkg=$ver")
done < "$CACHE/packages.txt"
if [ ${#missing[@]} -gt 0 ]; then
  say "downloading ${#missing[@]} packages into $CACHE/debs"
  start=$SECONDS
  (cd "$CACHE/debs" && apt-get download -q "${missing[@]}") >"$CACHE/download.log" 2>&1 \
    || { cat "$CACHE/download.log" >&2; die "apt-get download failed (a 404 means stale lists: rerun with --update)"; }
  say "downloaded ${#missing[@]} packages in $((SECONDS - start)) s"
else
  say "all $(wc -l < "$CACHE/packages.txt") packages already downloaded"
fi

# ---- 4. unpack ----------------------------------------------------------------------------------
# $SYSROOT/.radixserve-unpacked lists the .deb files already unpacked; their postinst scripts are
# kept in $SYSROOT/.radixserve-postinst for the alternatives below.
STAMP="$SYSROOT/.radixserve-unpacked"
POSTINST_DIR="$SYSROOT/.radixserve-postinst"
touch "$STAMP"
mkdir -p "$POSTINST_DIR"
unpacked=0
while read -r pkg ver; do
  deb="$(compgen -G "$CACHE/debs/$(deb_file "$pkg" "$ver")*.deb" | head -n 1)"
  [ -n "$deb" ] || die "no .deb for $pkg $ver in $CACHE/debs"
  name="$(basename "$deb")"
  grep -qxF "$name" "$STAMP" && continue
  dpkg-deb -x "$deb" "$SYSROOT" || die "dpkg-deb -x $deb failed"
  rm -f "$POSTINST_DIR/$pkg.postinst"
  dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./postinst > "$POSTINST_DIR/$pkg.postinst" 2>/dev/null \
    || rm -f "$POSTINST_DIR/$pkg.postinst"
  echo "$name" >> "$STAMP"
  unpacked=$((unpacked + 1))
done < "$CACHE/packages.txt"
say "unpacked $unpacked packages into $SYSROOT ($(($(wc -l < "$STAMP") - unpacked)) were there already)"

# link_in_sysroot LINK TARGET: LINK -> TARGET (both absolute paths as on the target system), made
# as a relative link inside the sysroot.
link_in_sysroot() {
  local link="$SYSROOT$1" target="$SYSROOT$2"
  mkdir -p "$(dirname "$link")"
  ln -sfn "$(realpath -m -s --relative-to="$(dirname "$link")" "$target")" "$link"
}

# update-alternatives links: the postinst scripts' `update-alternatives --install LINK NAME PATH
# PRIORITY [--slave LINK NAME PATH]...`; where several packages offer the same NAME, the highest
# priority wins, as in auto mode. Only alternatives whose PATH is in the sysroot are made.
alternatives=0
if compgen -G "$POSTINST_DIR/*.postinst" >/dev/null; then
  while read -r link target; do
    [ -e "$SYSROOT$target" ] || continue
    link_in_sysroot "$link" "$target"
    alternatives=$((alternatives + 1))
  done < <(cat "$POSTINST_DIR"/*.postinst | sed -e ':a' -e '/\\$/{N;s/\\\n//;ba}' | awk '
    $0 ~ /update-alternatives[^|;&]*--install/ {
      n = split($0, w, /[ \t]+/); i = 1
      while (i <= n && w[i] != "--install") i++
      link = w[i+1]; name = w[i+2]; path = w[i+3]; prio = w[i+4] + 0
      if (!(name in best) || prio > best[name]) {
        best[name] = prio; out[name] = link " " path
        for (j = i + 5; j + 3 <= n; j++) if (w[j] == "--slave") out[name] = out[name] "\n" w[j+1] " " w[j+3]
      }
    }
    END { for (k in out) print out[k] }')
fi
say "$alternatives update-alternatives links in place"

# Absolute symlinks point into the host's / ; rewrite them relative, inside the sysroot.
fixed=0
while IFS= read -r -d '' link; do
  link_in_sysroot "${link#"$SYSROOT"}" "$(readlink "$link")"
  fixed=$((fixed + 1))
done < <(find "$SYSROOT" -type l -lname '/*' -print0)
say "rewrote $fixed absolute symlinks as relative ones"

# ---- summary ------------------------------------------------------------------------------------
dangling="$(find "$SYSROOT" -xtype l -path "*/$TRIPLET/*" -name '*.so*' | wc -l)"
[ "$dangling" = 0 ] || say "note: $dangling library links in the sysroot point to nothing (find $SYSROOT -xtype l)"
for f in usr/lib/$TRIPLET/cmake/glog/glog-config.cmake usr/lib/$TRIPLET/libopenblas.so \
         usr/lib/$TRIPLET/pkgconfig/cpp-httplib.pc usr/include/google/protobuf/message.h; do
  [ -e "$SYSROOT/$f" ] || die "expected $SYSROOT/$f after unpacking; the sysroot is incomplete"
done
say "done: $SYSROOT holds $(wc -l < "$CACHE/packages.txt") packages, $(du -sh "$SYSROOT" | cut -f1)"
say "configure with: RADIXSERVE_ARM64_SYSROOT=$SYSROOT cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake"
