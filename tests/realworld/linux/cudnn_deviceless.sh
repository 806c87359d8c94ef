#!/usr/bin/env bash
# The plugin's cuDNN attention graphs (cuda.cudnn_deviceless) planned by the
# cuDNN a plain `pip install torch` brings today, not only by the toolkit's:
# the nvidia-cudnn-cu13 wheel of the torch215 layout (9.26.0.51, pinned in
# requirements-torch215.txt), or of torch215-cudnn-newest (the newest on
# PyPI, requirements-cudnn-newest.txt), which realworld.linux.<layout>
# installs into the cache. cuDNN 9.22 changed the reshape operation the
# composite backward relies on, and 9.28 refuses a device description
# without memoryBusWidth: each new cuDNN is worth planning against.
#
#   cudnn_deviceless.sh TEST_EXE STUB_DIR [LAYOUT]   (LAYOUT: torch215)
#
# Exit 77 (skipped) when the layout is not in the cache.
set -euo pipefail
exe=$1 stub=$2 layout=${3:-torch215}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/aitk-validate/realworld/linux/$layout
nvidia=""
for d in "$cache"/lib/python3.*/site-packages/nvidia; do
    [ -e "$d/cudnn/lib/libcudnn.so.9" ] && nvidia=$d
done
if [ -z "$nvidia" ]; then
    echo "skipped: no $layout layout with cuDNN in $cache (realworld.linux.$layout installs it)"
    exit 77
fi
# The wheel's version, from its own header: the library must be that one.
header=$nvidia/cudnn/include/cudnn_version.h
version=$(awk '/#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) /{v[$2]=$3}
               END{print v["CUDNN_MAJOR"]*10000 + v["CUDNN_MINOR"]*100 + v["CUDNN_PATCHLEVEL"]}' \
          "$header")
echo "cuDNN of the $layout layout: $version ($nvidia/cudnn/lib)"
export AITK_CUDNN_VERSION_AT_LEAST=$version
export LD_LIBRARY_PATH=$stub:$nvidia/cudnn/lib:$nvidia/cu13/lib
exec "$exe"
