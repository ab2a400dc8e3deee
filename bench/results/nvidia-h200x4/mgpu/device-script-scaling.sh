#!/bin/bash
# Four H200s: the held-bytes count's tests (C++ and the Python Ctrl-C cases, beside a load on GPU 0),
# then the split runs' scaling on 1, 2 and 4 GPUs with today's defaults, R = 1 and 4.
set -u
export NCCL_NVLS_ENABLE=0
mkdir -p $OUT/x4b
t0=$(date +%s)
(cmake --preset default > /tmp/cfg.txt 2>&1 && cmake --build --preset default -j 64 --target fdstencil_cli fdstencil_python test_cuda test_mpi test_mpi_gpu > /tmp/build.txt 2>&1) || { grep -B3 -A20 "error" /tmp/build.txt | head -60; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
timeout 60 ./build/tests/test_cuda --gtest_filter='WaveGpu.AStoppedRun*' > $OUT/x4b/test-held.txt 2>&1; echo "held test rc=$?"; grep -E "Failure|Expected|Which|^\[  (PASSED|FAILED)" $OUT/x4b/test-held.txt | head
# A load on GPU 0 beside the Python Ctrl-C tests: a 3D run allocating and freeing its state over and over.
( for i in $(seq 60); do ./build/fdstencil wave --backend cuda --quiet --constant 2000 --shape 300,300,300 --spacing 10 --cpml 10 --steps 50 --ricker 8 --source 1500,1500,1500 --no-final -o /tmp/load-$i > /dev/null 2>&1; rm -rf /tmp/load-$i; done ) &
load=$!
(cd build && OMP_NUM_THREADS=1 PYTHONPATH=python FDSTENCIL_CLI=$PWD/fdstencil timeout 150 python3 -m pytest -q -p no:cacheprovider -rs ../tests/python/test_imaging.py > $OUT/x4b/pytest-imaging-under-load.txt 2>&1); echo "pytest rc=$? $(( $(date +%s) - t0 )) s"
kill $load 2>/dev/null; wait 2>/dev/null
tail -3 $OUT/x4b/pytest-imaging-under-load.txt
MGPU_RADII="1 4" OUT=$OUT/x4b timeout $(( 575 - ($(date +%s) - t0) )) bash bench/mgpu.sh scaling > $OUT/x4b/scaling-stdout.txt 2>&1; echo "scaling rc=$? $(( $(date +%s) - t0 )) s"
tail -25 $OUT/x4b/scaling-stdout.txt
