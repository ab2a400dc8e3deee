#!/bin/bash
# The README's build on two H200s (no network), then the new pairs test, ImagingGpu whole and
# compute-sanitizer memcheck over the pairs test; the next call runs the CTest suite on this build.
set -u
mkdir -p $OUT/v4
t0=$(date +%s)
bash scripts/install-deps.sh > $OUT/v4/install-deps.txt 2>&1; echo "install-deps rc=$? $(( $(date +%s) - t0 )) s"
tail -2 $OUT/v4/install-deps.txt
bash scripts/build.sh > $OUT/v4/build.txt 2>&1 || { echo BUILD FAILED; grep -B2 -A12 "error" $OUT/v4/build.txt | head -60; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json NCCL_NVLS_ENABLE=0
timeout 150 ./build/tests/test_cuda --gtest_filter='*ImagingGpu*' > $OUT/v4/test_cuda-imaging.txt 2>&1; echo "test_cuda ImagingGpu rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|MarchInPairs" $OUT/v4/test_cuda-imaging.txt | head
timeout 200 compute-sanitizer --tool memcheck ./build/tests/test_cuda --gtest_filter='*TheMarchInPairs*:*TheBackwardMarchMatches*' > $OUT/v4/memcheck.txt 2>&1; echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"
grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/v4/memcheck.txt | head -4
echo "total $(( $(date +%s) - t0 )) s"
