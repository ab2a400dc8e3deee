#!/bin/bash
# Session 65, call 3: plain_shape_2d (2D vec 4 where every march block is plain): the tests, the
# default campaigns at the new defaults, and the shapes without layers and under the CPML apart.
set -u
mkdir -p $OUT/g9
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader
(cmake --preset default > $OUT/g9/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil_cli test_cuda test_cli > $OUT/g9/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A12 "error" $OUT/g9/build.txt | head -60; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json NCCL_NVLS_ENABLE=0
timeout 200 ./build/tests/test_cuda --gtest_filter='WaveGpu.*:GpuModel.*' > $OUT/g9/test-wavegpu.txt 2>&1; echo "WaveGpu rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|SKIPPED \]" $OUT/g9/test-wavegpu.txt | head -20
timeout 60 ./build/tests/test_cli --gtest_filter='TuneWave*' > $OUT/g9/test-tunewave.txt 2>&1; echo "TuneWave rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $OUT/g9/test-tunewave.txt | head
for c in wave-2d-sizes-layers wave-2d-sizes wave-2d-plain-shapes wave-2d-apart-shapes; do
  OUT=$OUT/g9 timeout 200 python3 bench/run.py $c > $OUT/g9/$c.txt 2>&1; echo "$c rc=$? $(( $(date +%s) - t0 )) s"
done
python3 - <<'P'
import json, os
for name in ["wave-2d-sizes-layers", "wave-2d-sizes", "wave-2d-plain-shapes", "wave-2d-apart-shapes"]:
    try:
        d = json.load(open(os.environ["OUT"] + f"/g9/{name}.json"))
    except Exception as e:
        print(name, "missing", e); continue
    rs = d["records"]
    key = lambda r: (r.get("cpml"), r["radius"], r["model"][1])
    for k in sorted({key(r) for r in rs}, key=str):
        sel = sorted([r for r in rs if key(r) == k], key=lambda r: -r.get("gpts", 0))
        def lab(r):
            p = json.loads(r["kernel_params"]) if "kernel_params" in r else {}
            return (f'v{p["vec"]} n{p["nw"]} ' if p else r["kernel"].split(" R=")[0].replace("acoustic_step ", "") + " ") + f'{r.get("gpts",0):.1f} ({r.get("percent_of_bound",0):.1f}%)'
        print(name, k, " | ".join(lab(r) for r in sel))
P
echo "total $(( $(date +%s) - t0 )) s"
