# aitk-validate in a container, on NVIDIA's CUDA images. Two stages: the
# build stage compiles the validator and the CUDA plugin and packs them
# into the project's .deb; the runtime stage installs only that .deb (apt
# resolves the libraries its Depends names) on the CUDA runtime image.
#
#   docker build -t aitk-validate .
#   docker run --rm --gpus all aitk-validate --full      (or: docker compose run --rm aitk-validate --full)
#
# Needs, on the host, the NVIDIA driver and the NVIDIA Container Toolkit;
# without GPU access the report's gpu.container check says how to fix it.
#
# Tags: NVIDIA's list of supported tags for nvidia/cuda,
# https://gitlab.com/nvidia/container-images/cuda/blob/master/doc/supported-tags.md
# (also https://hub.docker.com/r/nvidia/cuda/tags). 12.8 is the first CUDA
# whose nvcc targets Blackwell (sm_100, sm_120), which kernels/cuda builds
# for; the cudnn images carry cuDNN 9, whose headers the plugin is compiled
# against and whose library it opens at run time for attention. NVIDIA
# publishes no Debian-based CUDA image: Ubuntu 24.04 is the nearest.
ARG CUDA_VERSION=12.8.1
ARG CUDA_OS=ubuntu24.04

FROM nvidia/cuda:${CUDA_VERSION}-cudnn-devel-${CUDA_OS} AS build
ARG DEBIAN_FRONTEND=noninteractive
# The build's libraries and tools (ci/install-deps.sh lists why each is
# needed); no test dependencies, as the tests are not built here.
RUN apt-get update && apt-get install -y --no-install-recommends \
      cmake ninja-build pkg-config gcc g++ file dpkg-dev \
      libyaml-dev libcjson-dev libelf-dev libopenblas-dev libbenchmark-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt CMakePresets.json README.md ./
COPY cmake cmake
COPY common common
COPY reports reports
COPY kernels kernels
COPY models models
COPY bench bench
COPY validate validate
COPY docs docs
# AITK_WERROR off: the project's warnings are kept clean against Debian 12's
# GCC 12; Ubuntu's GCC 13 may warn about other things, which must not stop
# a user's image build. BUILD_TESTING off: the tests run in CI, not here.
RUN cmake --preset release -DAITK_WERROR=OFF -DBUILD_TESTING=OFF -DAITK_WITH_CUDA=ON \
    && cmake --build build/release \
    && cpack --config build/release/CPackConfig.cmake -G DEB -B /packages \
    && rm -rf /packages/_CPack_Packages

FROM nvidia/cuda:${CUDA_VERSION}-cudnn-runtime-${CUDA_OS} AS runtime
ARG DEBIAN_FRONTEND=noninteractive
COPY --from=build /packages/ /tmp/packages/
# The .deb's Depends come from dpkg-shlibdeps in the build stage, so they
# name this Ubuntu's packages; libopenblas0 is its Recommends (the CPU
# backend dlopens it).
RUN apt-get update \
    && apt-get install -y --no-install-recommends /tmp/packages/aitk-validate_*.deb libopenblas0 \
    && rm -rf /var/lib/apt/lists/* /tmp/packages
WORKDIR /reports
ENTRYPOINT ["aitk-validate"]
CMD ["--standard"]
