#!/bin/bash
# The README's test command on four H200s (install-deps without a network, build, CTest, check-install).
set -u
mkdir -p $OUT/x4a
nvidia-smi -L | tee $OUT/x4a/gpu.txt; nvidia-smi topo -m 2>&1 | head -6 >> $OUT/x4a/gpu.txt
t0=$(date +%s)
export NCCL_NVLS_ENABLE=0
OMP_NUM_THREADS=4 timeout 565 bash scripts/test.sh > $OUT/x4a/readme-test-4gpu.txt 2>&1; rc=$?
echo "test.sh rc=$rc $(( $(date +%s) - t0 )) s"
cp build/Testing/Temporary/LastTestsFailed.log $OUT/x4a/ 2>/dev/null
grep -E "tests passed|tests failed|Total Test time|check-install: ok|\(Failed\)|\(Timeout\)|\*\*\*" $OUT/x4a/readme-test-4gpu.txt | head -30
grep -c "Skipped" $OUT/x4a/readme-test-4gpu.txt
