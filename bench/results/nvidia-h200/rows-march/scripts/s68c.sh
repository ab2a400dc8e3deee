#!/bin/bash
# Session 68, call 3 (one H200): march_rows against the march before it; tests at the new default.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
R=/tmp/r; mkdir -p $R
(cmake --preset default > $R/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil test_cuda test_cli > $R/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A8 "error" $R/build.txt | head -40; cp $R/*.txt $OUT/; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
timeout 240 python3 .carry/rows.py $R/rows-runs.json 2 > $R/rows-log.txt 2>&1; echo "rows rc=$? $(( $(date +%s) - t0 )) s"
python3 - <<'PY'
import json, statistics as st, collections
d=json.load(open('/tmp/r/rows-runs.json'))
g=collections.defaultdict(list); kern={}
for r in d:
    g[(r["shape"],r["radius"],r["cpml"],r["kernel_params"],r["rows"])].append(r.get("gpts",0))
    kern[(r["shape"],r["radius"],r["cpml"],r["kernel_params"],r["rows"])]=r.get("kernel","")[:40]
keys=[]
for r in d:
    k=(r["shape"],r["radius"],r["cpml"],r["kernel_params"])
    if k not in keys: keys.append(k)
for k in keys:
    a=st.median(g[k+(0,)]); b=st.median(g[k+(1,)]) if g.get(k+(1,)) else 0
    print(k, round(a,1), round(b,1), round(b/a,3) if a else None)
print("copy", min(r.get("copy_gbps",0) for r in d), max(r.get("copy_gbps",0) for r in d))
PY
timeout 120 ./build/tests/test_cuda --gtest_filter='WaveGpu.*:GpuModel.*:Imaging*' > $R/test-cuda-wave.txt 2>&1; echo "test_cuda wave rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  \]" $R/test-cuda-wave.txt | tail -6
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/fdstencil wave --backend cuda --quiet --constant 2000 --spacing 10 --steps 40 --ricker 8 --shape 150,230 --source 30,1000 --radius 4 --free-surface --receiver-line 5,0:5,2290:40 --kernel-params '{"side": 1, "graph": 8}' --output $R/memcheck-run > $R/memcheck.txt 2>&1; echo "memcheck beside rc=$? $(( $(date +%s) - t0 )) s"; tail -1 $R/memcheck.txt
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 ./build/fdstencil wave --backend cuda --quiet --constant 2000 --spacing 10 --steps 40 --ricker 8 --shape 150,230 --source 30,1000 --radius 8 --cpml 0 --receiver-line 5,0:5,2290:40 --output $R/memcheck-run2 > $R/memcheck2.txt 2>&1; echo "memcheck rows rc=$? $(( $(date +%s) - t0 )) s"; tail -1 $R/memcheck2.txt
timeout 60 ./build/tests/test_cli --gtest_filter='TuneWave*:WaveCli*' > $R/test-cli-wave.txt 2>&1; echo "test_cli rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED) " $R/test-cli-wave.txt | tail -3
tar czf $OUT/s68c.tgz -C /tmp r
