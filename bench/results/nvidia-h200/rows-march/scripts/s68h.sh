#!/bin/bash
# Session 68, call 8 (one H200): fdstencil tune --wave over the 2D candidates (side ones among
# them), then a wave run that takes the stored launch.
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
R=/tmp/r; mkdir -p $R
(cmake --preset default > $R/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil > $R/build.txt 2>&1) || { echo BUILD FAILED; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$R/cache/tuning.json
timeout 90 ./build/fdstencil tune --wave --shape 2000,2000 --radius 4 --json $R/tune-wave-2000-r4.json > $R/tune-wave.txt 2>&1; echo "tune rc=$? $(( $(date +%s) - t0 )) s"
tail -25 $R/tune-wave.txt
./build/fdstencil tune --show >> $R/tune-wave.txt 2>&1
timeout 30 ./build/fdstencil wave --backend cuda --quiet --constant 2000 --spacing 10 --steps 2000 --ricker 8 --no-final --shape 2000,2000 --source 10000,10000 --radius 4 --output $R/run-tuned > $R/run-tuned.txt 2>&1; echo "run rc=$?"
python3 -c "import json;s=json.load(open('$R/run-tuned/summary.json'));t=s['timing'];print(s['kernel'][:160]);print(round(t['gpts'],1), round(t['percent_of_bound'],1), round(t['copy_gbps']))"
cp $R/tune-wave.txt $R/tune-wave-2000-r4.json $OUT/ ; cp $R/run-tuned/summary.json $OUT/run-tuned-summary.json
