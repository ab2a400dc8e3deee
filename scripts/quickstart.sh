#!/usr/bin/env bash
# The main job (README quick start, first command): install, build, and run the default
# benchmark suite on the GPU when one is present, otherwise on the CPU. Results also go to
# bench-results.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/fdstencil info
./build/fdstencil bench --json bench-results.json
