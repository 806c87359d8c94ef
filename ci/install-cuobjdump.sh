#!/usr/bin/env bash
# Installs cuobjdump beside nvcc when the CUDA toolkit lacks it, for the
# test plugin.architectures (it lists the cubins in the built plugin). A
# toolkit assembled from NVIDIA's pip wheels, as on this project's CI
# machine, has no cuobjdump: it is a wheel of its own, nvidia-cuda-cuobjdump
# (pypi.org/project/nvidia-cuda-cuobjdump). Nothing to do without a toolkit
# or when cuobjdump is there. Called by ci/install-deps.sh.
#
# Environment: CUDA_BIN (default /usr/local/cuda/bin).
set -euo pipefail
CUDA_BIN=${CUDA_BIN:-/usr/local/cuda/bin}
# The oldest release on PyPI (13.2.51; none for 13.0 or 13.1); a newer
# cuobjdump reads older fat binaries: it lists CUDA 13.0's here.
VERSION=13.2.51

if [ ! -x "$CUDA_BIN/nvcc" ]; then
    echo "install-cuobjdump: no nvcc in $CUDA_BIN: no CUDA toolkit, nothing to do"
    exit 0
fi
if [ -x "$CUDA_BIN/cuobjdump" ]; then
    echo "install-cuobjdump: $CUDA_BIN/cuobjdump is there"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" \
    "nvidia-cuda-cuobjdump==$VERSION" || {
    echo "install-cuobjdump: pip could not fetch nvidia-cuda-cuobjdump==$VERSION" >&2
    exit 1
}
python3 -m zipfile -e "$tmp"/nvidia_cuda_cuobjdump-*.whl "$tmp/wheel"
install -m 0755 "$tmp/wheel/nvidia/cu13/bin/cuobjdump" "$CUDA_BIN/cuobjdump"
echo "install-cuobjdump: $("$CUDA_BIN/cuobjdump" --version | tail -1) into $CUDA_BIN"
