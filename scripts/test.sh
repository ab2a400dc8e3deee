#!/usr/bin/env bash
# The test command (README quick start, second command; .ci/run calls it): installs missing
# dependencies, builds, runs the whole CTest suite (GPU tests report skipped without a GPU), then
# checks the install (scripts/check-install.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
# CTest runs nproc tests at once: one OpenMP thread each keeps them from oversubscribing the cores
# (a 2-thread cpu wave run beside another busy process measured 3.5x slower than on one thread,
# its threads spinning at every step's barrier).
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} ctest --preset default -j "$(nproc)"
# The install: a CPU build installed into a temporary prefix, and examples/consumer built
# against it through find_package(fdstencil).
bash scripts/check-install.sh
