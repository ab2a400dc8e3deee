#!/bin/bash
# Device call 1: the record beside the march in 3D (A/B by a carried env switch), the GPU tests, pytest.
set -u
export NCCL_NVLS_ENABLE=0
R=$OUT; mkdir -p $R
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > $R/gpu.txt
patch -p1 < .carry/record-before.patch > $R/patch.txt 2>&1 || { echo patch failed; cat $R/patch.txt; exit 1; }
t0=$(date +%s)
(cmake --preset default > $R/cmake.txt 2>&1 && cmake --build build -j16 --target fdstencil test_cuda fdstencil_python > $R/build.txt 2>&1) || { tail -50 $R/build.txt; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json
B=build/fdstencil
run() { # name extra-env args...
  local name=$1; shift
  local env=$1; shift
  rm -rf /tmp/o; env $env $B wave "$@" -o /tmp/o -q --no-final > /dev/null 2>>$R/wave-err.txt || { echo "run $name failed"; return; }
  python3 -c "import json,sys; t=json.load(open('/tmp/o/summary.json'))['timing']; print(sys.argv[1], round(t['gpts'],2), round(t.get('copy_gbps',0),0))" "$name" >> $R/ab.txt
}
cfg3() { # size cpml R
  local n=$1 c=$2 r=$3 h=$(( $1 * 5 )) e=$(( ($1 - 1) * 10 ))
  echo "--constant 2000 --spacing 10 --shape $n,$n,$n --cpml $c --radius $r --steps 1000 --ricker 8 --source $h,$h,$h --receiver-line 50,$h,0:50,$h,$e:100"
}
cfg2() {
  local n=$1 c=$2 r=$3 h=$(( $1 * 5 )) e=$(( ($1 - 1) * 10 ))
  echo "--constant 2000 --spacing 10 --shape $n,$n --cpml $c --radius $r --steps 2000 --ricker 8 --source $h,$h --receiver-line 50,0:50,$e:100"
}
for rep in 1 2 3; do
  for c in "3d-128-c10-r4:$(cfg3 128 10 4)" "3d-128-c10-r2:$(cfg3 128 10 2)" "3d-216-c20-r4:$(cfg3 216 20 4)" "3d-128-c0-r4:$(cfg3 128 0 4)" "2d-1000-c0-r4:$(cfg2 1000 0 4)" "2d-1000-c10-r4:$(cfg2 1000 10 4)"; do
    name=${c%%:*}; args=${c#*:}
    run "$name beside" "X=1" $args
    run "$name before" "FDSTENCIL_RECORD_BEFORE=1" $args
  done
done
echo "ab $(( $(date +%s) - t0 )) s"
./build/tests/test_cuda --gtest_filter='WaveGpu.*:GpuModel.*:ImagingGpu.*' > $R/test_cuda.txt 2>&1; tail -3 $R/test_cuda.txt
echo "tests $(( $(date +%s) - t0 )) s"
(cd build && OMP_NUM_THREADS=4 PYTHONPATH=python FDSTENCIL_CLI=$PWD/fdstencil python3 -m pytest -q -p no:cacheprovider ../tests/python > $R/pytest.txt 2>&1); tail -3 $R/pytest.txt
echo "pytest $(( $(date +%s) - t0 )) s"
cat $R/ab.txt
