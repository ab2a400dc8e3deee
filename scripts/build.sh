#!/usr/bin/env bash
# Configures and builds with the default preset (CUDA when nvcc is found). Extra arguments go to
# the configure step, e.g. scripts/build.sh -DFDSTENCIL_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
# nvcc is often installed outside PATH; let CMake's AUTO detection see it.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
cmake --preset default "$@" >/dev/null
cmake --build --preset default -j "$(nproc)"
