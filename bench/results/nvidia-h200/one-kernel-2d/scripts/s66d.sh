#!/bin/bash
# Session 66, call 4 (one H200): the one-kernel step, 1 and 2 layer points a side thread.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
mkdir -p /tmp/r
(cmake --preset default > /tmp/r/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil > /tmp/r/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A8 "error" /tmp/r/build.txt | head -40; cp /tmp/r/*.txt $OUT/; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
./build/fdstencil wave --backend cuda --quiet --constant 2000 --spacing 10 --steps 64 --ricker 8 --no-final --shape 2000,2000 --source 10000,10000 --radius 4 --output /tmp/r/k4 > /dev/null 2>&1; python3 -c "import json;print(json.load(open('/tmp/r/k4/summary.json'))['kernel'])"
true

timeout 320 python3 .carry/beside.py /tmp/r/beside-runs.json 2 P0B0,P1B1S1,P1B1S2,P0B1S1 > /tmp/r/beside-runs.txt 2>&1; echo "runs rc=$? $(( $(date +%s) - t0 )) s"
cat /tmp/r/beside-runs.txt | tail -100
tar czf $OUT/s66d.tgz -C /tmp r
