#!/bin/bash
# Issue 35: fdstencil tune --wave on today's tree, H200: does any candidate beat the default on the
# small 3D models and 2D 1000^2 with the default 10-point layer, R = 4?
set -u
mkdir -p $OUT/v7
t0=$(date +%s)
(cmake --preset default > $OUT/v7/configure.txt 2>&1 && cmake --build build -j32 --target fdstencil_cli > $OUT/v7/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A12 "error" $OUT/v7/build.txt | head -60; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export CUDA_VISIBLE_DEVICES=0
C=$OUT/v7/cache.json
for shape in 128,128,128 216,216,216; do
  timeout 55 ./build/fdstencil tune --wave --shape $shape --radius 4 --cpml 10 --steps 500 --cache $C --budget 20 --json $OUT/v7/tune-$(echo $shape | tr , x).json > $OUT/v7/tune-$(echo $shape | tr , x).txt 2>&1; echo "tune $shape rc=$? $(( $(date +%s) - t0 )) s"
  tail -4 $OUT/v7/tune-$(echo $shape | tr , x).txt
done
echo "total $(( $(date +%s) - t0 )) s"
