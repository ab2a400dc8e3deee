#!/bin/bash
# progress= from the GPUs' workers: the Python wave and imaging suites on two H200s.
set -u
mkdir -p $OUT/v6
t0=$(date +%s)
(cmake --preset default > $OUT/v6/configure.txt 2>&1 && cmake --build build -j32 --target fdstencil fdstencil_python test_cuda > $OUT/v6/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A12 "error" $OUT/v6/build.txt | head -80; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json NCCL_NVLS_ENABLE=0 OMP_NUM_THREADS=4
timeout 60 ./build/tests/test_cuda --gtest_filter="*TheMarchInPairs*" > $OUT/v6/test_cuda-pairs.txt 2>&1; echo "test_cuda pairs rc=$?"; grep -E "OK \]|FAILED" $OUT/v6/test_cuda-pairs.txt | head -4
export PYTHONPATH=$PWD/build/python FDSTENCIL_CLI=$PWD/build/fdstencil
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python/test_wave_gpu.py tests/python/test_imaging.py tests/python/test_package.py > $OUT/v6/pytest.txt 2>&1; echo "pytest rc=$? $(( $(date +%s) - t0 )) s"
tail -4 $OUT/v6/pytest.txt
grep -E "FAILED|Error" $OUT/v6/pytest.txt | head -10
echo "total $(( $(date +%s) - t0 )) s"
