#!/usr/bin/env bash
# The build dependencies of aitk-validate for a machine that cannot install
# any: the lent GPU machine (see ci/gpu-check.sh) has a compiler, CMake,
# ninja and the CUDA toolkit but no libyaml, cJSON, cmocka, Google Benchmark,
# OpenBLAS or libelf, and reaches no package registry.
#
#   bash ci/device-deps.sh fetch     # here, with apt: the .debs into .device-deps/
#   . ci/device-deps.sh env          # there: unpacks them (once) and exports the
#                                    # pkg-config / loader variables for them
#   . ci/device-deps.sh python       # there: the Python wheels onto PYTHONPATH
#
# The packages are Debian 12's own (apt-get download: nothing else is
# fetched), unpacked into .device-deps/root, never over the machine's own
# folders: PKG_CONFIG_LIBDIR names only that root's .pc folders and
# PKG_CONFIG_SYSROOT_DIR puts the root in front of every -I and -L they give,
# so the build cannot mix them with other copies. .device-deps/ is ignored
# by git; name it in the device tool's `carry`.
set -euo pipefail

DEVICE_DEPS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEVICE_DEPS_DIR=$DEVICE_DEPS_ROOT/.device-deps

# Development packages and their run-time libraries, with what needs them.
device_deps_packages=(
  libyaml-dev libyaml-0-2                    # data files and ai-toolkit configs
  libcjson-dev libcjson1                     # the JSON report
  libelf-dev libelf1 zlib1g-dev              # ELF reader (libelf.pc requires zlib)
  libopenblas-dev libopenblas-pthread-dev libopenblas0 libopenblas0-pthread
  libgfortran5 libquadmath0                  # OpenBLAS's run-time needs
  libbenchmark-dev libbenchmark1debian       # the microbenchmark shim
  libcmocka-dev libcmocka0                   # test assertions
  pkgconf pkgconf-bin libpkgconf3            # pkg-config, when the machine has none
)

# Python wheels for ci/torch-flux-step.py: the device has torch but not
# diffusers (pure Python; its other needs are there, see the device's notes).
device_deps_wheels=(diffusers)

device_deps_fetch() {
  mkdir -p "$DEVICE_DEPS_DIR" "$DEVICE_DEPS_DIR/wheels"
  rm -f "$DEVICE_DEPS_DIR"/*.deb "$DEVICE_DEPS_DIR"/wheels/*.whl
  (cd "$DEVICE_DEPS_DIR" && apt-get download "${device_deps_packages[@]}")
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$DEVICE_DEPS_DIR/wheels" \
    "${device_deps_wheels[@]}"
  echo "device-deps: $(ls "$DEVICE_DEPS_DIR"/*.deb | wc -l) packages," \
    "$(ls "$DEVICE_DEPS_DIR"/wheels/*.whl | wc -l) wheels," \
    "$(du -sh "$DEVICE_DEPS_DIR" | cut -f1) in $DEVICE_DEPS_DIR"
}

# Puts the carried wheels on PYTHONPATH when python3 lacks them (the device's
# own packages are never replaced).
device_deps_python() {
  local whl=("$DEVICE_DEPS_DIR"/wheels/*.whl) site=${TMPDIR:-/tmp}/aitk-device-site
  if python3 -c "import diffusers" 2>/dev/null; then
    return 0
  fi
  if [ ! -e "${whl[0]}" ]; then
    echo "device-deps: no wheels in $DEVICE_DEPS_DIR/wheels (run 'bash ci/device-deps.sh fetch')" >&2
    return 1
  fi
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "${whl[@]}" || return 1
  export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
  echo "device-deps: wheels installed into $site"
}

# dpkg -x when there is dpkg; else the .deb's data member through ar and tar.
device_deps_unpack_one() {
  local deb=$1 root=$2
  if command -v dpkg-deb >/dev/null 2>&1; then
    dpkg-deb -x "$deb" "$root"
    return
  fi
  local member
  member=$(ar t "$deb" | grep '^data\.tar') || {
    echo "device-deps: $deb has no data member" >&2
    return 1
  }
  case $member in
    *.xz) ar p "$deb" "$member" | tar -xJ -C "$root" ;;
    *.zst) ar p "$deb" "$member" | zstd -dc | tar -x -C "$root" ;;
    *.gz) ar p "$deb" "$member" | tar -xz -C "$root" ;;
    *) ar p "$deb" "$member" | tar -x -C "$root" ;;
  esac
}

device_deps_env() {
  local root=$DEVICE_DEPS_DIR/root
  local debs=("$DEVICE_DEPS_DIR"/*.deb)
  if [ ! -e "${debs[0]}" ]; then
    echo "device-deps: no packages in $DEVICE_DEPS_DIR (run 'bash ci/device-deps.sh fetch'" \
      "where apt works, and carry .device-deps)" >&2
    return 1
  fi
  if [ ! -f "$root/.complete" ]; then
    rm -rf "$root"
    mkdir -p "$root"
    local deb
    for deb in "${debs[@]}"; do
      device_deps_unpack_one "$deb" "$root"
    done
    touch "$root/.complete"
  fi
  local lib=$root/usr/lib/x86_64-linux-gnu
  export PKG_CONFIG_LIBDIR=$lib/pkgconfig:$lib/openblas-pthread/pkgconfig:$root/usr/share/pkgconfig
  export PKG_CONFIG_SYSROOT_DIR=$root
  export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # Google Benchmark's CMake package, for anything that looks for it that way.
  export CMAKE_PREFIX_PATH=$root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  if ! command -v pkg-config >/dev/null 2>&1; then
    export PKG_CONFIG=$root/usr/bin/pkgconf
    DEVICE_DEPS_CMAKE_ARGS="-DPKG_CONFIG_EXECUTABLE=$PKG_CONFIG"
  else
    DEVICE_DEPS_CMAKE_ARGS=""
  fi
  export DEVICE_DEPS_CMAKE_ARGS
  echo "device-deps: using $root ($(ls "${debs[@]}" | wc -l) packages)"
}

case "${1:-}" in
  fetch) device_deps_fetch ;;
  env) device_deps_env ;;
  python) device_deps_python ;;
  *)
    echo "usage: bash ci/device-deps.sh fetch | . ci/device-deps.sh env | . ci/device-deps.sh python" >&2
    # Sourced with a bad argument: return, do not kill the caller's shell.
    return 2 2>/dev/null || exit 2
    ;;
esac
