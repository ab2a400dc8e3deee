#!/bin/bash
# Device call 5, two H200s: the split runs' tests and scaling with today's defaults (the CPML apart
# in slabs, R = 1 among them), and the Python suite's two-GPU cases.
set -u
export NCCL_NVLS_ENABLE=0
t0=$(date +%s)
bash bench/mgpu.sh build test
echo "build+test $(( $(date +%s) - t0 )) s"
cmake --build --preset default -j "$(nproc)" --target fdstencil_python > $OUT/pybuild.txt 2>&1 || tail -20 $OUT/pybuild.txt
(cd build && OMP_NUM_THREADS=4 PYTHONPATH=python FDSTENCIL_CLI=$PWD/fdstencil FDSTENCIL_TUNING_CACHE=$PWD/no-cache.json timeout 150 python3 -m pytest -v -p no:cacheprovider ../tests/python/test_wave_gpu.py ../tests/python/test_plan_gpu.py > $OUT/pytest-2gpu.txt 2>&1); tail -2 $OUT/pytest-2gpu.txt; grep -E "SKIP|FAIL" $OUT/pytest-2gpu.txt | head
echo "pytest $(( $(date +%s) - t0 )) s"
MGPU_RADII="1 4" timeout 330 bash bench/mgpu.sh scaling
echo "scaling $(( $(date +%s) - t0 )) s"
