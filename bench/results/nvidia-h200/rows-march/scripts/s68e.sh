#!/bin/bash
# Session 68, call 5 (one H200): the campaign wave-2d-rows-shapes.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
R=/tmp/r; mkdir -p $R
(cmake --preset default > $R/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil > $R/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A8 "error" $R/build.txt | head -40; cp $R/*.txt $OUT/; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
OUT=$R timeout 200 python3 bench/run.py wave-2d-rows-shapes > $R/wave-2d-rows-shapes.txt 2>&1; echo "campaign rc=$? $(( $(date +%s) - t0 )) s"
python3 - <<'PY'
import json
d=json.load(open('/tmp/r/wave-2d-rows-shapes.json'))
for r in d["records"]:
    print(r["model"][1], r["kernel_params"], round(r.get("gpts",0),1), round(r.get("percent_of_bound",0),1), round(r.get("copy_gbps",0)))
PY
tar czf $OUT/s68e.tgz -C /tmp r
