#!/bin/bash
# Session 66, call 6 (one H200): the final tree: tests, memcheck of the one-kernel step, the size sweeps.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
R=/tmp/r; mkdir -p $R
(cmake --preset default > $R/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil test_cuda test_cli > $R/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A8 "error" $R/build.txt | head -40; cp $R/*.txt $OUT/; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
timeout 100 ./build/tests/test_cuda --gtest_filter='WaveGpu.*:GpuModel.*:Imaging*' > $R/test-cuda-wave.txt 2>&1; echo "test_cuda wave rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $R/test-cuda-wave.txt | tail -6
timeout 90 ./build/tests/test_cli --gtest_filter='TuneWave*:WaveCli*' > $R/test-cli-wave.txt 2>&1; echo "test_cli rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $R/test-cli-wave.txt | tail -6
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/fdstencil wave --backend cuda --quiet --constant 2000 --spacing 10 --steps 40 --ricker 8 --shape 150,230 --source 30,1000 --radius 4 --free-surface --receiver-line 5,0:5,2290:40 --kernel-params '{"side": 1, "graph": 8}' --output $R/memcheck-run > $R/memcheck.txt 2>&1; echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $R/memcheck.txt
for c in wave-2d-sizes-layers wave-3d-layers; do
  OUT=$R timeout 150 python3 bench/run.py $c > $R/$c.txt 2>&1; echo "$c rc=$? $(( $(date +%s) - t0 )) s"
done
python3 - <<'PY'
import json
for f in ["wave-2d-sizes-layers","wave-3d-layers"]:
    d=json.load(open(f'/tmp/r/{f}.json'))
    for r in d["records"]:
        print(f, r.get("cpml"), r["radius"], r["model"][1], round(r.get("gpts",0),1), round(r.get("percent_of_bound",0),1), round(r.get("copy_gbps",0)), r.get("kernel","")[:90])
PY
tar czf $OUT/s66f.tgz -C /tmp r
