#!/bin/bash
# Device call 3: after the review: the record rule, the stop tests, the Python results and streams.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT; mkdir -p $R
t0=$(date +%s)
(cmake --preset default > $R/cmake.txt 2>&1 && cmake --build build -j16 --target fdstencil test_cuda fdstencil_python > $R/build.txt 2>&1) || { tail -50 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
./build/tests/test_cuda --gtest_filter='*ImagingGpu*:WaveGpu.*:GpuModel.*' > $R/test_cuda.txt 2>&1; grep -E "PASSED|FAILED|Failure" $R/test_cuda.txt | head
echo "tests $(( $(date +%s) - t0 )) s"
(cd build && OMP_NUM_THREADS=4 PYTHONPATH=python FDSTENCIL_CLI=$PWD/fdstencil python3 -m pytest -v -p no:cacheprovider ../tests/python > $R/pytest.txt 2>&1); tail -2 $R/pytest.txt
grep -E "ctrl_c|stream|models_kind|FAIL" $R/pytest.txt
echo "pytest $(( $(date +%s) - t0 )) s"
