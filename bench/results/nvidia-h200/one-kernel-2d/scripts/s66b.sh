#!/bin/bash
# Session 66, call 2 (one H200): programmatic edges in the step's graphs (FDSTENCIL_PDL=2).
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
mkdir -p /tmp/r
(cmake --preset default > /tmp/r/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil test_cuda > /tmp/r/build.txt 2>&1) || { echo BUILD FAILED; tail -30 /tmp/r/build.txt; cp /tmp/r/*.txt $OUT/; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
FDSTENCIL_PDL=2 FDSTENCIL_PDL_DEBUG=1 ./build/fdstencil wave --backend cuda --quiet --constant 2000 --spacing 10 --steps 64 --ricker 8 --no-final --shape 200,200 --source 1000,1000 --radius 4 --output /tmp/r/dbg 2>&1 | head -5
FDSTENCIL_PDL=2 timeout 200 ./build/tests/test_cuda --gtest_filter='WaveGpu.*:GpuModel.*:Imaging*' > /tmp/r/wavegpu-pdl2.txt 2>&1; echo "WaveGpu pdl2 rc=$? $(( $(date +%s) - t0 )) s"
grep -E "PASSED|FAILED" /tmp/r/wavegpu-pdl2.txt | tail -8
timeout 300 python3 .carry/pdl.py /tmp/r/pdl2-runs.json 2 0,2,1 > /tmp/r/pdl2-runs.txt 2>&1; echo "pdl runs rc=$? $(( $(date +%s) - t0 )) s"
cat /tmp/r/pdl2-runs.txt | tail -80
tar czf $OUT/s66b.tgz -C /tmp r
