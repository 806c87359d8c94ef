#!/usr/bin/env bash
# Installs every build and test dependency of aitk-validate from Debian 12
# packages. Idempotent: packages already present are left alone. Run as root
# (it re-runs itself through sudo when it can). Prints what it installs and
# fails loudly, naming the package, when one cannot be had.
#
# The CUDA toolkit (/usr/local/cuda) is not a Debian package: the GPU plugin
# is built when it is present and skipped when it is not (see docs/gpu.md;
# .ci/run sets AITK_REQUIRE_CUDA=1 so that CI fails instead). Where it is
# present without cuobjdump, ci/install-cuobjdump.sh adds it.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    exec sudo -E bash "$0" "$@"
  fi
  echo "install-deps: must run as root (no sudo found)" >&2
  exit 1
fi

# One package a line, with the reason; keep sorted by purpose.
packages=(
  # build
  build-essential   # gcc, g++, make, libc headers
  cmake             # >= 3.25 for workflow presets (bookworm has 3.25.1)
  ninja-build       # the presets' generator
  pkg-config        # finds the libraries below
  git               # the report records the commit
  # chosen libraries
  libyaml-dev       # data files and ai-toolkit configs
  libcjson-dev      # the JSON report model
  libelf-dev        # ELF reader of the dependency doctor
  libopenblas-dev   # CPU GEMM of the reference workloads
  libbenchmark-dev  # Google Benchmark, behind the C shim
  libcmocka-dev     # test assertions
  libopenmpi-dev    # MPI headers and library: builds `aitk-validate --mpi` (optional: without it, --mpi is refused)
  openmpi-bin       # mpirun: the --mpi tests launch 3 ranks on localhost
  # tests
  gcc-mingw-w64-x86-64  # cross-builds the Windows DLL fixtures of the dependency doctor
  gcc-mingw-w64-i686    # the 32-bit DLL fixture (a wrong-architecture candidate)
  g++-mingw-w64-x86-64-posix  # the Windows build (C++ for the Benchmark shim; posix threads for OpenMP)
  wine64                # runs the Windows build's tests (ci/build-win-deps.sh, preset windows)
  dpkg-dev              # dpkg-source: unpacks the Debian source packages the Windows build cross-compiles
  clang                 # libFuzzer targets (the readers' fuzz tests)
  libclang-rt-14-dev    # libFuzzer and sanitizer runtimes for clang
  python3             # test drivers
  python3-pip         # fetches pinned headers and wheels from PyPI at test time (ABI, real-world tests)
  python3-jsonschema  # validates every report the tests produce
  libxml2-utils       # xmllint: the JUnit output against its schema
  chromium            # headless browser: the HTML report really renders
  cmark-gfm           # GitHub's Markdown renderer: the Markdown report reads as written (reports.markdown.gfm)
  file                # CPack's .deb generator finds the ELF files for dpkg-shlibdeps with it
  man-db              # man -l: the package test renders the generated man page (groff with it)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# cuobjdump for plugin.architectures, when a CUDA toolkit without it is
# there (after the packages: it is fetched with python3-pip).
install_cuobjdump() {
  bash "$(dirname "$0")/install-cuobjdump.sh"
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  install_cuobjdump
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# An update first: on a fresh machine the package lists are empty.
apt-get update -q || { echo "install-deps: apt-get update failed" >&2; exit 1; }
for p in "${missing[@]}"; do
  if ! apt-cache show "$p" >/dev/null 2>&1; then
    echo "install-deps: package '$p' is not available from the configured Debian sources" >&2
    exit 1
  fi
done
apt-get install -y -q --no-install-recommends "${missing[@]}" || {
  echo "install-deps: apt-get install failed for: ${missing[*]}" >&2
  exit 1
}
install_cuobjdump
echo "install-deps: done"
