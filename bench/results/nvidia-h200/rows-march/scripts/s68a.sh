#!/bin/bash
# Session 68, call 1 (one H200): the last session's final tree's tests; u^{n-1}/m prefetch A/B; ncu.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
R=/tmp/r; mkdir -p $R
(cmake --preset default > $R/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil test_cuda test_cli > $R/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A8 "error" $R/build.txt | head -40; cp $R/*.txt $OUT/; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
timeout 150 python3 .carry/pm.py $R/pm-runs.json 2 0,1,2 > $R/pm-log.txt 2>&1; echo "pm rc=$? $(( $(date +%s) - t0 )) s"
python3 - <<'PY'
import json, statistics as st, collections
d=json.load(open('/tmp/r/pm-runs.json'))
g=collections.defaultdict(list)
for r in d: g[(r["shape"],r["radius"],r["cpml"],r["kernel_params"],r["pm"])].append(r.get("gpts",0))
keys=sorted({k[:4] for k in g})
for k in keys:
    print(k, [round(st.median(g[k+(p,)]),1) if g.get(k+(p,)) else None for p in (0,1,2)])
print("copy", min(r.get("copy_gbps",0) for r in d), max(r.get("copy_gbps",0) for r in d))
print([ (r["shape"],r["radius"],r["pm"],r.get("kernel","")[-60:]) for r in d if r["rep"]==0 and r["shape"]==2000 and r["radius"] in (4,8)][:9])
PY
for pm in 0 1; do
  for case in "8 {\"side\":1}" "4 {}"; do
    set -- $case
    FDSTENCIL_PM=$pm timeout 60 ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats -k regex:acoustic_step_beside --launch-skip 100 --launch-count 1 ./build/fdstencil wave --backend cuda --quiet --constant 2000 --spacing 10 --steps 300 --ricker 8 --no-final --shape 2000,2000 --source 10000,10000 --radius $1 --cpml 10 --kernel-params "$2" --output $R/ncu-o-$pm-$1 > $R/ncu-pm$pm-r$1.txt 2>&1
    echo "ncu pm=$pm r=$1 rc=$? $(( $(date +%s) - t0 )) s"
    grep -E "Duration|Registers Per|Achieved Occupancy|DRAM Throughput|Memory Throughput|Stall Long|Warp Cycles Per Issued|Eligible Warps" $R/ncu-pm$pm-r$1.txt | head -12
  done
done
timeout 120 ./build/tests/test_cuda --gtest_filter='WaveGpu.*:GpuModel.*:Imaging*' > $R/test-cuda-wave.txt 2>&1; echo "test_cuda wave rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $R/test-cuda-wave.txt | tail -6
FDSTENCIL_PM=1 timeout 40 ./build/tests/test_cuda --gtest_filter='WaveGpu.OneKernel*:WaveGpu.CpmlBeside*' > $R/test-cuda-pm1.txt 2>&1; echo "test_cuda pm1 rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $R/test-cuda-pm1.txt | tail -4
timeout 90 ./build/tests/test_cli --gtest_filter='TuneWave*:WaveCli*' > $R/test-cli-wave.txt 2>&1; echo "test_cli rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $R/test-cli-wave.txt | tail -6
tar czf $OUT/s68a.tgz -C /tmp r
