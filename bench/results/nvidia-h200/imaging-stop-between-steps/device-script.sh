#!/bin/bash
# Device call 2: Ctrl-C / stop between steps in the linearised solvers on the GPU.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT; mkdir -p $R
t0=$(date +%s)
(cmake --preset default > $R/cmake.txt 2>&1 && cmake --build build -j16 --target fdstencil test_cuda test_wave fdstencil_python > $R/build.txt 2>&1) || { tail -50 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
./build/tests/test_cuda --gtest_filter='ImagingGpu.*:GpuModel.*' > $R/test_cuda.txt 2>&1; tail -3 $R/test_cuda.txt
OMP_NUM_THREADS=4 ./build/tests/test_wave --gtest_filter='Linearised.*:Gradient.*:Rtm.*' > $R/test_wave.txt 2>&1; tail -3 $R/test_wave.txt
echo "tests $(( $(date +%s) - t0 )) s"
(cd build && OMP_NUM_THREADS=4 PYTHONPATH=python FDSTENCIL_CLI=$PWD/fdstencil python3 -m pytest -v -p no:cacheprovider ../tests/python/test_imaging.py ../tests/python/test_wave_gpu.py > $R/pytest.txt 2>&1); tail -3 $R/pytest.txt
grep -E "ctrl_c|stream" $R/pytest.txt
echo "pytest $(( $(date +%s) - t0 )) s"
