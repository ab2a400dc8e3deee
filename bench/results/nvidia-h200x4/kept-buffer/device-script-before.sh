#!/bin/bash
set -u
mkdir -p $OUT/x4d
t0=$(date +%s)
(cmake --preset default > /tmp/cfg.txt 2>&1 && cmake --build --preset default -j 64 --target fdstencil_python > /tmp/build.txt 2>&1) || { grep -B3 -A20 "error" /tmp/build.txt | head -60; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json PYTHONPATH=$PWD/build/python OMP_NUM_THREADS=4
timeout 200 python3 .carry/diag_spread.py 2>&1 | tee $OUT/x4d/diag.txt
echo "done $(( $(date +%s) - t0 )) s"
