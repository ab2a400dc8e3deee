#!/bin/bash
# Session 66, call 1 (one H200): programmatic dependent launches, bits then speed.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
mkdir -p /tmp/r
(cmake --preset default > /tmp/r/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil test_cuda > /tmp/r/build.txt 2>&1) || { echo BUILD FAILED; tail -30 /tmp/r/build.txt; cp /tmp/r/*.txt $OUT/; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
FDSTENCIL_PDL=1 timeout 200 ./build/tests/test_cuda --gtest_filter='WaveGpu.*:GpuModel.*' > /tmp/r/wavegpu-pdl1.txt 2>&1; echo "WaveGpu pdl1 rc=$? $(( $(date +%s) - t0 )) s"
grep -E "PASSED|FAILED" /tmp/r/wavegpu-pdl1.txt | tail -8
timeout 330 python3 .carry/pdl.py /tmp/r/pdl-runs.json 2 > /tmp/r/pdl-runs.txt 2>&1; echo "pdl runs rc=$? $(( $(date +%s) - t0 )) s"
cat /tmp/r/pdl-runs.txt | tail -80
tar czf $OUT/s66a.tgz -C /tmp r
