#!/usr/bin/env bash
# Cross-builds, with mingw-w64, the libraries the Windows build of
# aitk-validate links: libyaml, cJSON, cmocka, Google Benchmark and OpenBLAS.
# Their source comes from Debian's own source packages (apt-get source through
# a private package list made from the machine's configured mirror; the
# machine's apt sources are left untouched), so
# nothing is downloaded from anywhere else and no third-party source lives in
# this repository. libelf is not built: the Windows build reads PE files only.
#
# usage: ci/build-win-deps.sh [PREFIX]     (default: build/win-deps)
# Result: PREFIX/prefix/{include,lib,lib/pkgconfig}. A finished library leaves
# a stamp file, so a second run only rebuilds what is missing. Needs the
# packages of ci/install-deps.sh (mingw-w64, cmake, ninja, dpkg-dev).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
base=$(realpath -m "${1:-$root/build/win-deps}")
prefix=$base/prefix
src=$base/src
apt_dir=$base/apt
host=x86_64-w64-mingw32
jobs=$(nproc 2>/dev/null || echo 2)
toolchain=$root/cmake/mingw-w64-x86_64.cmake
mkdir -p "$prefix" "$src" "$apt_dir/lists/partial" "$apt_dir/sources"

say() { printf 'build-win-deps: %s\n' "$*"; }
die() { printf 'build-win-deps: %s\n' "$*" >&2; exit 1; }

for tool in $host-gcc-posix $host-g++-posix cmake ninja dpkg-source apt-get; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found: run ci/install-deps.sh first"
done

# ---- Debian source packages, through a private deb-src list ----
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || die "cannot tell the Debian release from /etc/os-release (VERSION_CODENAME)"
# The deb-src entries are those of the machine's own configured Debian
# mirror (ci/deb-src-sources.py reads /etc/apt), so the build reaches the
# archive this machine already reaches; no address is written here.
python3 "$root/ci/deb-src-sources.py" "$codename" > "$apt_dir/sources/debian-src.sources" \
  || die "cannot derive a deb-src list from the apt sources in /etc/apt"
apt_opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt_dir/sources"
          -o "Dir::State::Lists=$apt_dir/lists" -o "Debug::NoLocking=1"
          -o "APT::Sandbox::User=root")
apt_updated=0

# fetch PACKAGE: unpacks Debian's source package once; sets FETCHED to its folder
FETCHED=
fetch() {
  local pkg=$1
  FETCHED=$(find "$src" -maxdepth 1 -mindepth 1 -type d -name "$pkg-*" | head -n1)
  [ -n "$FETCHED" ] && return 0
  if [ $apt_updated -eq 0 ]; then
    apt-get "${apt_opts[@]}" -q update >/dev/null || die "apt-get update of the deb-src list failed"
    apt_updated=1
  fi
  (cd "$src" && apt-get "${apt_opts[@]}" -q source "$pkg" >"$base/fetch-$pkg.log" 2>&1) \
    || { tail -n 20 "$base/fetch-$pkg.log" >&2; die "apt-get source $pkg failed"; }
  FETCHED=$(find "$src" -maxdepth 1 -mindepth 1 -type d -name "$pkg-*" | head -n1)
  [ -n "$FETCHED" ] || die "apt-get source $pkg left no $pkg-* folder in $src"
}

# cmake_dep NAME SOURCE-DIR [CMAKE ARGS...]: a static build installed into PREFIX
cmake_dep() {
  local name=$1 dir=$2
  shift 2
  cmake -S "$dir" -B "$base/obj/$name" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS=OFF \
    -DCMAKE_POLICY_DEFAULT_CMP0077=NEW "$@" >"$base/obj-$name.log" 2>&1 \
    || { tail -n 30 "$base/obj-$name.log" >&2; die "configuring $name failed (log: $base/obj-$name.log)"; }
  cmake --build "$base/obj/$name" -j "$jobs" >>"$base/obj-$name.log" 2>&1 \
    && cmake --install "$base/obj/$name" >>"$base/obj-$name.log" 2>&1 \
    || { tail -n 30 "$base/obj-$name.log" >&2; die "building $name failed (log: $base/obj-$name.log)"; }
}

build() {
  local name=$1 t0
  if [ -f "$prefix/.stamp-$name" ]; then
    say "$name: already built"
    return
  fi
  t0=$(date +%s)
  "build_$name"
  touch "$prefix/.stamp-$name"
  say "$name: built in $(( $(date +%s) - t0 )) s"
}

