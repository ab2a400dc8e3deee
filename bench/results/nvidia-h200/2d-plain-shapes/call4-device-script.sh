#!/bin/bash
# Session 65, call 4: the 2D shapes' final rules: tests (wave, slabs, imaging, Python), the default
# campaigns at the new defaults, the short rows repeated, and the gradient's forward.
set -u
R=/tmp/g10; rm -rf $R; mkdir -p $R
t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader
(cmake --preset default > $R/configure.txt 2>&1 && cmake --build build -j16 --target fdstencil_cli test_cuda test_cli fdstencil_python > $R/build.txt 2>&1) || { echo BUILD FAILED; grep -B2 -A12 "error" $R/build.txt | head -60; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export FDSTENCIL_TUNING_CACHE=$PWD/build/no-cache.json NCCL_NVLS_ENABLE=0 OMP_NUM_THREADS=4
timeout 240 ./build/tests/test_cuda --gtest_filter='WaveGpu.*:WaveSlabsGpu.*:GpuModel.*:*ImagingGpu.*' > $R/test-cuda.txt 2>&1; echo "test_cuda rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" $R/test-cuda.txt | head -20
timeout 60 ./build/tests/test_cli --gtest_filter='TuneWave*:WaveCli*' > $R/test-cli.txt 2>&1; echo "test_cli rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" $R/test-cli.txt | head
for c in wave-2d-sizes-layers wave-2d-sizes wave-2d-beside-short-rows; do
  OUT=$R timeout 200 python3 bench/run.py $c > $R/$c.txt 2>&1; echo "$c rc=$? $(( $(date +%s) - t0 )) s"
done
python3 - <<'P'
import json, os
R = "/tmp/g10"
for name in ["wave-2d-sizes-layers", "wave-2d-sizes", "wave-2d-beside-short-rows"]:
    d = json.load(open(f"{R}/{name}.json"))
    for r in d["records"]:
        print(name, r.get("cpml"), r["radius"], r.get("model", ["", ""])[1], r.get("kernel_params", ""), r["kernel"].split(" design")[0].replace("acoustic_step ", ""), f'{r.get("gpts",0):.1f} ({r.get("percent_of_bound",0):.1f}%) copy {r.get("copy_gbps",0):.0f}')
P
export PYTHONPATH=$PWD/build/python FDSTENCIL_CLI=$PWD/build/fdstencil
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python/test_wave_gpu.py tests/python/test_imaging.py > $R/pytest.txt 2>&1; echo "pytest rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $R/pytest.txt
timeout 150 python3 bench/python/gradient_versus_deepwave.py --no-deepwave --dim 2 --size 2000 --layer 20 --steps 2000 --radius 4 --output $R/gradient-2d-2000-r4.json > $R/gradient.txt 2>&1; echo "gradient rc=$? $(( $(date +%s) - t0 )) s"
python3 -c "import json;d=json.load(open('$R/gradient-2d-2000-r4.json'));print(json.dumps(d.get('medians'))[:900])"
tar -C /tmp -cf $OUT/g10.tar g10 && echo tar ok
echo "total $(( $(date +%s) - t0 )) s"
