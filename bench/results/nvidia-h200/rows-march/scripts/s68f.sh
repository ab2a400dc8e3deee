#!/bin/bash
# Session 68, call 6 (one H200): repeats of the default 2D R = 4 launch (medians), 10 and 20 points.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
R=/tmp/r; mkdir -p $R
(cmake --preset default > $R/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil > $R/build.txt 2>&1) || { echo BUILD FAILED; exit 1; }
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
for rep in 1 2 3 4 5; do for c in "1000 10" "2000 10" "2000 20" "4000 10"; do set -- $c
  ./build/fdstencil wave --backend cuda --quiet --constant 2000 --spacing 10 --steps 2000 --ricker 8 --no-final --shape $1,$1 --source $((5*$1)),$((5*$1)) --radius 4 --cpml $2 --output $R/rep-$1-$2-$rep > /dev/null 2>&1
  python3 -c "import json;t=json.load(open('$R/rep-$1-$2-$rep/summary.json'))['timing'];print('$1 $2 $rep', round(t['gpts'],1), round(t['percent_of_bound'],1), round(t['copy_gbps']))"
done; done | tee $R/repeats.txt
rm -rf $R/rep-*; tar czf $OUT/s68f.tgz -C /tmp r
