#!/bin/bash
# Session 65, call 8 (two H200s): the split runs' GPU tests on the new 2D launch (vec 4).
set -u
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' '; echo
(cmake --preset default > $OUT/configure.txt 2>&1 && cmake --build build -j32 --target test_mpi_gpu > $OUT/build.txt 2>&1) || { echo BUILD FAILED; tail -30 $OUT/build.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
timeout 120 mpirun -np 2 --oversubscribe ./build/tests/test_mpi_gpu --gtest_filter='WaveSlabsGpu.*' > $OUT/test-mpi-gpu.txt 2>&1; echo "test_mpi_gpu rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED  \]" $OUT/test-mpi-gpu.txt | sort | uniq -c | head -30
