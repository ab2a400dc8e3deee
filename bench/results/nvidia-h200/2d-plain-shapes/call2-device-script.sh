#!/bin/bash
# Session 65, call 2: the 2D launch under the CPML beside at R = 1, 2, 4, 8 and 1000^2-4000^2.
set -u
mkdir -p $OUT/g8
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader
if [ ! -x build/fdstencil ]; then
(cmake --preset default > $OUT/g8/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil_cli > $OUT/g8/build.txt 2>&1) || { echo BUILD FAILED; exit 1; }
fi
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json NCCL_NVLS_ENABLE=0
OUT=$OUT/g8 timeout 400 python3 bench/run.py wave-2d-beside-shapes-radius > $OUT/g8/campaign.txt 2>&1; echo "campaign rc=$? $(( $(date +%s) - t0 )) s"
python3 - <<'P'
import json, os
d = json.load(open(os.environ["OUT"] + "/g8/wave-2d-beside-shapes-radius.json"))
rs = d["records"]
for key in sorted({(r["radius"], r["model"][1]) for r in rs}):
    sel = sorted([r for r in rs if (r["radius"], r["model"][1]) == key], key=lambda r: -r.get("gpts", 0))
    print(key, " | ".join(f'{json.loads(r["kernel_params"])["block"]} v{json.loads(r["kernel_params"])["vec"]} n{json.loads(r["kernel_params"])["nw"]} {r.get("gpts",0):.1f}' for r in sel))
P
echo "total $(( $(date +%s) - t0 )) s"
