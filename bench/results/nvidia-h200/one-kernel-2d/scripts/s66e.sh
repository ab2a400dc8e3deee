#!/bin/bash
# Session 66, call 5 (one H200): the side parameter, its tests, and the campaign wave-2d-side.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
R=/tmp/r; mkdir -p $R
(cmake --preset default > $R/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil test_cuda > $R/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A8 "error" $R/build.txt | head -40; cp $R/*.txt $OUT/; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
./build/fdstencil wave --backend cuda --quiet --constant 2000 --spacing 10 --steps 64 --ricker 8 --no-final --shape 2000,2000 --source 10000,10000 --radius 4 --output $R/k4 > /dev/null 2>&1; python3 -c "import json;print(json.load(open('$R/k4/summary.json'))['kernel'])"
timeout 150 ./build/tests/test_cuda --gtest_filter='WaveGpu.*:GpuModel.*:Imaging*' > $R/test-cuda-wave.txt 2>&1; echo "WaveGpu rc=$? $(( $(date +%s) - t0 )) s"
grep -E "PASSED|FAILED|SKIPPED \]" $R/test-cuda-wave.txt | tail -8
OUT=$R timeout 330 python3 bench/run.py wave-2d-side > $R/wave-2d-side.txt 2>&1; echo "campaign rc=$? $(( $(date +%s) - t0 )) s"
tail -3 $R/wave-2d-side.txt
python3 - <<'PY'
import json
d=json.load(open('/tmp/r/wave-2d-side.json'))
rows={}
for r in d["records"]:
    key=(r["cpml"], r["radius"], r["model"][1].split(",")[0])
    rows.setdefault(key,[]).append(round(r.get("gpts",0),1))
for k,v in rows.items(): print(k, v)
PY
tar czf $OUT/s66e.tgz -C /tmp r
