#!/bin/bash
# Session 68, call 4 (one H200): the final tree: tests, memcheck, ncu of march_rows, the 2D sweep.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
R=/tmp/r; mkdir -p $R
(cmake --preset default > $R/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil test_cuda > $R/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A8 "error" $R/build.txt | head -40; cp $R/*.txt $OUT/; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
timeout 150 ./build/tests/test_cuda --gtest_filter='WaveGpu.*:GpuModel.*:Imaging*' > $R/test-cuda-wave.txt 2>&1; echo "test_cuda wave rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]|TheRowsMarch" $R/test-cuda-wave.txt | tail -8
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/fdstencil wave --backend cuda --quiet --constant 2000 --spacing 10 --steps 40 --ricker 8 --shape 150,300 --source 300,1500 --radius 4 --receiver-line 500,300:500,2700:40 --kernel-params '{"cpml": "march", "block": "32x1", "vec": 4, "nw": 3, "split": 1, "graph": 8}' --output $R/memcheck-run > $R/memcheck.txt 2>&1; echo "memcheck rows rc=$? $(( $(date +%s) - t0 )) s"; tail -1 $R/memcheck.txt
OUT=$R timeout 150 python3 bench/run.py wave-2d-sizes-layers > $R/wave-2d-sizes-layers.txt 2>&1; echo "sweep rc=$? $(( $(date +%s) - t0 )) s"
python3 - <<'PY'
import json
d=json.load(open('/tmp/r/wave-2d-sizes-layers.json'))
for r in d["records"]:
    print(r.get("cpml"), r["radius"], r["model"][1], round(r.get("gpts",0),1), round(r.get("percent_of_bound",0),1), round(r.get("copy_gbps",0)), r.get("kernel","")[:60])
PY
timeout 60 ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats -k regex:acoustic_step_beside --launch-skip 100 --launch-count 1 ./build/fdstencil wave --backend cuda --quiet --constant 2000 --spacing 10 --steps 300 --ricker 8 --no-final --shape 2000,2000 --source 10000,10000 --radius 4 --cpml 10 --output $R/ncu-o > $R/ncu-rows-r4.txt 2>&1
echo "ncu rc=$? $(( $(date +%s) - t0 )) s"
grep -E "acoustic_step_beside|Duration|Registers Per|Achieved Occupancy|DRAM Throughput|Warp Cycles Per Issued|Eligible Warps|Issued Warp|scoreboard" $R/ncu-rows-r4.txt | head -12
tar czf $OUT/s68d.tgz -C /tmp r
