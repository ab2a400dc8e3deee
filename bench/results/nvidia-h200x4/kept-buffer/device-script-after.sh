#!/bin/bash
# Four H200s: the kept buffer (tests, then a survey's gradient and RTM over 1 and 4 GPUs), born --survey on GPUs.
set -u
export NCCL_NVLS_ENABLE=0
mkdir -p $OUT/x4e
t0=$(date +%s)
(cmake --preset default > /tmp/cfg.txt 2>&1 && cmake --build --preset default -j 64 --target fdstencil_cli fdstencil_python test_cuda test_cli > /tmp/build.txt 2>&1) || { grep -B3 -A20 "error" /tmp/build.txt | head -60; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json PYTHONPATH=$PWD/build/python FDSTENCIL_CLI=$PWD/build/fdstencil
timeout 120 ./build/tests/test_cuda --gtest_filter='ImagingGpu*:WaveGpu.AStoppedRun*' > $OUT/x4e/test_cuda.txt 2>&1; echo "test_cuda rc=$?"; grep -E "Failure|Expected|Which|^\[  (PASSED|FAILED)|FAILED  \]" $OUT/x4e/test_cuda.txt | head -20
timeout 90 ./build/tests/test_cli --gtest_filter='ImagingSurveyCli.*:ImagingCli.*' > $OUT/x4e/test_cli.txt 2>&1; echo "test_cli rc=$?"; grep -E "Failure|^\[  (PASSED|FAILED)|FAILED  \]|SKIPPED \]" $OUT/x4e/test_cli.txt | head
(cd build && OMP_NUM_THREADS=1 timeout 120 python3 -m pytest -q -p no:cacheprovider -rs ../tests/python/test_imaging.py > $OUT/x4e/pytest-imaging.txt 2>&1); echo "pytest rc=$?"; tail -2 $OUT/x4e/pytest-imaging.txt
echo "tests $(( $(date +%s) - t0 )) s"
OMP_NUM_THREADS=4 timeout 120 python3 .carry/diag_spread.py > $OUT/x4e/diag.txt 2>&1; echo "diag rc=$?"; grep -v malloc $OUT/x4e/diag.txt
OMP_NUM_THREADS=4 timeout 150 python3 bench/python/gradient_over_gpus.py --dim 2 --size 2000 --cpml 20 --radius 4 --steps 2000 --shots 16 --repeats 3 --output $OUT/x4e/2d-2000-r4.json > /dev/null 2>$OUT/x4e/2d.err; echo "2d rc=$? $(( $(date +%s) - t0 )) s"; python3 -c "import json;d=json.load(open('$OUT/x4e/2d-2000-r4.json'));print(d['median_s'], d['gradient_speedup'], d['rtm_speedup'], d['same_bits'], d['copy_gbps'])"
left=$(( 500 - ($(date +%s) - t0) ))
if [ $left -gt 120 ]; then
  OMP_NUM_THREADS=4 timeout $(( left / 2 )) bash bench/imaging_survey_cli.sh /tmp/sv-one 32 auto > $OUT/x4e/survey-one.log 2>&1; echo "cli one rc=$?"; tail -4 $OUT/x4e/survey-one.log
  OMP_NUM_THREADS=4 timeout $(( left / 2 - 5 )) bash bench/imaging_survey_cli.sh /tmp/sv-all 32 auto all > $OUT/x4e/survey-all.log 2>&1; echo "cli all rc=$?"; tail -4 $OUT/x4e/survey-all.log
  for f in rtm/image.npy gradient/gradient.npy; do cmp /tmp/sv-one/$f /tmp/sv-all/$f && echo "$f same bytes"; done
fi
echo "done $(( $(date +%s) - t0 )) s"
