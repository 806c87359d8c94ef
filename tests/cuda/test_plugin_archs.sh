#!/usr/bin/env bash
# The CUDA plugin carries machine code for every GPU generation it is meant
# for: SASS (cubins) for sm_80, sm_86, sm_89, sm_90, sm_100 and sm_120, and
# PTX for sm_100 and sm_120 so later GPUs can JIT it (kernels/cuda/
# CMakeLists.txt; CMake's CUDA_ARCHITECTURES: "-real" is SASS only, a bare
# number SASS and PTX, cmake.org/cmake/help/latest/prop_tgt/CUDA_ARCHITECTURES.html).
# The list below is written here, not read from the build: a change to the
# build's list has to change this test too. Every .cu file embeds its own
# fat binary, so each architecture must appear as often as every other.
# cuobjdump --list-elf / --list-ptx name the embedded files "<lib>.<n>.sm_<arch>.cubin"
# (CUDA Binary Utilities, docs.nvidia.com/cuda/cuda-binary-utilities, section cuobjdump).
#
#   test_plugin_archs.sh CUOBJDUMP PLUGIN BUILD_ARCHS  (the target's CUDA_ARCHITECTURES,
#                                                   space-separated)
# Exit 77 (skipped) when the build was configured for other architectures
# on purpose (CMAKE_CUDA_ARCHITECTURES given: ci/gpu-check.sh, the asan
# preset), or when cuobjdump is missing -- except under CI=true or
# AITK_REQUIRE_CUDA=1, where a missing cuobjdump fails (ci/install-deps.sh
# installs it).
set -euo pipefail
CUOBJDUMP=$1 PLUGIN=$2 BUILD_ARCHS=$3
RELEASE_ARCHS="80-real 86-real 89-real 90-real 100 120"
SASS="80 86 89 90 100 120"
PTX="100 120"

if [ "$BUILD_ARCHS" != "$RELEASE_ARCHS" ]; then
    echo "skipped: this build targets CMAKE_CUDA_ARCHITECTURES=$BUILD_ARCHS, not the release set" \
         "$RELEASE_ARCHS (the release preset checks that)"
    exit 77
fi
if [ -z "$CUOBJDUMP" ] || [ ! -x "$CUOBJDUMP" ]; then
    echo "cuobjdump not found (looked in the toolkit's bin and on PATH; AITK_CUOBJDUMP names it):" \
         "the plugin's architectures cannot be listed"
    if [ "${CI:-}" = true ] || [ "${AITK_REQUIRE_CUDA:-}" = 1 ]; then
        echo "FAIL: required under CI (ci/install-deps.sh installs it into /usr/local/cuda/bin)"
        exit 1
    fi
    exit 77
fi

elf=$("$CUOBJDUMP" --list-elf "$PLUGIN")
ptx=$("$CUOBJDUMP" --list-ptx "$PLUGIN")
count() { # count KIND LISTING ARCH: files of sm_ARCH in the listing
    printf '%s\n' "$2" | grep -c "\.sm_$3\.$1\$" || true
}
failures=0
first=""
for a in $SASS; do
    n=$(count cubin "$elf" "$a")
    echo "sm_$a: $n cubins"
    if [ "$n" -eq 0 ]; then
        echo "FAIL: no cubin for sm_$a"
        failures=$((failures + 1))
    fi
    first=${first:-$n}
    if [ "$n" -ne "$first" ]; then
        echo "FAIL: sm_$a has $n cubins, sm_80 has $first: a .cu file lacks an architecture"
        failures=$((failures + 1))
    fi
done
for a in $PTX; do
    n=$(count ptx "$ptx" "$a")
    echo "sm_$a: $n PTX files"
    if [ "$n" -ne "$first" ]; then
        echo "FAIL: sm_$a has $n PTX files, expected $first (one per .cu file)"
        failures=$((failures + 1))
    fi
done
others=$(printf '%s\n%s\n' "$elf" "$ptx" | grep -Ev "\.sm_(80|86|89|90|100|120)\.(cubin|ptx)\$" \
         | grep -E "\.(cubin|ptx)\$" || true)
if [ -n "$others" ]; then
    echo "FAIL: files for architectures outside the list:"
    echo "$others"
    failures=$((failures + 1))
fi
[ "$failures" -eq 0 ]
