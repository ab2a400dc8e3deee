#!/bin/bash
# Four H200s: a survey's gradient and RTM over 1 and 4 GPUs (Python and CLI), and wave --survey on 1, 2, 4.
set -u
export NCCL_NVLS_ENABLE=0
mkdir -p $OUT/x4c
t0=$(date +%s)
(cmake --preset default > /tmp/cfg.txt 2>&1 && cmake --build --preset default -j 64 --target fdstencil_cli fdstencil_python > /tmp/build.txt 2>&1) || { grep -B3 -A20 "error" /tmp/build.txt | head -60; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
nvidia-smi -L > $OUT/x4c/gpu.txt
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json PYTHONPATH=$PWD/build/python FDSTENCIL_CLI=$PWD/build/fdstencil
OMP_NUM_THREADS=4 timeout 200 python3 bench/python/gradient_over_gpus.py --dim 2 --size 2000 --cpml 20 --radius 4 --steps 2000 --shots 16 --repeats 3 --output $OUT/x4c/2d-2000-r4.json > $OUT/x4c/2d.log 2>&1; echo "2d rc=$? $(( $(date +%s) - t0 )) s"; tail -6 $OUT/x4c/2d.log
OMP_NUM_THREADS=4 timeout 150 bash bench/imaging_survey_cli.sh /tmp/sv-one 32 auto > $OUT/x4c/survey-one.log 2>&1; echo "cli one rc=$? $(( $(date +%s) - t0 )) s"; tail -4 $OUT/x4c/survey-one.log
OMP_NUM_THREADS=4 timeout 120 bash bench/imaging_survey_cli.sh /tmp/sv-all 32 auto all > $OUT/x4c/survey-all.log 2>&1; echo "cli all rc=$? $(( $(date +%s) - t0 )) s"; tail -4 $OUT/x4c/survey-all.log
for f in image.npy gradient.npy; do a=$(find /tmp/sv-one -name $f | head -1); b=$(find /tmp/sv-all -name $f | head -1); cmp "$a" "$b" && echo "$f same bytes ($a)"; done
cp /tmp/sv-one/*/summary.json $OUT/x4c/ 2>/dev/null; mkdir -p $OUT/x4c/sv-all; for d in /tmp/sv-all/*/; do [ -f $d/summary.json ] && cp $d/summary.json $OUT/x4c/sv-all/$(basename $d)-summary.json; done
MGPU_SHOTS=96 OUT=$OUT/x4c timeout $(( 560 - ($(date +%s) - t0) )) bash bench/mgpu.sh survey > $OUT/x4c/survey-wave.txt 2>&1; echo "wave survey rc=$? $(( $(date +%s) - t0 )) s"; tail -5 $OUT/x4c/survey-wave.txt