build_libyaml() {
  fetch libyaml
  cmake_dep libyaml "$FETCHED" -DBUILD_TESTING=OFF -DINSTALL_CMAKE_DIR=lib/cmake/yaml
  # libyaml's CMake installs no .pc file; write the one its autotools build would.
  mkdir -p "$prefix/lib/pkgconfig"
  cat > "$prefix/lib/pkgconfig/yaml-0.1.pc" <<EOF
prefix=$prefix
Name: LibYAML
Description: Library to parse and emit YAML (static, mingw-w64)
Version: 0.2.5
Cflags: -I\${prefix}/include -DYAML_DECLARE_STATIC
Libs: -L\${prefix}/lib -lyaml
EOF
}

build_cjson() {
  fetch cjson
  cmake_dep cjson "$FETCHED" -DENABLE_CJSON_TEST=OFF -DENABLE_CJSON_UTILS=OFF \
    -DBUILD_SHARED_AND_STATIC_LIBS=OFF -DENABLE_TARGET_EXPORT=OFF
  # cJSON compiles with -fstack-protector-strong; mingw-w64 keeps its runtime in libssp.
  sed -i 's/^Libs: \(.*\)-lcjson$/Libs: \1-lcjson -lssp/' "$prefix/lib/pkgconfig/libcjson.pc"
}

build_cmocka() {
  fetch cmocka
  cmake_dep cmocka "$FETCHED" -DWITH_STATIC_LIB=ON -DUNIT_TESTING=OFF -DWITH_EXAMPLES=OFF
  # cmocka 1.1 builds its DLL whatever BUILD_SHARED_LIBS says; link the static
  # archive so test programs need no cmocka.dll beside them.
  rm -f "$prefix/lib/libcmocka.dll.a" "$prefix/bin/cmocka.dll"
  sed -i 's/-lcmocka$/-lcmocka-static/' "$prefix/lib/pkgconfig/cmocka.pc"
}

build_benchmark() {
  fetch benchmark
  # Debian's patch takes the version from GIT_VERSION instead of git tags.
  cmake_dep benchmark "$FETCHED" -DGIT_VERSION=1.7.1 -DBENCHMARK_ENABLE_TESTING=OFF \
    -DBENCHMARK_ENABLE_GTEST_TESTS=OFF -DBENCHMARK_ENABLE_WERROR=OFF \
    -DBENCHMARK_INSTALL_DOCS=OFF -DHAVE_STD_REGEX=ON -DHAVE_STEADY_CLOCK=ON
  # A static archive: its header must not declare dllimport, and it calls
  # shlwapi (SHGetValueA) for the CPU description.
  sed -i -e 's/^Cflags: \(.*\)$/Cflags: \1 -DBENCHMARK_STATIC_DEFINE/' \
         -e 's/^Libs: \(.*\)-lbenchmark$/Libs: \1-lbenchmark -lshlwapi/' \
         "$prefix/lib/pkgconfig/benchmark.pc"
}

build_openblas() {
  local dir
  fetch openblas
  dir=$FETCHED
  # One CPU target (Haswell: AVX2, what CI and nearly every training host
  # have), no Fortran, no LAPACK, static, threads from OpenMP like Debian's
  # Linux build; single precision only: the CPU backend calls cblas_sgemm alone.
  # NO_AVX2= and OLDGCC= (empty, which make's ifdef reads as unset): OpenBLAS
  # 0.3.21's c_check takes `$CC -dumpversion` for the GCC version, which for
  # Debian's mingw compiler is "12-posix"; awk compares that as text with
  # "4.6", finds it smaller, and writes NO_AVX2=1 and OLDGCC=1 into
  # Makefile.conf, so every file was built with -DNO_AVX2 and without -mavx2.
  # A variable on make's command line overrides Makefile.conf's.
  # BUILD_SINGLE=1 already keeps the double GEMM kernels out; the d*/z*
  # objects still built are 0.3.21's level-1 kernels (kernel/Makefile.L1 has
  # no BUILD_* conditions) and its small-matrix kernels, which nothing in the
  # static link references, so they never reach the .exe.
  local args=(CC=$host-gcc-posix HOSTCC=gcc AR=$host-ar RANLIB=$host-ranlib
              TARGET=HASWELL DYNAMIC_ARCH=0 BINARY=64 NOFORTRAN=1 NO_LAPACK=1
              NO_LAPACKE=1 NO_SHARED=1 USE_OPENMP=1 NUM_THREADS=64 ONLY_CBLAS=1 BUILD_SINGLE=1
              NO_AVX2= OLDGCC= CROSS=1 OSNAME=WINNT)
  make -C "$dir" -j "$jobs" "${args[@]}" libs >"$base/openblas.log" 2>&1 \
    && make -C "$dir" "${args[@]}" PREFIX="$prefix" install >>"$base/openblas.log" 2>&1 \
    || { tail -n 30 "$base/openblas.log" >&2; die "building OpenBLAS failed (log: $base/openblas.log)"; }
}

for dep in libyaml cjson cmocka benchmark openblas; do
  build "$dep"
done
say "done: $prefix"
