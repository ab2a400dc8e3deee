#!/bin/bash
# Session 65, call 1: the tuner's probe (TuneWave*, tune --wave at 128^3) and the 2D launch under the CPML beside.
set -u
mkdir -p $OUT/g7
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
(cmake --preset default > $OUT/g7/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil_cli test_cli > $OUT/g7/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A12 "error" $OUT/g7/build.txt | head -60; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json NCCL_NVLS_ENABLE=0
timeout 120 ./build/tests/test_cli --gtest_filter='TuneWave*' > $OUT/g7/test-tunewave.txt 2>&1; echo "TuneWave rc=$?"; grep -E "^\[  (PASSED|FAILED|  SKIPPED) |FAILED  \]" $OUT/g7/test-tunewave.txt | head
C=$OUT/g7/cache.json
timeout 90 ./build/fdstencil tune --wave --shape 128,128,128 --radius 4 --cpml 10 --steps 500 --cache $C --budget 20 --json $OUT/g7/tune-128.json > $OUT/g7/tune-128.txt 2>&1; echo "tune 128^3 rc=$? $(( $(date +%s) - t0 )) s"
grep -ciE "fail" $OUT/g7/tune-128.txt; tail -6 $OUT/g7/tune-128.txt
OUT=$OUT/g7 timeout 300 python3 bench/run.py wave-2d-beside-shapes > $OUT/g7/campaign.txt 2>&1; echo "campaign rc=$? $(( $(date +%s) - t0 )) s"
python3 - <<'P'
import json, os
d = json.load(open(os.environ["OUT"] + "/g7/wave-2d-beside-shapes.json"))
for r in sorted(d["records"], key=lambda r: (r["model"][1], -r.get("gpts", 0)))[:]:
    print(r["model"][1], r["kernel_params"], r.get("gpts"), r.get("percent_of_bound"), r.get("copy_gbps"))
P
echo "total $(( $(date +%s) - t0 )) s"
