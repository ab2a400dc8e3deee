#!/usr/bin/env bash
# The test command (README quick start, second command; .ci/run calls it): installs missing
# dependencies, builds, and runs the whole CTest suite. GPU tests report skipped without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --preset default -j "$(nproc)"
