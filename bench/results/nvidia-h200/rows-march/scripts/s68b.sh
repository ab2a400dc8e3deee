#!/bin/bash
# Session 68, call 2 (one H200): march_l1 variants in the one-kernel 2D step (FDSTENCIL_PM modes).
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
R=/tmp/r; mkdir -p $R
(cmake --preset default > $R/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil test_cuda > $R/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A8 "error" $R/build.txt | head -40; cp $R/*.txt $OUT/; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
for pm in 3 4 6 7; do FDSTENCIL_PM=$pm timeout 40 ./build/tests/test_cuda --gtest_filter='WaveGpu.OneKernel*' > $R/test-pm$pm.txt 2>&1; echo "test pm$pm rc=$? $(grep -E '^\[  (PASSED|FAILED)' $R/test-pm$pm.txt)"; done
timeout 300 python3 .carry/pm.py $R/pm-runs.json 2 0,3,4,6,7 > $R/pm-log.txt 2>&1; echo "pm rc=$? $(( $(date +%s) - t0 )) s"
python3 - <<'PY'
import json, statistics as st, collections
d=json.load(open('/tmp/r/pm-runs.json'))
g=collections.defaultdict(list); regs={}
for r in d:
    g[(r["shape"],r["radius"],r["cpml"],r["kernel_params"],r["pm"])].append(r.get("gpts",0))
    k=r.get("kernel","");
    if "side_regs=" in k: regs[(r["radius"],r["pm"])]=k.split("side_regs=")[1][:4]
keys=sorted({k[:4] for k in g})
for k in keys:
    print(k, [round(st.median(g[k+(p,)]),1) if g.get(k+(p,)) else None for p in (0,3,4,6,7)])
print("copy", min(r.get("copy_gbps",0) for r in d), max(r.get("copy_gbps",0) for r in d))
print(sorted(regs.items()))
PY
tar czf $OUT/s68b.tgz -C /tmp r
