#!/usr/bin/env bash
# Everything a lent GPU machine needs for ci/gpu-check.sh, made here before
# the device's clock starts: its minutes are few (15 for a whole session,
# machine start included), and a build or a missing library there costs them.
#
#   bash ci/device-prepare.sh        # from a checkout at the path the build names
#
# 1. ci/device-deps.sh fetch: Debian's libyaml, cJSON, libelf, OpenBLAS,
#    Benchmark and cmocka packages and the diffusers wheel, into .device-deps/
#    (the device has none of them and reaches no registry).
# 2. A Release build with the CUDA plugin for sm_90 (the H100 and H200 the
#    device tool lends) in build/gpu-check, as gpu-check.sh would configure it.
#    MPI is left out: the device has no OpenMPI to run it against.
# 3. That build, without objects and static libraries, packed into
#    .device-prebuilt/gpu-check.tar.gz. gpu-check.sh runs it in place when it
#    starts (CARRIED_BUILD=1), so the tree must be unpacked under this same
#    absolute path there; the device call printed at the end links the path.
#
# Both folders are ignored by git and must travel in the device call's
# `carry`; their sum must stay under its 64 MiB, which is checked here.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=$ROOT/build/gpu-check
PREBUILT=$ROOT/.device-prebuilt
CARRY_LIMIT_MIB=64
cd "$ROOT"

echo "== 1/3 build dependencies for the device (.device-deps)"
bash ci/device-deps.sh fetch

echo "== 2/3 the CUDA build (build/gpu-check, sm_90)"
if [ ! -e /usr/local/cuda/include/cudnn_graph.h ]; then
    echo "device-prepare: /usr/local/cuda has no cuDNN headers; the plugin's cuDNN path would" \
        "not be built (bash ci/install-deps.sh installs them)" >&2
    exit 1
fi
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAITK_WITH_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
# The device must find the plugin: a build without it would measure nothing.
if [ ! -e "$BUILD_DIR/libaitk_cuda.so" ]; then
    echo "device-prepare: the build made no CUDA plugin (libaitk_cuda.so); see its CMake output" >&2
    exit 1
fi

echo "== 3/3 the build, packed (.device-prebuilt/gpu-check.tar.gz)"
mkdir -p "$PREBUILT"
tar czf "$PREBUILT/gpu-check.tar.gz.tmp" --exclude='*.o' --exclude='*.a' \
    -C "$ROOT" build/gpu-check
mv "$PREBUILT/gpu-check.tar.gz.tmp" "$PREBUILT/gpu-check.tar.gz"

carry_kib=$(du -sk .device-deps .device-prebuilt | awk '{s += $1} END {print s}')
echo "carry: .device-deps and .device-prebuilt, $((carry_kib / 1024)) MiB of ${CARRY_LIMIT_MIB}"
if [ "$carry_kib" -gt $((CARRY_LIMIT_MIB * 1024)) ]; then
    echo "device-prepare: more than the device call carries (${CARRY_LIMIT_MIB} MiB)" >&2
    exit 1
fi
cat <<EOF

Ready. The device call (one run, then give_back), from this checkout:
  run(command='R=$ROOT; if [ "\$(pwd -P)" != "\$R" ]; then mkdir -p "\$(dirname "\$R")" && rm -rf "\$R" && ln -sfn "\$PWD" "\$R"; fi; cd "\$R" && tar xzf .device-prebuilt/gpu-check.tar.gz && CARRIED_BUILD=1 TOTAL_LIMIT_S=450 bash ci/gpu-check.sh',
      carry=[".device-deps", ".device-prebuilt"], timeout_s=520)
EOF
