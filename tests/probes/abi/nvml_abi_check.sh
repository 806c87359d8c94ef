#!/usr/bin/env bash
# The NVML probe's declarations against NVIDIA's real nvml.h, for every
# header pinned below: builds test_nvml_abi against each and runs it, and
# compiles the stub NVML (all its variants) against each, so the stub's
# definitions are held to NVIDIA's prototypes too.
#
# NVIDIA ships nvml.h in the nvidia-nvml-dev wheels on PyPI. They are fetched
# at test time into a cache outside the build tree (never committed) and
# checked against the sha256 pinned here. When PyPI cannot be reached the test
# is skipped (exit 77) and says why; a wheel whose hash differs fails it.
#
# usage: nvml_abi_check.sh CC SOURCE_DIR WORK_DIR
set -uo pipefail
cc=$1 src=$2 work=$3
cache=${AITK_HEADER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aitk-validate/nvml-headers}
here="$src/tests/probes/abi"

# package version sha256-of-the-manylinux-wheel path-of-nvml.h-inside-it
pins=(
  "nvidia-nvml-dev 13.5.37 7394fcbefa9ba537e8238cbb1caa4cd2db6bbfbff208d217a8a884947113ae6d nvidia/cu13/include/nvml.h"
  "nvidia-nvml-dev 13.4.92 90b65cebefd02a1e695675177c9d7886f48322906ce5c03398e8cb27cc5ad2d6 nvidia/cu13/include/nvml.h"
  "nvidia-nvml-dev-cu12 12.9.79 8bb367913c62cb65be9ae386c58dbf573f1f9e2f01cae54abb87bf5f63c6069e nvidia/nvml_dev/include/nvml.h"
  "nvidia-nvml-dev-cu11 11.8.86 f5ad92d9563145137a26ca1b75cda26159125555109ccc303144a0b05b8531e6 nvidia/nvml_dev/include/nvml.h"
)

mkdir -p "$cache" "$work" || { echo "nvml_abi: cannot create $cache or $work" >&2; exit 1; }

# Fetches one pinned wheel into the cache (once); prints its path.
fetch() {
  local pkg=$1 ver=$2 sha=$3 wheel="$cache/$1-$2.whl"
  if [ ! -f "$wheel" ]; then
    local tmp
    tmp=$(mktemp -d "$cache/download.XXXXXX") || return 2
    local req="$tmp/requirements.txt"
    echo "$pkg==$ver --hash=sha256:$sha" > "$req"
    if ! python3 -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
         --platform manylinux2014_x86_64 --python-version 3.11 --retries 1 --timeout 20 \
         -r "$req" -d "$tmp" > "$tmp/pip.log" 2>&1; then
      if grep -q "DO NOT MATCH THE HASHES" "$tmp/pip.log"; then
        echo "nvml_abi: $pkg $ver from PyPI does not have the pinned sha256 $sha" >&2
        cat "$tmp/pip.log" >&2
        rm -rf "$tmp"
        return 1
      fi
      echo "nvml_abi: SKIP: $pkg==$ver could not be fetched from PyPI:" >&2
      tail -n 3 "$tmp/pip.log" >&2
      rm -rf "$tmp"
      return 77
    fi
    mv "$tmp"/*.whl "$wheel" && rm -rf "$tmp" || return 2
  fi
  if [ "$(sha256sum "$wheel" | cut -d' ' -f1)" != "$sha" ]; then
    echo "nvml_abi: cached $wheel does not have the pinned sha256 $sha" >&2
    return 1
  fi
  echo "$wheel"
}

cflags=$(pkg-config --cflags cmocka) libs=$(pkg-config --libs cmocka)
failed=0 passed=0
for pin in "${pins[@]}"; do
  read -r pkg ver sha inner <<< "$pin"
  wheel=$(fetch "$pkg" "$ver" "$sha"); rc=$?
  [ $rc -eq 0 ] || exit $rc
  inc="$work/$pkg-$ver"
  mkdir -p "$inc"
  python3 - "$wheel" "$inner" "$inc/nvml.h" <<'PY' || { echo "nvml_abi: $inner is not in $wheel" >&2; exit 1; }
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[3], "wb") as out:
    out.write(z.read(sys.argv[2]))
PY
  echo "== nvml.h of $pkg $ver"
  if ! "$cc" -std=c17 -Wall -Wextra -Werror -I"$src" -I"$here" -I"$inc" $cflags \
       "$here/test_nvml_abi.c" "$here/nvml_layout.c" "$here/nvml_functions.c" "$here/abi_table.c" \
       $libs -o "$inc/test_nvml_abi"; then
    echo "nvml_abi: FAILED to build against $pkg $ver (see the compiler's words above)"
    failed=$((failed + 1)); continue
  fi
  if "$inc/test_nvml_abi"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  for variant in "" STUB_WITHOUT_MEMINFO STUB_OLD_DRIVER STUB_NO_V3_PROCESSES STUB_REQUIRED_ONLY; do
    if "$cc" -std=c17 -Wall -Wextra -Werror -Wno-unused-parameter -fsyntax-only \
         -DSTUB_WITH_NVML_H ${variant:+-D$variant} -I"$inc" "$src/tests/probes/stub_nvml.c"; then
      passed=$((passed + 1))
    else
      echo "nvml_abi: the stub NVML${variant:+ ($variant)} does not match $pkg $ver's prototypes"
      failed=$((failed + 1))
    fi
  done
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
