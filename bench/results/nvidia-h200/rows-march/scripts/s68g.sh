#!/bin/bash
# Session 68, call 7 (one H200): the final tree with the review's test additions: WaveGpu.*.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
R=/tmp/r; mkdir -p $R
(cmake --preset default > $R/configure.txt 2>&1 && cmake --build build -j16 --target test_cuda > $R/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A8 "error" $R/build.txt | head -40; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
timeout 150 ./build/tests/test_cuda --gtest_filter='WaveGpu.*:GpuModel.*' > $R/test-cuda-wave.txt 2>&1; echo "test_cuda rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|TheRowsMarch" $R/test-cuda-wave.txt | tail -8
cp $R/test-cuda-wave.txt $OUT/call7-test-cuda-wave.txt
