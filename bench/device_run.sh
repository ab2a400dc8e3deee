#!/usr/bin/env bash
# One device call: build on the GPU machine, then run the named stages, writing logs and result
# files under $OUT (or ./out when run by hand). Stages:
#   build      configure + build (Release, CUDA, sm_90)
#   test       the whole CTest suite, GPU tests included
#   sanitize   compute-sanitizer memcheck and racecheck over the CUDA tests
#   default    the default suite, exactly as the README's first command runs it
#   lap-quick  every Laplacian variant at 512^3 and 1024^3, float and double
#   lap-k8     tuning of ours: ty x stages at 512^3 and 1024^3
#   lap-nzc    ours: planes per block (nzc) at 512^3 and 1024^3
#   lap-k9-*   k9 (the seismic pipelined tile at R = 1, issue 13): test, tune, tune2, sizes, planes,
#              order, check, strips (after build-k9: the CLI and the CUDA tests only), plan; prof-k9
#              tests, small, planes2 (256^3, longer marches on the plane sweep); sanitize-k9;
#              ring-z-1024 (d2z at nw 1024, R = 5..8); seis-pipe-shapes, seis-pipe-tests, seis-pipe2,
#              seis-pipe-1024, seis-pipe3, seis-pipe4, prof-pipe (d2xyz pipelined in k9's shapes,
#              strips and orders, then smaller blocks); plan-check (the defaults after them);
#              seis-pipe-cap (pipelined under 64 registers, R = 3..5), plan-check2 (after it),
#              cuda-tests (the whole CUDA test binary); seis-zq-tests, seis-zq, seis-zq-1024 (the
#              z queue in shared memory, zq); ring-helper-tests (after the ring's move to
#              thread_ring.cuh), why1024 (R = 4 and 2 at shapes between 512^3 and 1024^3),
#              strips1024 (R = 4 zq 1: strips x nw x block), prof-zq (its counters); my-tests,
#              seis-my (pipelined's my 2: two rows a thread, xyz_pipelined_rows); lap-my-tests,
#              lap-my (k9's my 2 over the sizes and the plane sweep), seis-my-1024, plan-check4
#              (the plan after the defaults took them), tile-helpers-tests. The
#              Laplacian's register caps (lap-k9-regs*.json) were a k9 parameter, measured slower
#              and removed (docs/laplacian.md)
# The TMA tile ring (issue 13, eighth session: d2xyz `tma`, xyz_tma.cuh):
#   build-tma  the CLI and the CUDA tests only
#   tma-tests  its GPU test, the registry and refusal tests; the test under memcheck and racecheck
#   tma-r4     R = 4 float at 512^3: block x nw x ahead x zq, beside the plan's defaults (zq, the
#              planes below the centre from the ring, was a parameter then: measured, removed)
#   tma-r4b    R = 4 float at 512^3: larger blocks, longer chunks, the register cap (regs 64)
#   tma-ncu    Nsight Compute's sections of tma's best R = 4 launch so far and of the plan's
#              pipelined; bench --profile (DRAM, L2, L1 bytes) of both
#   tma-radii  R = 1..8 float at 512^3 over the shapes that led at R = 4, beside the plan
#   tma-1024   R = 4..8 float at 1024^3 (strips 0 and 1) in the shapes that led at 512^3, beside the plan
#   tma-double R = 4 double at 512^3 and 1024^3
#   tma-caps   the register caps regs 80 (R = 5; double R = 4) and 96 (R = 6, 7) against none, 512^3
#              whole and 1024^3 in strips
#   tma-plan-check2  the plan after the defaults took the caps: R = 4..8 float, R = 4 double, 512^3
#              and 1024^3; counters of the capped R = 5 and 6 defaults at 512^3
#   tma-final  after the march's block geometry became one helper (tile.cuh MarchBlock; the
#              pipelined and Laplacian cubins stayed byte for byte, tma's did not): the plan as
#              tma-plan-check2, into tma-final*.json
#   tma-generic-tests  the seismic tests that run every variant (every R, layouts, blocks, nw), the
#              defaults and plan tests
#   tma-plan-check  the plan after the defaults took tma: R = 4..8 float and R = 4 double, 512^3 and
#              1024^3; counters (bench --profile) of the new defaults
# The wave step's tma design (issue 13, ninth session: the ring of tma_ring.cuh for the step's
# interior box; d2xyz tma's march moved onto the same ring):
#   wave-tma-test  the wave GPU tests; the small design test under memcheck and racecheck; the
#              d2xyz tma test, registry and refusal tests after the move
#   wave-tma-configs  the tma design's shapes against the defaults, R = 4, 5, 6, 8, 512^3, no CPML
#   wave-tma-1024  the same at 1024^3 for the leading shapes (WAVE_TMA_1024 narrows it)
#   wave-verify-tma  R = 5, 6, 7 (WAVE_VERIFY_RADII) at the defaults against the analytic solution and the l1 march
#   wave-tma-cpml  with a 20-point CPML (512^3): tma's boundary blocks by l1 or the tile, against
#              the defaults before tma, R = 4..8
#   tma-ring-check  d2xyz through the plan after the move (as tma-final), into tma-ring-check*.json
# Issue 13, tenth session:
#   wave-gpu-tests  every WaveGpu test
#   wave-cfg-tests  the wave tests of the kernel parameters (the constructor's own check of ahead);
#              bench --same-size-copy's CLI tests
#   wave-small  the step at 256^3 (and 384^3 at R = 4), R = 3..8, no CPML: tma's shapes and chunk
#              lengths against l1 and the tile, for a small-plane rule
#   wave-long   1024^3, no CPML: tma's chunks of 64 and 128 planes against the defaults (the seam
#              planes each chunk re-reads), R = 4, 5, 8
#   wave-cpml-nw  512^3 with a 20-point CPML: shorter chunks, so fewer interior points fall into the
#              blocks that touch a z layer, R = 4, 8
#   wave-rules  after the defaults took them: the 256^3 and 1024^3 rules again beside the shapes
#              they beat, 512^3 in longer chunks, 1024^3 R = 6..8 in chunks of 64
#   wave-rules2  512^3 R = 6..8 in chunks of 32 to 128, ahead 2 and 3
#   wave-final  the step at the defaults (wave-rules2 moved them) beside the previous defaults, 256^3,
#              512^3 (200 steps), 1024^3 at R = 6
#   lap-samesize  the Laplacian's plan over the sizes and the plane sweep, both types, each record
#              also against a cudaMemcpy of its own output's bytes (bench --same-size-copy)
# Issue 13, eleventh session (the tenth session's changes, then chunk lengths for d2xyz):
#   check-tests  the GPU tests the tenth session changed: every WaveGpu test, the plan and defaults
#              tests (d2xyz tma's new rows), bench --same-size-copy's CLI tests
#   wave-nocpml-check  the no-CPML defaults against the l1 march, field to the bit, and against the
#              analytic solution (in the window before any reflection): 241^3 (planes up to 256^2)
#              and 200 x 600 x 600 (planes above 512^2: chunks of 64), R = 4..8 (WAVE_CHECK_RADII narrows it)
#   tma-long   d2xyz tma in chunks of 16, 32, 64 planes: 1024^3 float R = 4..8 (strips 0, 1), 512^3
#              float R = 4, 5, double R = 4 at both sizes
#   wave-zshapes  the no-CPML step on boxes short in z (200 x 600^2, 320 x 640^2, 192 x 1024^2;
#              WAVE_ZSHAPES names others): the defaults against chunks of 16 and the l1 march, R = 4, 6, 8
#   wave-even  200 x 600^2 at the defaults against chunks of 64 and 16, R = 4, 6, 8 (ran with the
#              long chunks evened out over the depth, a change not kept)
#   prof-long  bench --profile of the plan's new 1024^3 rows (tma, chunks of 64, whole planes), R = 8, 7, 6
#   tma-nw128  d2xyz tma in chunks of 128 against 64, R = 6..8, 512^3 and 1024^3, whole planes
#   tma-nw128b  tma-nw128's R = 7, 8 rows in the plan's shapes again, nw 64 against 128
#   plan-long  the plan at 512^3 and 1024^3 after tma-long moved its rows (float R = 4..8, double R = 4)
#   lap-sizes  part 4 figure 1: 256^3 -> 1024^3, one dimension stepped by 256 at a time
#   lap-m      part 3 tables: tiling factor m = 1..16 for k2-k5
#   lap-planes part 4 figure 3: the xy-plane sweep across the L2 cliff
#   seis-baseline  seismic part 1-2 baselines, R = 1, 4, 8, aligned and unaligned layout
#   seis-r512  every seismic variant (the pass pipelines included), R = 1..8, 512^3 float
#   seis-r1024 every seismic variant but the baselines, R = 1, 2, 4, 6, 8, 1024^3 float (~9 min)
#   seis-nw    the posts' figure: bandwidth against nw (1 .. nz) for the z-marching kernels
#   seis-sizes the best variants of each operator at 256^3, 768^3 and 1000 x 600 x 300 (512^3 and
#              1024^3 are in seis-r512 and seis-r1024)
#   seis-shapes  block shapes of the tiled kernels (xy fused, one-pass xyz), R = 1, 4, 8, 512^3
#   seis-tune  ours (l1march): block x my x nw; the z windows: block x nw; R = 1, 4, 8, 512^3
#   seis-tune2 second round: vector width of the z window and of ours, the pipelined tile, R = 1..8
#   seis-tune3 block shapes of the y kernels, R = 1, 4, 8
#   seis-best1024  the tuned candidates of z and xyz at 1024^3, R = 1, 2, 4, 6, 8
#   seis-zorder  the z window chunk-first (order zxy) against the default order at 1024^3
#   prof-smoke  bench --profile on two small cases, to check ncu and its CSV on the machine; also
#              ncu's metric list and one raw CSV. The prof-* stages after it run only if it worked
#   prof-lap   counters of every Laplacian variant, 512^3 and 1024^3, double and float
#   prof-seis512  counters of every seismic variant, R = 1, 4, 8, 512^3 float
#   prof-seis1024-r1, -r4, -r8  the same at 1024^3, one radius per stage (one call cannot hold all)
#   prof-best512, prof-best1024  counters of the tuned best configuration of each seismic operator
#              and R = 1, 4, 8 (from the seis-tune*, seis-best1024 and seis-zorder results)
#   prof-z     after the z-march prefetch fix: counters of window, window_vec and l1march (defaults)
#              at 512^3 and 1024^3, R = 1, 4, 8, and of their tuned best (prof-zbest512/1024), and
#              the window_vec nw sweep at 1024^3 (seis-znw); prof-zbest512 and prof-zbest1024 alone
#   prof-probe  extra L2 write counters of d2z window_vec at R = 1 and 4, raw, into the log
#   seis-double  every seismic variant in double, R = 4, 512^3
# The ring marches (issue 13).
#   ring-test     the seismic GPU tests (they cover every variant, the ring ones included)
#   ring-sweep512 d2xyz ring: block x my x vec_bytes x ahead, R = 1..8, 512^3 float
#   ring-z512     d2z ring: block x vec_bytes x ahead, R = 1, 4, 8, 512^3 float
#   ring-final    the ring tests under memcheck and racecheck; nw at 512^3 (xyz and z), 1024^3
#                 (xyz R = 1, 2, 4, 6, 8 and z R = 1, 4, 8, both launch orders), double at R = 4
#   ring-ncu      Nsight Compute's sections (issue rate, stalls, occupancy) of five ring/pipelined launches
#   prof-ring     bench --profile of the ring's best: xyz R = 4 and 6, z R = 8 at 512^3, xyz R = 4 at 1024^3
#   ring-floor-test  the ring and wave GPU tests (the ring without its register floor among them)
#   ring-floor512 the ring without the register floor (floor=0) against with it: d2xyz and d2z,
#                 every R, 512^3, and double at R = 4
#   ring-floor1024  the same at 1024^3 where floor=0 won at 512^3, beside d2z window_vec's defaults
#   ring-znw1024  d2z ring without the floor at 1024^3, R = 4, 6, 8: nw 128, 256, 512
#   ring-defaults  the plan's built-in choices (--no-cache) for d2xyz and d2z at every R, 512^3, and
#                 the GPU tests of the seismic variants, plans and wave step
#   ring-ncu-def  Nsight Compute's sections of the ring's defaults: d2xyz R = 1, 4, 8, d2z R = 4
# The library (issue 10). The tuning cache travels between calls as the committed file
# bench/results/<device>/tuning-cache.json: a tune stage starts from it (or from the $OUT copy an
# earlier stage of the same call left) and leaves the grown cache in $OUT/tuning-cache.json.
#   build-cli  configure + build the command-line tool alone (the tune and bench stages need no tests)
#   tune256, tune512   fdstencil tune for d2x..d2xyz at R = 1, 4, 8 (float) and laplacian7 (float,
#              double) at that size, into the cache; every candidate in $OUT/tune-<size>.json
#   tune1024a, tune1024b  the same at 1024^3, R = 1 and 4, then R = 8 and laplacian7
#   tune768, tune-odd  the same at 768^3 and 1000 x 600 x 300, sizes the defaults were not tuned at
#   tune-seeded  tune-odd's seismic cases again after the first round took every defaults row,
#              into a scratch cache
#   plan-tuned    bench --tuned: the plan's choice from the cache, R = 1, 4, 8, 512^3 and 1024^3
#   plan-defaults bench --no-cache --variant plan: the built-in defaults, the same cases and the
#              sizes of tune768 and tune-odd
#   plan-defaults-odd  the same at 1000 x 600 x 300 alone
#   overhead   bench --overhead: Plan::apply against the bare launch on 64^3 fields
#   consumer   the installed package (CUDA build) and examples/consumer against it, on the GPU
#   quickstart the README's first command, as written (install-deps, build, info, default suite)
# The wave solver (issue 11). Each stage's run directories travel back as one tar file.
#   wave-test     the wave tests alone (cpu and GPU), gtest output in the log
#   wave-tile-test  the GPU wave tests and the ring tests; the step's tile design under the sanitizers
#   wave-configs  the step kernel's launch shapes: block x vec x nw, the l1 and tile designs,
#                 R = 1, 2, 4, 8, 512^3, no CPML
#   wave-perf     GPts/s at 256^3, 512^3, 1024^3 for R = 1, 2, 4, 8: the interior step (no CPML)
#                 and the whole run with a 20-point CPML, beside the same-run copy bandwidth
#   wave-verify   3D and 2D homogeneous runs on the GPU against the analytic solution, R = 1, 2, 4, 8,
#                 a snapshot slice, and a 10,000-step stability run
#   wave-gpu-tests   the GPU wave tests alone
#   wave-split-test  after the step became two kernels (interior, boundary) and the tile took zq:
#                 the wave GPU tests, the small design test under memcheck and racecheck
#   wave-configs2 launch shapes of both designs (the tile's with zq 1), R = 1, 2, 4, 8, 512^3
#   wave-configs3 one kernel against two (split) and the tile's zq, same call, R = 1, 2, 4, 8, 512^3
#   wave-big      R = 1, 2 at 1024^3: l1 in one kernel against the tile split, nw 8 and 32
#   plan-check3   after the defaults took pipelined zq 1 at R = 4: tests, the plan at R = 3..5
#   wave-tile-nw  the tile design at 128-thread blocks and nw 6-16 against the defaults, R = 4, 8, 512^3
#   wave-cpml     bench/wave_cpml.py: the CPML's reflection at widths 10, 20, 40, in 3D and 2D
# Surveys, SEG-Y, checkpoints (issue 12). The build finds SEG-Y only where build-deps/segyio was
# carried (segy_flags below).
#   survey-test   the wave, checkpoint, survey and SEG-Y tests (cpu and GPU; ~7 min)
#   ckpt-test     the GPU wave tests and the cpu checkpoint tests alone (~30 s)
#   survey3d      a 3D survey on the GPU from a SEG-Y model to SEG-Y shot records, then the same
#                 command again (every shot verified and skipped); timings in survey3d.tar
#   survey-batch  shots per second of small 2D and 3D shots run 1, 2, 4, 8 at a time (--batch)
#   ckpt-cost     the cost of --checkpoint-every at 512^3, R = 4 (seconds per checkpoint, share of
#                 the run), and a GPU run stopped by SIGINT then resumed, its record compared
#                 byte for byte with the run never stopped
# Example: bench/device_run.sh build test sanitize lap-quick
# Logs all go to $OUT/log.txt and each benchmark to $OUT/<name>.json: the device tool returns at
# most 8 files, so a call should name at most 7 benchmark outputs.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
FD=./build/fdstencil
LOG=$OUT/log.txt
status=0

# SEG-Y: the device image has no libsegyio; the Debian packages extracted into build-deps/segyio
# (scripts/fetch-segyio.sh, carried by the device call) are found through CMAKE_PREFIX_PATH.
SEGYIO_PREFIX=$PWD/build-deps/segyio/usr
segy_flags() { if [ -d "$SEGYIO_PREFIX" ]; then echo "-DCMAKE_PREFIX_PATH=$SEGYIO_PREFIX"; fi; }

stage_build() {
  nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv | tee -a "$LOG"
  cmake --preset default -DFDSTENCIL_CUDA=ON $(segy_flags) >/tmp/build.log 2>&1 &&
    cmake --build --preset default -j "$(nproc)" >>/tmp/build.log 2>&1 || { tail -50 /tmp/build.log | tee -a "$LOG"; exit 1; }
  grep -E "warning" /tmp/build.log | head -20 | tee -a "$LOG"
  grep -E "^-- fdstencil:" /tmp/build.log | tee -a "$LOG"
  $FD info --json >>"$LOG"
  echo "build ok"
}

stage_test() {
  ctest --preset default -j 4 >/tmp/test.log 2>&1 || status=1
  cat /tmp/test.log >>"$LOG"
  tail -15 /tmp/test.log
}

stage_sanitize() {
  # Memcheck (out-of-bounds, misaligned) and racecheck (shared-memory hazards) over every CUDA
  # test; --error-exitcode makes any report fail the stage.
  # SANITIZE_FILTER narrows the gtest selection (the seismic suite alone takes too long to check
  # whole): e.g. CudaSeismic.BlockShapes:CudaSeismic.WindowLengths.
  for tool in memcheck racecheck; do
    timeout "${SANITIZE_TIMEOUT:-420}" compute-sanitizer --tool $tool --error-exitcode 3 ./build/tests/test_cuda \
      --gtest_filter="${SANITIZE_FILTER:-*}" \
      >/tmp/sanitize-$tool.log 2>&1
    rc=$?
    cat /tmp/sanitize-$tool.log >>"$LOG"
    echo "compute-sanitizer $tool: exit $rc"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|SKIPPED" /tmp/sanitize-$tool.log | tail -4
    [ $rc -eq 0 ] || status=1
  done
}

bench() {  # name, then bench arguments
  local name=$1
  shift
  $FD bench --backend cuda "$@" --json "$OUT/$name.json" 2>>"$LOG" | tee -a "$LOG"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
}

# Runs the CUDA tests that match a gtest filter: name (log name), filter, timeout in s (300).
gpu_tests() {
  timeout "${3:-300}" ./build/tests/test_cuda --gtest_filter="$2" >"/tmp/$1.log" 2>&1 || status=1
  cat "/tmp/$1.log" >>"$LOG"
  grep -E "^\[ +(FAILED|PASSED|SKIPPED) |tests ran|Failure" "/tmp/$1.log" | tail -12
}

stage_default() {  # the README's main job, as a user runs it
  $FD bench --json "$OUT/default.json" 2>>"$LOG" | tee -a "$LOG"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
}

stage_lap-quick() {
  bench lap-quick --op laplacian7 --size 512,512,512 --size 1024,1024,1024 --dtype double,float
}

stage_lap-k8() {
  bench lap-k8 --op laplacian7 --variant k8,k8_shfl --param ty=4,8,16 --param stages=4,6,8 \
    --size 512,512,512 --size 1024,1024,1024 --dtype double,float --reps 10
}

stage_lap-nzc() {
  bench lap-nzc --op laplacian7 --variant k8 --param nzc=0,16,32,64,128,256 \
    --size 512,512,512 --size 1024,1024,1024 --dtype double,float --reps 10
}

stage_lap-sizes() {
  # The posts' figure 1 shows kernel 5 alone; k1, k7 and k8 are its baseline and the best.
  # 512^3 and 1024^3 come from lap-quick, which runs every variant there.
  local sizes=() s
  for s in 256,256,256 512,256,256 512,512,256 768,512,512 768,768,512 768,768,768 \
           1024,768,768 1024,1024,768; do sizes+=(--size "$s"); done
  bench lap-sizes --op laplacian7 --variant k1,k5,k7,k8 --dtype double,float "${sizes[@]}"
}

stage_lap-m() {
  bench lap-m --op laplacian7 --variant k2,k3,k4,k5 --param m=1,2,4,8,16 --size 512,512,512 --dtype double,float
}

stage_lap-planes() {
  # The xy-plane of doubles grows from 2 MB to 128 MB (H100 L2 50 MB, H200 60 MB): three planes
  # stop fitting near 16-20 MB. nz = 32 planes keeps the largest case at 4 GB.
  local sizes=() ny
  for ny in 256 512 1024 2048 3072 4096 6144 8192 12288 16384; do sizes+=(--size "1024,$ny,32"); done
  bench lap-planes --op laplacian7 --variant k1,k5,k6,k7,k8 --dtype double "${sizes[@]}"
}

stage_seis-baseline() {
  # Seismic parts 1-2: the one-point-per-thread baselines on the aligned and the unaligned layout.
  bench seis-baseline-aligned --op d2x,d2y,d2z,d2xy,d2xyz --radius 1,4,8 --size 512,512,512 --dtype float
  bench seis-baseline-unaligned --op d2x,d2y,d2z,d2xy,d2xyz --radius 1,4,8 --size 512,512,512 --dtype float --align 1
}

stage_seis-r512() {
  bench seis-r512 --op d2x,d2y,d2z,d2xy,d2xyz --radius 1,2,3,4,5,6,7,8 --size 512,512,512 --dtype float
}

stage_seis-r1024() {
  bench seis-r1024 --op d2x,d2y,d2z,d2xy,d2xyz --radius 1,2,4,6,8 --size 1024,1024,1024 --dtype float \
    --variant vec2,vec4,vec,vec_smem,window,window_vec,fused,onepass,pipelined,l1march,3pass,2pass --reps 10
}

stage_seis-nw() {
  bench seis-nw --op d2z,d2xyz --variant window_vec,onepass,pipelined,l1march --radius 1,4,8 \
    --param nw=1,2,4,8,16,32,64,128,256,512 --size 512,512,512 --dtype float --reps 10
}

stage_seis-sizes() {
  local sizes=() s
  for s in 256,256,256 768,768,768 1000,600,300; do sizes+=(--size "$s"); done
  bench seis-sizes --op d2x,d2y,d2z,d2xy,d2xyz --variant vec4,vec,window_vec,fused,pipelined,l1march \
    --radius 4,8 --dtype float "${sizes[@]}" --reps 10
}

stage_seis-shapes() {
  bench seis-shapes --op d2xy,d2xyz --variant fused,onepass,pipelined --radius 1,4,8 --size 512,512,512 \
    --param block=16x16x1,32x8x1,32x16x1,16x32x1,32x4x1,64x4x1,8x32x1 --dtype float --reps 10
}

stage_seis-tune() {
  bench seis-tune-l1march --op d2xyz --variant l1march --radius 1,4,8 --size 512,512,512 --dtype float --reps 10 \
    --param block=32x8x1,32x4x1,64x4x1,16x16x1,32x16x1,64x2x1,128x2x1 --param my=1,2 --param nw=16,64
  bench seis-tune-z --op d2z --variant window,window_vec --radius 1,4,8 --size 512,512,512 --dtype float --reps 10 \
    --param block=32x8x1,64x4x1,32x4x1 --param nw=4,8,16,32,64,128
}

stage_seis-tune2() {
  bench seis-tune2-z --op d2z --variant window_vec --radius 1,2,3,4,5,6,7,8 --size 512,512,512 --dtype float \
    --reps 10 --param vec_bytes=8,16 --param nw=8,16,32 --param block=32x4x1,64x2x1
  bench seis-tune2-xyz --op d2xyz --variant l1march,pipelined,onepass --radius 1,2,4,6,8 --size 512,512,512 \
    --dtype float --reps 10 --param vec_bytes=8,16 --param nw=16,32 --param block=32x4x1,16x16x1,8x32x1
}

stage_seis-tune3() {
  bench seis-tune3-y --op d2y --variant vec,vec_smem --radius 1,4,8 --size 512,512,512 --dtype float --reps 10 \
    --param block=64x4x1,32x8x1,32x16x1,16x16x1,16x32x1,128x2x1
}

stage_seis-best1024() {
  local common=(--radius 1,2,4,6,8 --size 1024,1024,1024 --dtype float --reps 10)
  bench seis-best1024-z --op d2z --variant window_vec --param nw=8,16,32 "${common[@]}"
  bench seis-best1024-xyz --op d2xyz --variant pipelined,l1march --param nw=16,32 --param vec_bytes=8,16 "${common[@]}"
}

stage_seis-zorder() {
  bench seis-zorder --op d2z --variant window_vec --radius 1,2,4,6,8 --size 1024,1024,1024 --dtype float \
    --reps 10 --param order=xyz,zxy --param nw=16,64
}

PROF_OK=1
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
stage_prof-smoke() {
  "$NCU" --version | tee -a "$LOG" || { PROF_OK=0; return; }
  "$NCU" --query-metrics >"$OUT/ncu-metrics.txt" 2>&1
  # One raw report exactly as bench --profile asks for it, to read its format by eye.
  "$NCU" --clock-control none --csv --page raw --print-units base --nvtx --nvtx-include 'fdstencil-timed/' \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpu__time_duration.sum \
    --log-file "$OUT/ncu-raw.csv" -- $FD bench --backend cuda --op d2xyz --variant 3pass --size 256,256,256 \
    --reps 2 --warmup 1 --profile-child >>"$LOG" 2>&1
  local t0=$SECONDS
  bench prof-smoke --op laplacian7,d2xyz --variant k5,pipelined --size 256,256,256 --dtype float --reps 3 --profile
  echo "prof-smoke: $((SECONDS - t0)) s"
  python3 - "$OUT/prof-smoke.json" <<'PY' || PROF_OK=0
import json, sys
recs = json.load(open(sys.argv[1]))["records"]
bad = [r for r in recs if r.get("counters", {}).get("status") != "ok"]
for r in bad:
    print("prof-smoke:", r["variant"], r.get("counters"))
sys.exit(1 if bad or not recs else 0)
PY
  echo "prof-smoke: counters ok = $PROF_OK"
}

prof() {  # as bench, but only once prof-smoke (if it ran) found the counters readable
  [ "$PROF_OK" = 1 ] || { echo "skipping $1: prof-smoke failed"; return; }
  local t0=$SECONDS
  bench "$@" --profile
  echo "$1: $((SECONDS - t0)) s"
}

stage_prof-lap() {
  prof prof-lap --op laplacian7 --size 512,512,512 --size 1024,1024,1024 --dtype double,float --reps 10
}

stage_prof-seis512() {
  prof prof-seis512 --op d2x,d2y,d2z,d2xy,d2xyz --radius 1,4,8 --size 512,512,512 --dtype float --reps 10
}

stage_prof-seis1024-r1() {
  prof prof-seis1024-r1 --op d2x,d2y,d2z,d2xy,d2xyz --radius 1 --size 1024,1024,1024 --dtype float --reps 10
}

stage_prof-seis1024-r4() {
  prof prof-seis1024-r4 --op d2x,d2y,d2z,d2xy,d2xyz --radius 4 --size 1024,1024,1024 --dtype float --reps 10
}

stage_prof-seis1024-r8() {
  prof prof-seis1024-r8 --op d2x,d2y,d2z,d2xy,d2xyz --radius 8 --size 1024,1024,1024 --dtype float --reps 10
}

# The tuned best of each operator and R (bench/report.py best over the tuning files): op, variant,
# R, then its parameters. d2xy at 1024^3 is its default (16x16), already in prof-seis1024-*.
# d2z at 1024^3, R = 4 and 8: the best of seis-znw after the z-march prefetch fix (prof-best1024
# ran the earlier best, nw=64 xyz and nw=16 zxy).
BEST512=(
  "d2x vec4 1 block=64x4x1" "d2x vec4 4 block=64x4x1" "d2x vec4 8 block=64x4x1"
  "d2y vec 1 block=32x16x1" "d2y vec 4 block=16x16x1" "d2y vec 8 block=32x8x1"
  "d2z window_vec 1 block=64x2x1 nw=8 vec_bytes=8" "d2z window_vec 4 block=32x4x1 nw=8"
  "d2z window_vec 8 block=32x4x1 nw=32"
  "d2xy fused 1 block=64x4x1" "d2xy fused 4 block=32x16x1" "d2xy fused 8 block=32x8x1"
  "d2xyz pipelined 1 block=8x32x1 nw=4" "d2xyz l1march 4 block=32x4x1 my=1 nw=16 vec_bytes=8"
  "d2xyz pipelined 8 block=8x32x1 nw=16"
)
BEST1024=(
  "d2x vec4 1 block=64x4x1" "d2x vec4 4 block=64x4x1" "d2x vec4 8 block=64x4x1"
  "d2y vec 1 block=32x8x1" "d2y vec 4 block=32x8x1" "d2y vec 8 block=32x8x1"
  "d2z window_vec 1 block=32x4x1 nw=64 order=xyz vec_bytes=16"
  "d2z window_vec 4 block=32x4x1 nw=8 order=zxy vec_bytes=16"
  "d2z window_vec 8 block=32x4x1 nw=8 order=zxy vec_bytes=16"
  "d2xyz pipelined 1 block=8x32x1 nw=16" "d2xyz l1march 4 block=32x4x1 my=1 nw=32 vec_bytes=8"
  "d2xyz pipelined 8 block=8x32x1 nw=32"
)

prof_best() {  # name, size, then the configurations; one bench run each, merged into $OUT/name.json
  local name=$1 size=$2 cfg op variant radius params n=0 t0=$SECONDS
  shift 2
  [ "$PROF_OK" = 1 ] || { echo "skipping $name: prof-smoke failed"; return; }
  rm -rf "/tmp/$name" && mkdir -p "/tmp/$name"  # no file of an earlier run on a warm machine
  for cfg in "$@"; do
    read -r op variant radius params <<<"$cfg"
    local args=()
    for p in $params; do args+=(--param "$p"); done
    n=$((n + 1))
    $FD bench --backend cuda --op "$op" --variant "$variant" --radius "$radius" --size "$size" --dtype float \
      --reps 10 --profile "${args[@]}" --json "/tmp/$name/$(printf %02d $n).json" 2>>"$LOG" | tee -a "$LOG"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  done
  compgen -G "/tmp/$name/*.json" >/dev/null || { echo "$name: no run wrote results"; status=1; return; }
  # One file back (the device returns at most 8): every record keeps its own run's copy bandwidth.
  python3 - "$OUT/$name.json" /tmp/$name/*.json <<'PY'
import json, statistics, sys
docs = [json.load(open(p)) for p in sys.argv[2:]]
records = []
for d in docs:
    for r in d["records"]:
        r["copy_gbps"] = d["copy_gbps"]
        records.append(r)
merged = dict(docs[0], records=records)  # a new dict: docs[0]'s own records are among them
merged["copy_gbps_runs"] = [d["copy_gbps"] for d in docs]
merged["copy_gbps"] = statistics.median(merged["copy_gbps_runs"])
json.dump(merged, open(sys.argv[1], "w"), indent=1)
PY
  echo "$name: $((SECONDS - t0)) s"
}

stage_prof-best512() { prof_best prof-best512 512,512,512 "${BEST512[@]}"; }
stage_prof-best1024() { prof_best prof-best1024 1024,1024,1024 "${BEST1024[@]}"; }

stage_prof-z() {
  prof prof-z512 --op d2z,d2xyz --variant window,window_vec,l1march --radius 1,4,8 --size 512,512,512 --reps 10
  prof prof-z1024 --op d2z,d2xyz --variant window,window_vec,l1march --radius 1,4,8 --size 1024,1024,1024 --reps 10
  stage_prof-zbest512
  stage_prof-zbest1024
  bench seis-znw --op d2z --variant window_vec --radius 1,4,8 --size 1024,1024,1024 --param nw=8,16,32,64 \
    --param order=xyz,zxy --reps 5
}

zbest() { local c; for c in "$@"; do [[ $c == "d2z "* || $c == *l1march* ]] && echo "$c"; done; }
stage_prof-zbest512() { local z; mapfile -t z < <(zbest "${BEST512[@]}"); prof_best prof-zbest512 512,512,512 "${z[@]}"; }
stage_prof-zbest1024() { local z; mapfile -t z < <(zbest "${BEST1024[@]}"); prof_best prof-zbest1024 1024,1024,1024 "${z[@]}"; }

stage_prof-probe() {
  [ "$PROF_OK" = 1 ] || { echo "skipping prof-probe: prof-smoke failed"; return; }
  local m=lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_l1_op_write.sum
  m+=,lts__t_sectors_srcunit_ltcfabric_op_write.sum,lts__t_sectors_op_write.sum,dram__bytes_write.sum
  m+=,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
  m+=,smsp__inst_executed_op_global_st.sum,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum
  local r p
  for r in 1 4; do
    for p in "vec_bytes=16" "vec_bytes=8"; do
      echo "--- probe d2z window_vec R=$r $p" | tee -a "$LOG"
      "$NCU" --clock-control none --csv --page raw --print-units base --nvtx --nvtx-include 'fdstencil-timed/' \
        --metrics "$m" -- $FD bench --backend cuda --op d2z --variant window_vec --radius $r \
        --size 512,512,512 --reps 1 --warmup 0 --param $p --profile-child 2>&1 |
        python3 -c '
import csv, sys
rows = [r for r in csv.reader(sys.stdin) if r and (r[0] == "ID" or r[0].isdigit())]
if rows:
    keep = [i for i, h in enumerate(rows[0]) if h.endswith(".sum")]
    for r in rows[1:]:
        print(" ".join(f"{rows[0][i]}={r[i]}" for i in keep))
' | tee -a "$LOG"
    done
  done
}

stage_seis-double() {
  bench seis-double --op d2x,d2y,d2z,d2xy,d2xyz --radius 4 --size 512,512,512 --dtype double --reps 10
}

# ---- the ring marches (issue 13) ------------------------------------------------------------------

stage_ring-test() {  # the seismic GPU tests that cover the ring variants (every variant, every R)
  timeout 420 ./build/tests/test_cuda --gtest_filter='CudaSeismic.*' >/tmp/ring-test.log 2>&1 || status=1
  grep -E "^\[  (FAILED|PASSED|SKIPPED) |OK \]|Failure" /tmp/ring-test.log | tail -30 | tee -a "$LOG"
}

stage_ring-sweep512() {  # d2xyz ring: tile shape x line blocking x vector width x depth, R = 1, 2, 4, 8
  bench ring-sweep512 --op d2xyz --variant ring --radius 1,2,3,4,5,6,7,8 --size 512,512,512 --dtype float --reps 10 \
    --param block=8x32x1,16x16x1,16x8x1 --param my=0,1 --param vec_bytes=16,8 --param ahead=2,3
}

stage_ring-z512() {  # d2z ring against window_vec's best of issue 5, R = 1, 4, 8
  bench ring-z512 --op d2z --variant ring --radius 1,4,8 --size 512,512,512 --dtype float --reps 10 \
    --param block=32x4x1,32x8x1,16x8x1 --param vec_bytes=16,8 --param ahead=2,4
}

stage_ring-final() {  # one call: the ring tests under the sanitizers, then nw, 1024^3, double, counters
  SANITIZE_FILTER=CudaSeismic.RingWidthsLinesDepthsAndOrders SANITIZE_TIMEOUT=110 stage_sanitize
  bench ring-nw512 --op d2xyz --variant ring --radius 1,2,4,6,8 --size 512,512,512 --dtype float --reps 10 \
    --param block=16x16x1 --param my=0,1 --param vec_bytes=16,8 --param nw=64,128,256 --param ahead=2
  bench ring-z-nw512 --op d2z --variant ring --radius 1,4,8 --size 512,512,512 --dtype float --reps 10 \
    --param block=32x8x1 --param vec_bytes=16 --param nw=32,64,128 --param ahead=2,4
  local big=(--size 1024,1024,1024 --dtype float --reps 10 --param block=16x16x1 --param nw=128 --param order=xyz,zxy)
  bench ring-r1024 --op d2xyz --variant ring --radius 1,2,4 "${big[@]}" --param my=0,1 --param vec_bytes=16
  bench ring-r1024-high --op d2xyz --variant ring --radius 6,8 "${big[@]}" --param my=1 --param vec_bytes=8
  bench ring-z1024 --op d2z --variant ring --radius 1,4,8 --size 1024,1024,1024 --dtype float --reps 10 \
    --param block=32x8x1 --param vec_bytes=16 --param ahead=4 --param nw=64,128 --param order=xyz,zxy
  bench ring-double --op d2xyz --variant ring --radius 4 --size 512,512,512 --dtype double --reps 10 \
    --param block=16x16x1 --param my=0,1 --param vec_bytes=16,8 --param nw=64,128
}

stage_prof-ring() {  # counters of the ring's best records, one file each (most wanted first)
  local common=(--variant ring --dtype float --reps 5 --param ahead=2 --param block=16x16x1 --param order=xyz)
  prof prof-ring-xyz4 --op d2xyz --radius 4 --size 512,512,512 "${common[@]}" --param my=0 --param nw=128 --param vec_bytes=16
  prof prof-ring-z8 --op d2z --variant ring --radius 8 --size 512,512,512 --dtype float --reps 5 --param ahead=4 \
    --param block=32x8x1 --param nw=128 --param order=xyz --param vec_bytes=16
  prof prof-ring-xyz6 --op d2xyz --radius 6 --size 512,512,512 "${common[@]}" --param my=1 --param nw=128 --param vec_bytes=8
  prof prof-ring-xyz4-1024 --op d2xyz --radius 4 --size 1024,1024,1024 "${common[@]}" --param my=0 --param nw=128 --param vec_bytes=16
}

# The ring without the register floor (floor=0) against with it (floor=1), in one file per size
# so each pair shares a run and its copy bandwidth. (bench/results/nvidia-h100/ring-fixed/ holds an
# earlier experiment of this session, since removed: the block's shape compiled in, fixed=1,
# against the general instance, fixed=0, with these stages' arguments.)
stage_ring-floor-test() {  # the ring and wave GPU tests, the instances without the floor among them
  timeout 300 ./build/tests/test_cuda --gtest_filter='CudaSeismic.Ring*:CudaSeismic.Bad*:WaveGpu*' \
    >/tmp/ring-floor-test.log 2>&1 || status=1
  cat /tmp/ring-floor-test.log >>"$LOG"
  grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED)|Failure" /tmp/ring-floor-test.log | tail -24
}

stage_ring-floor512() {
  bench ring-floor512 --op d2xyz --variant ring --radius 1,2,3,4,5,6,7,8 --size 512,512,512 --dtype float --reps 10 \
    --param block=16x16x1 --param floor=1,0 --param my=1,2 --param vec_bytes=16,8 --param nw=128 --param ahead=2
  bench ring-floor-z512 --op d2z --variant ring --radius 1,2,3,4,5,6,7,8 --size 512,512,512 --dtype float --reps 10 \
    --param block=32x8x1 --param floor=1,0 --param vec_bytes=16 --param nw=128 --param ahead=2,4
  bench ring-floor-double --op d2xyz --variant ring --radius 4 --size 512,512,512 --dtype double --reps 10 \
    --param block=16x16x1 --param floor=1,0 --param my=1,2 --param vec_bytes=16,8 --param nw=128
}

ncu_sections() {  # name, kernel regex, then bench arguments: Nsight Compute's own sections, one launch
  local name=$1 kernel=$2
  shift 2
  timeout 120 "$NCU" --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
    --section Occupancy --section SchedulerStats --section LaunchStats -k "regex:$kernel" --launch-skip 2 \
    --launch-count 1 $FD bench --backend cuda --size 512,512,512 --dtype float --reps 3 --warmup 1 "$@" \
    >"$OUT/ncu-$name.txt" 2>&1 || status=1
}

stage_ring-ncu() {  # issue rate, stalls, occupancy and memory of four ring launches and pipelined's
  ncu_sections ring4 xyz_ring --op d2xyz --variant ring --radius 4 --param block=8x16x1 --param my=1 --param ahead=3
  ncu_sections pipe4 xyz_pipelined --op d2xyz --variant pipelined --radius 4 --param block=8x32x1 --param nw=16
  ncu_sections ring1 xyz_ring --op d2xyz --variant ring --radius 1 --param block=16x16x1 --param ahead=3
  ncu_sections ringz4 xyz_ring --op d2z --variant ring --radius 4 --param block=32x4x1 --param vec_bytes=8 --param ahead=4
  ncu_sections ring8 xyz_ring --op d2xyz --variant ring --radius 8 --param block=8x32x1 --param ahead=2
}

stage_ring-floor1024() {  # 1024^3: the radii where floor=0 won at 512^3, and window_vec's d2z beside the ring's
  bench ring-floor1024 --op d2xyz --variant ring --radius 2,3,4,5 --size 1024,1024,1024 --dtype float --reps 10 \
    --param block=16x16x1 --param floor=1,0 --param my=0 --param vec_bytes=16 --param nw=128 --param ahead=2
  bench ring-floor-z1024 --op d2z --variant ring --radius 2,3,4,5,6,7 --size 1024,1024,1024 --dtype float \
    --reps 10 --param block=32x8x1 --param floor=1,0 --param vec_bytes=16 --param nw=128 --param ahead=4
  bench ring-floor-zwin1024 --op d2z --variant window_vec --radius 2,3,4,5,6,7 --size 1024,1024,1024 --dtype float \
    --reps 10 --param block=64x4x1 --param nw=4 --param order=zxy --param vec_bytes=16
}

stage_ring-znw1024() {  # d2z ring without the floor at 1024^3: longer chunks re-read fewer seam planes
  bench ring-znw1024 --op d2z --variant ring --radius 4,6,8 --size 1024,1024,1024 --dtype float --reps 10 \
    --param block=32x8x1 --param floor=0 --param vec_bytes=16 --param ahead=4 --param nw=128,256,512
}

stage_ring-defaults() {  # the plan's built-in choices after the floor rows: d2xyz and d2z, every R, 512^3
  # (float; double at R = 4), and the GPU tests of the seismic variants, plans and the wave step
  bench ring-defaults512 --op d2xyz,d2z --variant plan --no-cache --radius 1,2,3,4,5,6,7,8 --size 512,512,512 \
    --dtype float --reps 10
  bench ring-defaults-double --op d2xyz --variant plan --no-cache --radius 4 --size 512,512,512 --dtype double --reps 10
  timeout 300 ./build/tests/test_cuda --gtest_filter='CudaSeismic.*:*Plan*:WaveGpu*' >/tmp/ring-defaults-test.log 2>&1 ||
    status=1
  cat /tmp/ring-defaults-test.log >>"$LOG"
  grep -E "^\[ +(FAILED|PASSED|SKIPPED) |tests ran|Failure" /tmp/ring-defaults-test.log | tail -12
}

stage_ring-ncu-def() {  # the ring at its defaults (floor on and off at R = 4): stalls, issue rate, occupancy
  ncu_sections def-ring4 xyz_ring --op d2xyz --variant ring --radius 4
  ncu_sections def-ring4-nofloor xyz_ring --op d2xyz --variant ring --radius 4 --param floor=0
  ncu_sections def-ring8 xyz_ring --op d2xyz --variant ring --radius 8 --param my=1 --param vec_bytes=8
  ncu_sections def-ringz4 xyz_ring --op d2z --variant ring --radius 4 --param ahead=2
}

# ---- the Laplacian as the seismic pipelined tile at R = 1 (k9, issue 13) ---------------------------

LAP_SIZES=(--size 256,256,256 --size 512,256,256 --size 512,512,256 --size 512,512,512 --size 768,512,512
           --size 768,768,512 --size 768,768,768 --size 1024,768,768 --size 1024,1024,768 --size 1024,1024,1024)

stage_lap-k9-test() {  # the Laplacian's GPU tests, k9's shapes and windows among them
  timeout 300 ./build/tests/test_cuda --gtest_filter='CudaLaplacian.*' >/tmp/lap-k9-test.log 2>&1 || status=1
  cat /tmp/lap-k9-test.log >>"$LOG"
  grep -E "^\[ +(FAILED|PASSED|SKIPPED) |tests ran|Failure" /tmp/lap-k9-test.log | tail -12
}

stage_lap-k9-tune() {  # k9's block and planes per block at 512^3 and 1024^3, both types
  bench lap-k9-tune --op laplacian7 --variant k9 --param block=16x16x1,32x8x1,8x32x1,32x4x1 --param nw=2,4,8 \
    --size 512,512,512 --size 1024,1024,1024 --dtype double,float --reps 10
}

stage_lap-k9-tune2() {  # double wants longer marches at 1024^3 (lap-k9-tune: nw 2 -> 8 gave 69 -> 85 %)
  bench lap-k9-tune2 --op laplacian7 --variant k9 --param block=32x4x1,32x8x1,64x4x1 --param nw=8,16,32,64 \
    --size 1024,1024,1024 --dtype double --reps 10
}

# k9 at 32 x 4 (best or within a point at both sizes in lap-k9-tune), float at nw 4, double at nw 8
# and 16 (lap-k9-tune and -tune2). k7 and k8_shfl, the best before, are in prof-lap.json and
# plan-defaults.json at 512^3 and 1024^3.
stage_lap-k9-sizes() {  # 256^3 .. 1024^3
  bench lap-k9-sizes-float --op laplacian7 --variant k9 --param block=32x4x1 --param nw=4 --dtype float \
    "${LAP_SIZES[@]}" --reps 10
  bench lap-k9-sizes-double --op laplacian7 --variant k9 --param block=32x4x1 --param nw=8,16 --dtype double \
    "${LAP_SIZES[@]}" --reps 10
}

stage_lap-k9-planes() {  # the plane sweep (lap-planes' sizes): 2 to 128 MB planes of doubles
  local sizes=() ny
  for ny in 256 512 1024 2048 3072 4096 6144 8192 12288 16384; do sizes+=(--size "1024,$ny,32"); done
  bench lap-k9-planes-float --op laplacian7 --variant k9 --param block=32x4x1 --param nw=4 --dtype float \
    "${sizes[@]}" --reps 10
  bench lap-k9-planes-double --op laplacian7 --variant k9 --param block=32x4x1 --param nw=16 --dtype double \
    "${sizes[@]}" --reps 10
}

stage_lap-k9-order() {  # chunk-first launch order (zxy) against the plain one where seam planes miss L2
  bench lap-k9-order --op laplacian7 --variant k9 --param block=32x4x1 --param nw=4,16 --param order=xyz,zxy \
    --size 1024,1024,1024 --size 1024,8192,32 --dtype double,float --reps 10
}

stage_lap-k9-check() {  # after the order parameter: the Laplacian's and the pipelined kernel's GPU tests
  gpu_tests lap-k9-check 'CudaLaplacian.*:Defaults.*:CudaSeismic.EveryVariantEveryRadiusBothLayouts:CudaSeismic.BlockShapes:WaveGpu.TileAndL1DesignsAgreeOnASmallGrid' 150
}

stage_build-k9() {  # the CLI and the CUDA tests only: what the lap-k9-strips stage needs
  cmake --preset default -DFDSTENCIL_CUDA=ON >/tmp/build.log 2>&1 &&
    cmake --build --preset default --target fdstencil_cli test_cuda -j "$(nproc)" >>/tmp/build.log 2>&1 ||
    { tail -50 /tmp/build.log | tee -a "$LOG"; exit 1; }
  echo "build-k9 ok"
}

stage_lap-k9-strips() {  # the plane in strips along y (strips 0: a chunk layer in half the L2) against whole
  timeout 60 ./build/tests/test_cuda --gtest_filter='CudaLaplacian.PipelinedTile*' >/tmp/lap-k9-strips.log 2>&1 || status=1
  cat /tmp/lap-k9-strips.log >>"$LOG"
  grep -E "^\[ +(FAILED|PASSED|SKIPPED) |tests ran|Failure" /tmp/lap-k9-strips.log | tail -6
  bench lap-k9-strips-plane --op laplacian7 --variant k9 --param block=32x4x1 --param nw=4 --param strips=0,1 \
    --size 1024,8192,32 --dtype double,float --reps 10
  bench lap-k9-strips-cube --op laplacian7 --variant k9 --param block=32x4x1 --param nw=4,8 --param strips=0,1 \
    --size 1024,1024,1024 --dtype double --reps 10
}

stage_lap-k9-plan() {  # the plan's built-in choice (the defaults table) over the sizes, both types
  bench lap-k9-plan --op laplacian7 --variant plan --no-cache --dtype double,float "${LAP_SIZES[@]}" --reps 10
}

stage_prof-k9() {  # counters of k9 at its defaults (32 x 4, nw 4), 512^3, both types
  prof prof-k9 --op laplacian7 --variant k9 --size 512,512,512 --dtype double,float --reps 5
}

stage_ring-z57-1024() {  # d2z ring at 1024^3, R = 5 and 7: chunks of 512 planes against 128
  bench ring-z57-1024 --op d2z --variant ring --radius 5,7 --size 1024,1024,1024 --dtype float --reps 10 \
    --param block=32x8x1 --param floor=0 --param vec_bytes=16 --param ahead=4 --param nw=128,512
}

# k9's register caps and the cases the last session left unrun (issue 13, fifth session).
stage_lap-k9-tests() {  # k9's GPU tests (shapes, strips, grids per strip), the defaults' tests
  gpu_tests lap-k9-tests 'CudaLaplacian.PipelinedTile*:Defaults.*' 240
}

stage_lap-k9-small() {  # 256^3, float (88 % at the defaults): shapes, lengths, orders
  bench lap-k9-small --op laplacian7 --variant k9 --param block=32x4x1,32x8x1,64x4x1 --param nw=2,4,8 \
    --param order=xyz,zxy --size 256,256,256 --dtype float --reps 10
}

stage_lap-k9-planes2() {  # the plane sweep in strips (strips 0) at longer marches: nz is 32
  local sizes=() ny
  for ny in 256 512 1024 2048 3072 4096 6144 8192 12288 16384; do sizes+=(--size "1024,$ny,32"); done
  bench lap-k9-planes2-float --op laplacian7 --variant k9 --param block=32x4x1 --param nw=4,8,16,32 \
    --param strips=0 --dtype float "${sizes[@]}" --reps 10
  bench lap-k9-planes2-double --op laplacian7 --variant k9 --param block=32x4x1 --param nw=8,16,32 \
    --param strips=0 --dtype double "${sizes[@]}" --reps 10
}

stage_ring-z-1024() {  # d2z ring at 1024^3, R = 5..8: one chunk per column (nw 1024) against 512
  bench ring-z-1024 --op d2z --variant ring --radius 5,6,7,8 --size 1024,1024,1024 --dtype float --reps 10 \
    --param block=32x8x1 --param floor=0 --param vec_bytes=16 --param ahead=4 --param nw=512,1024
}

stage_seis-pipe-shapes() {  # d2xyz pipelined at R = 2..4 in k9's wide, short blocks (k9 gained at R = 1)
  bench seis-pipe-shapes --op d2xyz --variant pipelined --radius 2,3,4 --size 512,512,512 --dtype float \
    --param block=32x4x1,32x8x1,32x16x1,64x8x1 --param nw=4,8,16 --reps 10
}

stage_seis-pipe-tests() {  # pipelined's strips and orders, the block shapes, the Laplacian's tests
  gpu_tests seis-pipe-tests 'CudaSeismic.PipelinedInStripsAndOrders:CudaSeismic.BlockShapes:CudaSeismic.Refusals*:CudaLaplacian.*' 300
  SANITIZE_FILTER='CudaSeismic.PipelinedInStripsAndOrders' SANITIZE_TIMEOUT=240 stage_sanitize
}

stage_seis-pipe2() {  # around seis-pipe-shapes' best (32 x 8, nw 8): R = 2, 3 at 512^3; double R = 4
  bench seis-pipe2 --op d2xyz --variant pipelined --radius 2,3 --size 512,512,512 --dtype float \
    --param block=32x8x1,32x4x1,16x8x1,64x4x1,32x12x1 --param nw=4,6,8,12 --reps 10
  bench seis-pipe-double --op d2xyz --variant pipelined --radius 4 --size 512,512,512 --dtype double \
    --param block=32x8x1,32x4x1,16x16x1,8x32x1 --param nw=8,16 --reps 10
}

stage_seis-pipe-1024() {  # R = 2, 3 at 1024^3: whole planes, auto strips, chunk-first
  bench seis-pipe-1024 --op d2xyz --variant pipelined --radius 2,3 --size 1024,1024,1024 --dtype float \
    --param block=32x8x1,32x4x1 --param nw=4,8 --param strips=0,1 --reps 10
  bench seis-pipe-1024-zxy --op d2xyz --variant pipelined --radius 2,3 --size 1024,1024,1024 --dtype float \
    --param block=32x8x1 --param nw=4,8 --param order=zxy --reps 10
}

stage_seis-pipe3() {  # smaller blocks (seis-pipe2: 16 x 8 led at R = 2 and 3), R = 2..5, 512^3 and 1024^3
  bench seis-pipe3 --op d2xyz --variant pipelined --radius 2,3,4,5 --size 512,512,512 --dtype float \
    --param block=16x8x1,8x16x1,16x4x1,8x8x1,16x12x1 --param nw=6,8 --reps 10
  bench seis-pipe3-1024 --op d2xyz --variant pipelined --radius 2,3 --size 1024,1024,1024 --dtype float \
    --param block=16x8x1,8x16x1 --param nw=6,8 --param strips=0 --reps 10
}

stage_seis-pipe4() {  # more strips at 1024^3 (R = 2, 3); the small blocks at 256^3 (R = 2..5)
  bench seis-pipe4-1024 --op d2xyz --variant pipelined --radius 2,3 --size 1024,1024,1024 --dtype float \
    --param block=16x8x1 --param nw=4,6,8 --param strips=2,4,8 --reps 10
  bench seis-pipe4-256 --op d2xyz --variant pipelined --radius 2,3,4,5 --size 256,256,256 --dtype float \
    --param block=8x16x1,16x8x1,8x8x1 --param nw=4,6,8 --reps 10
}

stage_plan-check() {  # after the defaults took the pipelined tile at R = 2, 3 and d2z nw 1024: the tests,
  # then the plan with no cache (the built-in table) at the sizes the rows came from
  gpu_tests plan-check 'Defaults.*:CudaPlan.*:CudaSeismic.PipelinedInStripsAndOrders:CudaLaplacian.*' 300
  bench plan-check-xyz --op d2xyz --variant plan --no-cache --radius 1,2,3,4,5,6,7,8 --dtype float \
    --size 512,512,512 --size 1024,1024,1024 --reps 10
  bench plan-check-xyz256 --op d2xyz --variant plan --no-cache --radius 2,3,4,5 --dtype float \
    --size 256,256,256 --reps 10
  bench plan-check-z --op d2z --variant plan --no-cache --radius 4,5,6,7,8 --dtype float \
    --size 1024,1024,1024 --reps 10
  stage_lap-k9-plan
}

# pipelined under 64 registers (regs 64) at R = 3..5: tests, sanitizers, timing. The capped
# instances of R = 4 and 5 lost and were removed after this run, so those cases now refuse.
stage_seis-pipe-cap() {
  gpu_tests seis-pipe-cap 'CudaSeismic.Pipelined*:CudaSeismic.Refusals*:CudaSeismic.BadParametersSayWhy' 300
  SANITIZE_FILTER='CudaSeismic.PipelinedUnderARegisterCap' SANITIZE_TIMEOUT=200 stage_sanitize
  bench seis-pipe-cap --op d2xyz --variant pipelined --radius 3,4,5 --size 512,512,512 --dtype float \
    --param block=16x8x1,8x16x1 --param nw=6,8 --param regs=0,64 --reps 10
  bench seis-pipe-cap-1024 --op d2xyz --variant pipelined --radius 3,4,5 --size 1024,1024,1024 --dtype float \
    --param block=16x8x1 --param nw=6 --param strips=0 --param regs=0,64 --reps 10
  bench seis-pipe-cap-double --op d2xyz --variant pipelined --radius 3,4 --size 512,512,512 --dtype double \
    --param block=16x8x1,8x16x1 --param nw=6 --param regs=0,64 --reps 10
}

stage_plan-check2() {  # after the defaults took regs 64 at R = 3 in float: the tests and the plan
  gpu_tests plan-check2 'Defaults.*:CudaPlan.*:CudaSeismic.Pipelined*:CudaSeismic.Refusals*' 300
  SANITIZE_FILTER='CudaSeismic.PipelinedUnderARegisterCap' SANITIZE_TIMEOUT=200 stage_sanitize
  bench plan-check2 --op d2xyz --variant plan --no-cache --radius 2,3 --dtype float,double \
    --size 512,512,512 --size 1024,1024,1024 --reps 10
}

stage_cuda-tests() {  # the whole CUDA test binary (the CTest suite's GPU part without MPI and the CLI)
  timeout "${CUDA_TESTS_TIMEOUT:-420}" ./build/tests/test_cuda >/tmp/cuda-tests.log 2>&1 || status=1
  cp /tmp/cuda-tests.log "$OUT/cuda-tests.log"
  grep -E "^\[ +(FAILED|PASSED|SKIPPED) |tests ran|Failure" /tmp/cuda-tests.log | tail -15
}

stage_prof-pipe() {  # counters of pipelined R = 2, 16 x 8, nw 8: 512^3 whole, 1024^3 in strips
  prof prof-pipe512 --op d2xyz --variant pipelined --radius 2 --size 512,512,512 --dtype float \
    --param block=16x8x1 --param nw=8 --reps 5
  prof prof-pipe1024 --op d2xyz --variant pipelined --radius 2 --size 1024,1024,1024 --dtype float \
    --param block=16x8x1 --param nw=8 --param strips=0 --reps 5
}

# The z queue in shared memory (pipelined's zq, issue 13, sixth session): tests, sanitizers, then
# zq x regs at 512^3 (R = 2..8), at 1024^3 in strips and in double at R = 4.
stage_seis-zq-tests() {
  gpu_tests seis-zq-tests 'CudaSeismic.Pipelined*:CudaSeismic.BadParametersSayWhy:Defaults.*' 300
  SANITIZE_FILTER='CudaSeismic.PipelinedWithTheQueueInSharedMemory' SANITIZE_TIMEOUT=240 stage_sanitize
}

stage_seis-zq() {
  bench seis-zq --op d2xyz --variant pipelined --radius 2,3,4,5,6,7,8 --size 512,512,512 --dtype float \
    --param block=16x8x1,8x16x1 --param nw=8 --param zq=0,1,2 --param regs=0,64 --reps 10
  bench seis-zq-double --op d2xyz --variant pipelined --radius 4 --size 512,512,512 --dtype double \
    --param block=16x8x1,8x16x1 --param nw=8 --param zq=0,1,2 --param regs=0,64 --reps 10
}

stage_seis-zq-1024() {
  bench seis-zq-1024 --op d2xyz --variant pipelined --radius 3,4,5,6 --size 1024,1024,1024 --dtype float \
    --param block=16x8x1,8x16x1 --param nw=8 --param strips=0 --param zq=0,1 --param regs=0,64 --reps 10
}

# Why 1024^3 runs slower than 512^3 (issue 13, seventh session): the same kernels at shapes that
# separate the plane's bytes, its row length, the plane stride and the cube's size; then strips,
# march length and block at 1024^3; the counters of zq 1 at R = 4; the tests after the queue's
# ring moved into cuda/common/thread_ring.cuh.
stage_ring-helper-tests() {
  gpu_tests ring-helper-tests 'CudaSeismic.Pipelined*:WaveGpu*:Defaults.*' 500
}

stage_why1024() {
  local sizes=(--size 512,512,512 --size 512,512,1024 --size 256,256,2048 --size 1024,512,512
    --size 512,1024,512 --size 2048,512,512 --size 1024,1024,512 --size 1024,1024,1024)
  bench why1024-r4 --op d2xyz --variant pipelined --radius 4 "${sizes[@]}" --dtype float \
    --param block=8x16x1 --param nw=8 --param zq=1 --param strips=0,1 --reps 10
  bench why1024-r2 --op d2xyz --variant pipelined --radius 2 "${sizes[@]}" --dtype float \
    --param block=8x16x1 --param nw=8 --param strips=0,1 --reps 10
}

stage_strips1024() {
  bench strips1024 --op d2xyz --variant pipelined --radius 4 --size 1024,1024,1024 --dtype float \
    --param block=8x16x1,8x32x1,16x16x1 --param nw=8,16 --param zq=1 --param strips=0,2,8,16 --reps 10
}

stage_prof-zq() {
  prof prof-zq512 --op d2xyz --variant pipelined --radius 4 --size 512,512,512 --dtype float \
    --param block=8x16x1 --param nw=8 --param zq=1 --param strips=1 --reps 5
  prof prof-zq1024 --op d2xyz --variant pipelined --radius 4 --size 1024,1024,1024 --dtype float \
    --param block=8x16x1 --param nw=8 --param zq=1 --param strips=0 --reps 5
}

# pipelined's `my` 2 (xyz_pipelined_rows: two rows a thread): the tests, the sanitizers over its
# test, then my x zq x block at 512^3 (R = 1..4, float; R = 1 and 4 in double).
stage_my-tests() {
  gpu_tests my-tests 'CudaSeismic.Pipelined*:WaveGpu*:Defaults.*' 500
  SANITIZE_FILTER='CudaSeismic.PipelinedTwoRowsAThread' SANITIZE_TIMEOUT=150 stage_sanitize
}

stage_seis-my() {
  bench seis-my1 --op d2xyz --variant pipelined --radius 1 --size 512,512,512 --dtype float,double \
    --param block=8x16x1,16x8x1,32x4x1 --param nw=4,8 --param my=1,2 --reps 10
  bench seis-my --op d2xyz --variant pipelined --radius 2,3,4 --size 512,512,512 --dtype float \
    --param block=8x16x1,16x8x1 --param nw=8 --param zq=0,1 --param my=1,2 --reps 10
  bench seis-my-double --op d2xyz --variant pipelined --radius 4 --size 512,512,512 --dtype double \
    --param block=8x16x1,16x8x1 --param nw=8 --param zq=1 --param my=1,2 --reps 10
}

# my 2 in the Laplacian's k9 and at 1024^3 (issue 13, seventh session): the tests and the
# sanitizers over k9's, then k9 at my 1 and 2 over the sizes and the plane sweep (strips 0, nw 4),
# and d2xyz where my 2 or the ring's new registers (R = 3 zq 1: 56) won at 512^3.
stage_lap-my-tests() {
  gpu_tests lap-my-tests 'CudaLaplacian.*:CudaSeismic.Pipelined*:Defaults.*:CudaPlan.*' 500
  SANITIZE_FILTER='CudaLaplacian.PipelinedTileTwoRowsAThread' SANITIZE_TIMEOUT=150 stage_sanitize
}

stage_lap-my() {
  local planes=() ny
  for ny in 256 512 1024 2048 3072 4096 6144 8192 12288 16384; do planes+=(--size "1024,$ny,32"); done
  bench lap-my-sizes --op laplacian7 --variant k9 --param block=32x4x1 --param nw=4 --param strips=0 \
    --param my=1,2 --dtype double,float "${LAP_SIZES[@]}" --reps 10
  bench lap-my-planes --op laplacian7 --variant k9 --param block=32x4x1 --param nw=4 --param strips=0 \
    --param my=1,2 --dtype double,float "${planes[@]}" --reps 10
}

stage_seis-my-1024() {
  bench seis-my-1024 --op d2xyz --variant pipelined --radius 1 --size 1024,1024,1024 --dtype double \
    --param block=16x8x1,32x4x1 --param nw=4,8 --param my=1,2 --param strips=0 --reps 10
  bench seis-zq3-1024 --op d2xyz --variant pipelined --radius 3 --size 512,512,512 --size 1024,1024,1024 \
    --dtype float --param block=8x16x1,16x8x1 --param nw=6,8 --param zq=1 --param strips=0,1 --reps 10
}

# After the defaults took my 2 (Laplacian and d2xyz R = 1 in double) and zq 1 (d2xyz R = 3 in
# float): the tests, the plan over the Laplacian's sizes (double), d2xyz's new rows beside the
# old R = 3 choice in the same call, and the counters of k9 at my 2.
stage_plan-check4() {
  gpu_tests plan-check4 'Defaults.*:CudaPlan.*:CudaLaplacian.Pipelined*' 300
  bench plan-check4-lap --op laplacian7 --variant plan --no-cache --dtype double "${LAP_SIZES[@]}" --reps 10
  bench plan-check4-xyz --op d2xyz --variant plan --no-cache --radius 1 --dtype double --size 512,512,512 \
    --size 1024,1024,1024 --reps 10
  bench plan-check4-r3 --op d2xyz --variant plan --no-cache --radius 3 --dtype float --size 512,512,512 \
    --size 1024,1024,1024 --reps 10
  bench plan-check4-r3-old --op d2xyz --variant pipelined --radius 3 --dtype float --size 512,512,512 \
    --param block=16x8x1 --param nw=8 --param regs=64 --reps 10
  bench plan-check4-r3-old1024 --op d2xyz --variant pipelined --radius 3 --dtype float --size 1024,1024,1024 \
    --param block=16x8x1 --param nw=6 --param regs=64 --param strips=0 --reps 10
  prof prof-k9-my --op laplacian7 --variant k9 --param my=1,2 --size 512,512,512 --size 1024,1024,1024 \
    --dtype double --reps 5
}

stage_build-tma() {  # the CLI and the CUDA tests only: what the tma stages need
  nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv | tee -a "$LOG"
  cmake --preset default -DFDSTENCIL_CUDA=ON >/tmp/build.log 2>&1 &&
    cmake --build --preset default --target fdstencil_cli test_cuda -j "$(nproc)" >>/tmp/build.log 2>&1 ||
    { tail -50 /tmp/build.log | tee -a "$LOG"; exit 1; }
  echo "build-tma ok"
}

stage_tma-tests() {
  gpu_tests tma-tests 'CudaSeismic.TmaTileRing:CudaSeismic.RegistryHoldsEveryFamily:CudaSeismic.RefusalsAreExactlyTheDesignedOnes' 240
  SANITIZE_FILTER='CudaSeismic.TmaTileRing' SANITIZE_TIMEOUT=200 stage_sanitize
}

stage_tma-r4() {
  bench tma-r4 --op d2xyz --variant tma --radius 4 --size 512,512,512 --dtype float \
    --param block=8x16x1,16x8x1,16x16x1,32x8x1 --param nw=8,16 --param ahead=1,2,3 --param zq=0,1 --reps 10
  bench tma-r4-plan --op d2xyz --variant plan --no-cache --radius 4 --size 512,512,512 --dtype float --reps 10
}

stage_tma-r4b() {
  bench tma-r4b --op d2xyz --variant tma --radius 4 --size 512,512,512 --dtype float \
    --param block=16x16x1,16x32x1,32x16x1,8x32x1 --param nw=16,32,64 --param ahead=2 --param regs=0,64 --reps 10
}

stage_tma-ncu() {
  ncu_sections tma4 xyz_tma --op d2xyz --variant tma --radius 4 --param block=16x16x1 --param nw=16 --param ahead=3
  ncu_sections pipe4zq xyz_pipelined --op d2xyz --variant pipelined --radius 4 --param block=8x16x1 --param nw=8 \
    --param zq=1
  prof tma-prof4 --op d2xyz --variant tma --radius 4 --size 512,512,512 --dtype float --param block=16x16x1 \
    --param nw=16 --param ahead=3 --reps 5
  prof tma-prof4-plan --op d2xyz --variant plan --no-cache --radius 4 --size 512,512,512 --dtype float --reps 5
}

stage_tma-radii() {
  bench tma-radii --op d2xyz --variant tma --radius "${TMA_RADII:-1,2,3,5,6,7,8}" --size 512,512,512 --dtype float \
    --param block="${TMA_BLOCKS:-8x16x1,16x16x1,8x32x1,16x32x1}" --param nw="${TMA_NW:-16}" \
    --param ahead="${TMA_AHEAD:-1,2}" --reps 10
  bench tma-radii-plan --op d2xyz --variant plan --no-cache --radius 1,2,3,4,5,6,7,8 --size 512,512,512 --dtype float --reps 10
}

stage_tma-1024() {
  bench tma-1024 --op d2xyz --variant tma --radius "${TMA_RADII:-4,5,6,7,8}" --size 1024,1024,1024 --dtype float \
    --param block="${TMA_BLOCKS:-8x16x1,16x16x1}" --param nw="${TMA_NW:-16}" --param ahead="${TMA_AHEAD:-2}" \
    --param strips=0,1 --reps 10
  bench tma-1024-cap --op d2xyz --variant tma --radius 4 --size 1024,1024,1024 --dtype float \
    --param block=16x32x1 --param nw=16 --param ahead=2 --param regs=64 --param strips=0,1 --reps 10
  bench tma-1024-plan --op d2xyz --variant plan --no-cache --radius "${TMA_RADII:-4,5,6,7,8}" --size 1024,1024,1024 \
    --dtype float --reps 10
}

stage_tma-double() {
  bench tma-double --op d2xyz --variant tma --radius 4 --size 512,512,512 --size 1024,1024,1024 --dtype double \
    --param block="${TMA_BLOCKS:-8x16x1,16x16x1,8x32x1,16x32x1}" --param nw=16 --param ahead="${TMA_AHEAD:-1,2}" \
    --param strips=0 --reps 10
  bench tma-double-cap --op d2xyz --variant tma --radius 4 --size 512,512,512 --size 1024,1024,1024 --dtype double \
    --param block=16x16x1,16x32x1,32x16x1 --param nw=16 --param ahead=1,2 --param regs=64 --param strips=0 --reps 10
  bench tma-double-plan --op d2xyz --variant plan --no-cache --radius 4 --size 512,512,512 --size 1024,1024,1024 \
    --dtype double --reps 10
}

stage_tma-caps() {
  bench tma-caps512 --op d2xyz --variant tma --radius 5 --size 512,512,512 --dtype float \
    --param block=8x16x1,16x16x1 --param nw=16 --param ahead=2 --param regs=0,80 --reps 10
  bench tma-caps512-67 --op d2xyz --variant tma --radius 6,7 --size 512,512,512 --dtype float \
    --param block=8x16x1,16x16x1 --param nw=16 --param ahead=1,2 --param regs=0,96 --reps 10
  bench tma-caps1024 --op d2xyz --variant tma --radius 5 --size 1024,1024,1024 --dtype float \
    --param block=8x16x1,16x16x1 --param nw=16 --param ahead=2 --param regs=0,80 --param strips=0 --reps 10
  bench tma-caps1024-67 --op d2xyz --variant tma --radius 6,7 --size 1024,1024,1024 --dtype float \
    --param block=8x16x1,16x16x1 --param nw=16 --param ahead=2 --param regs=0,96 --param strips=0 --reps 10
  bench tma-caps-double --op d2xyz --variant tma --radius 4 --size 512,512,512 --size 1024,1024,1024 --dtype double \
    --param block=8x16x1,16x16x1 --param nw=16 --param ahead=2 --param regs=0,80 --param strips=0 --reps 10
}

stage_tma-plan-check2() {
  bench tma-plan-check2 --op d2xyz --variant plan --no-cache --radius 4,5,6,7,8 --size 512,512,512 \
    --size 1024,1024,1024 --dtype float --reps 10
  bench tma-plan-check2-double --op d2xyz --variant plan --no-cache --radius 4 --size 512,512,512 \
    --size 1024,1024,1024 --dtype double --reps 10
  prof tma-prof-caps --op d2xyz --variant plan --no-cache --radius 5,6 --size 512,512,512 --dtype float --reps 5
}

stage_tma-final() {
  bench tma-final --op d2xyz --variant plan --no-cache --radius 4,5,6,7,8 --size 512,512,512 \
    --size 1024,1024,1024 --dtype float --reps 10
  bench tma-final-double --op d2xyz --variant plan --no-cache --radius 4 --size 512,512,512 \
    --size 1024,1024,1024 --dtype double --reps 10
}

stage_tma-generic-tests() {
  gpu_tests tma-generic-tests 'CudaSeismic.*:Defaults.*:CudaPlan.*-CudaSeismic.Ring*:CudaSeismic.Pipelined*' 420
}

stage_tma-plan-check() {
  bench tma-plan-check --op d2xyz --variant plan --no-cache --radius 4,5,6,7,8 --size 512,512,512 \
    --size 1024,1024,1024 --dtype float --reps 10
  bench tma-plan-check-double --op d2xyz --variant plan --no-cache --radius 4 --size 512,512,512 \
    --size 1024,1024,1024 --dtype double --reps 10
  prof tma-prof-defaults --op d2xyz --variant plan --no-cache --radius 5,6,8 --size 512,512,512 --dtype float --reps 5
  prof tma-prof-double --op d2xyz --variant plan --no-cache --radius 4 --size 1024,1024,1024 --dtype double --reps 5
}

# After x_from_tile_row and start_halo_copies (tile.cuh) took the code xy_from_tile and both
# pipelined marches wrote out: the seismic, Laplacian and wave GPU tests.
stage_tile-helpers-tests() {
  gpu_tests tile-helpers-tests 'CudaSeismic.EveryVariantEveryRadiusBothLayouts:CudaSeismic.Pipelined*:CudaSeismic.BlockShapes:CudaLaplacian.Pipelined*:Defaults.*:WaveGpu*' 380
}

stage_sanitize-k9() {  # k9's strips under memcheck and racecheck
  SANITIZE_FILTER='CudaLaplacian.PipelinedTileInStrips' \
    SANITIZE_TIMEOUT=200 stage_sanitize
}

# ---- the library (issue 10) ---------------------------------------------------------------------

DEVICE_DIR=bench/results/nvidia-h100
CACHE=$OUT/tuning-cache.json
TUNE_OPS=d2x,d2y,d2z,d2xy,d2xyz

stage_build-cli() {
  nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv | tee -a "$LOG"
  cmake --preset default -DFDSTENCIL_CUDA=ON >/tmp/build.log 2>&1 &&
    cmake --build --preset default --target fdstencil_cli -j "$(nproc)" >>/tmp/build.log 2>&1 ||
    { tail -50 /tmp/build.log | tee -a "$LOG"; exit 1; }
  $FD info >>"$LOG"
  echo "build-cli ok"
}

cache_start() {
  if [ ! -f "$CACHE" ] && [ -f "$DEVICE_DIR/tuning-cache.json" ]; then cp "$DEVICE_DIR/tuning-cache.json" "$CACHE"; fi
}

# Merges the JSON files given after the output name ({"cases": [...]} or {"records": [...]}).
merge_json() {
  python3 - "$@" <<'PY'
import json, sys
out, docs = sys.argv[1], [json.load(open(f)) for f in sys.argv[2:]]
key = "cases" if "cases" in docs[0] else "records"
merged = dict(docs[0])
merged[key] = [x for d in docs for x in d.get(key, [])]
if key == "records" and all("copy_gbps" in d for d in docs):
    merged["copy_gbps_runs"] = [d["copy_gbps"] for d in docs]
json.dump(merged, open(out, "w"), indent=1)
PY
}

tune_size() {  # name, size (NX,NY,NZ), radii
  local name=$1 size=$2 radii=$3 t0=$SECONDS
  cache_start
  $FD tune --cache "$CACHE" --json /tmp/$name-seis.json --op $TUNE_OPS --radius "$radii" --size "$size" \
    2>>"$LOG" | tee -a "$LOG"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  local files=(/tmp/$name-seis.json)
  if [ "${4:-lap}" = lap ]; then
    $FD tune --cache "$CACHE" --json /tmp/$name-lap.json --op laplacian7 --size "$size" --dtype float,double \
      2>>"$LOG" | tee -a "$LOG"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    files+=(/tmp/$name-lap.json)
  fi
  merge_json "$OUT/$name.json" "${files[@]}"
  echo "$name: $((SECONDS - t0)) s" | tee -a "$LOG"
}

stage_tune256() { tune_size tune-256 256,256,256 1,4,8; }
stage_tune512() { tune_size tune-512 512,512,512 1,4,8; }
stage_tune1024a() { tune_size tune-1024a 1024,1024,1024 1,4 nolap; }
stage_tune1024b() { tune_size tune-1024b 1024,1024,1024 8; }
# Sizes the defaults table was not tuned at, to see how its size classes carry over.
stage_tune768() { tune_size tune-768 768,768,768 1,4,8; }
stage_tune-odd() { tune_size tune-odd 1000,600,300 1,4,8; }
# The tuner seeded with every defaults row (not only the size class's), into a scratch cache so
# the committed one stays what plan-tuned measured.
stage_tune-seeded() { CACHE=/tmp/scratch-cache.json tune_size tune-seeded 1000,600,300 1,4,8 nolap; }

PLAN_SIZES=(--size 512,512,512 --size 1024,1024,1024)
plan_bench() {  # name, then the plan flags
  local name=$1 t0=$SECONDS
  shift
  cache_start
  bench_to /tmp/$name-seis.json --op $TUNE_OPS --radius 1,4,8 "${PLAN_SIZES[@]}" --cache "$CACHE" --reps 20 "$@"
  bench_to /tmp/$name-lap.json --op laplacian7 "${PLAN_SIZES[@]}" --cache "$CACHE" --reps 20 "$@"
  merge_json "$OUT/$name.json" /tmp/$name-seis.json /tmp/$name-lap.json
  echo "$name: $((SECONDS - t0)) s" | tee -a "$LOG"
}
bench_to() {  # file, then bench arguments
  local file=$1
  shift
  $FD bench --backend cuda "$@" --json "$file" 2>>"$LOG" | tee -a "$LOG"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
}

stage_plan-tuned() { plan_bench plan-tuned --tuned; }
# The defaults at the tuned sizes and at the two it was not tuned at (tune768, tune-odd).
stage_plan-defaults() {
  PLAN_SIZES+=(--size 768,768,768 --size 1000,600,300)
  plan_bench plan-defaults --no-cache --variant plan
}
# 1000 x 600 x 300 alone, after the size classes went from points to plane bytes.
stage_plan-defaults-odd() {
  PLAN_SIZES=(--size 1000,600,300)
  plan_bench plan-defaults-odd --no-cache --variant plan
}

stage_overhead() {
  bench_to /tmp/overhead-seis.json --overhead --op $TUNE_OPS --radius 1,4,8 --size 64,64,64 --no-cache
  bench_to /tmp/overhead-lap.json --overhead --op laplacian7 --size 64,64,64 --no-cache
  merge_json "$OUT/overhead.json" /tmp/overhead-seis.json /tmp/overhead-lap.json
}

stage_consumer() {  # scripts/check-install.sh on the CUDA build: install, then examples/consumer
  bash scripts/check-install.sh default 2>&1 | tee -a "$LOG"
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "consumer FAILED"; status=1; }
}

stage_quickstart() {
  local t0=$SECONDS
  local rc=0
  bash scripts/quickstart.sh >/tmp/quickstart.log 2>&1 || rc=$?
  [ $rc -eq 0 ] || status=1
  cat /tmp/quickstart.log >>"$LOG"
  grep -E "^install-deps|^fdstencil|^gpu|^#|^op |plan:" /tmp/quickstart.log | tail -40
  echo "quickstart: $((SECONDS - t0)) s, exit $rc"
}

# --- the wave solver ------------------------------------------------------------------------------
stage_wave-test() {
  ctest --preset default -j 4 -R "[Ww]ave" >/tmp/wave-test.log 2>&1 || status=1
  cat /tmp/wave-test.log >>"$LOG"
  ./build/tests/test_cuda --gtest_filter='*Wave*' >>"$LOG" 2>&1 || status=1
  grep -E "measured|misfit|max diff|relative" "$LOG" | tail -40
  tail -6 /tmp/wave-test.log
}

# One GPU run of fdstencil wave into /tmp/wave/<name>, its summary printed: name, then options.
wave_run() {
  local name=$1
  shift
  rm -rf "/tmp/wave/$name"
  mkdir -p /tmp/wave
  $FD wave --backend cuda --quiet --output "/tmp/wave/$name" "$@" 2>>"$LOG" || { echo "wave $name FAILED"; status=1; return; }
  python3 - "/tmp/wave/$name/summary.json" "$name" <<'PY' | tee -a "$LOG"
import json, sys
s = json.load(open(sys.argv[1])); t = s["timing"]
print(f'{sys.argv[2]:28s} {t["gpts"]:7.1f} GPts/s  {t["percent_of_bound"]:5.1f} % of {t["bound_gpts"]:.1f} '
      f'(copy {t["copy_gbps"]:.0f} GB/s)  {s.get("bytes_per_grid_point", 0):.1f} B/pt  {s["kernel"]}')
PY
}

# A constant 2000 m/s cube of computational extent n (model n - 2 cpml) and a Ricker at its centre.
cube() {  # n radius cpml steps [more options]
  local n=$1 r=$2 w=$3 steps=$4
  shift 4
  local m=$((n - 2 * w)) c
  c=$(( (m / 2) * 10 ))
  echo --constant 2000 --shape $m,$m,$m --spacing 10 --radius "$r" --cpml "$w" --steps "$steps" \
    --source "$c,$c,$c" --ricker 8 --no-final "$@"
}

pack() {  # the stage's run directories, less their wavefields, into $OUT/<name>.tar
  # (the snapshots and final fields of wave-verify made a tar past the device tool's 16 MiB)
  tar -C /tmp/wave --exclude='snapshot_*.npy' --exclude='final.npy' -cf "$OUT/$1.tar" . && rm -rf /tmp/wave
}

# The fastest shape per radius among the cfg-* runs, for wave-perf in the same call.
wave_best() {
  python3 - /tmp/wave /tmp/wave-best.json <<'PY' | tee -a "$LOG"
import glob, json, os, sys
best = {}
for f in glob.glob(os.path.join(sys.argv[1], "cfg-*", "summary.json")):
    s = json.load(open(f)); r = str(s["radius"]); g = s["timing"]["gpts"]
    if r not in best or g > best[r][0]:
        best[r] = (g, s["kernel"])
params = {}
for r, (g, k) in sorted(best.items()):
    w = dict(x.split("=") for x in k.split() if "=" in x)
    bx, by = w["block"].split("x")
    params[r] = {"block": w["block"], "vec": int(w["vec"]), "nw": int(w["nw"]), "design": w.get("design", "l1")}
    for key in ("zq", "split", "ahead"):
        if key in w:
            params[r][key] = int(w[key])
    if "boundary" in w:
        params[r]["boundary"] = w["boundary"]
    print(f"best R={r}: {g:.1f} GPts/s {params[r]}")
json.dump(params, open(sys.argv[2], "w"))
PY
}

stage_wave-configs() {
  local r p
  for r in 1 2 4 8; do
    # The l1 shapes name their design: the default at R = 1, 2 (small planes) and 8 is the tile.
    for p in '{"design":"l1","block":"32x4","vec":4,"nw":32}' '{"design":"l1","block":"32x4","vec":2,"nw":32}' \
             '{"design":"l1","block":"64x2","vec":4,"nw":32}' '{"design":"l1","block":"16x16","vec":2,"nw":32}' \
             '{"design":"l1","block":"32x8","vec":2,"nw":16}' \
             ${WAVE_TILE_SHAPES-'{"design":"tile","block":"32x4","nw":32}' '{"design":"tile","block":"32x8","nw":32}' \
             '{"design":"tile","block":"16x8","nw":32}' '{"design":"tile","block":"16x16","nw":32}' \
             '{"design":"tile","block":"64x4","nw":32}' '{"design":"tile","block":"32x8","nw":64}'}; do
      wave_run "cfg-r$r-$(echo "$p" | tr -dc '0-9x')$(case $p in *tile*) echo -tile;; esac)" $(cube 512 "$r" 0 60) --kernel-params "$p"
    done
  done
  wave_best
  pack wave-configs
}

# The launch shape wave-configs found fastest for radius $1 (none: the built-in default).
best_params() {
  [ -f /tmp/wave-best.json ] || return 0
  python3 -c "import json,sys; p=json.load(open('/tmp/wave-best.json')).get('$1'); print('--kernel-params', json.dumps(p, separators=(',',':'))) if p else None"
}

stage_wave-perf() {  # WAVE_PERF_SIZES / WAVE_PERF_RADII narrow it (a rerun's runs join the earlier ones)
  local n r
  for n in ${WAVE_PERF_SIZES:-256 512 1024}; do
    for r in ${WAVE_PERF_RADII:-1 2 4 8}; do
      wave_run "perf-$n-r$r-cpml0" $(cube "$n" "$r" 0 $((n == 1024 ? 60 : 200))) $(best_params $r)
      wave_run "perf-$n-r$r-cpml20" $(cube "$n" "$r" 20 $((n == 1024 ? 60 : 200))) $(best_params $r)
    done
  done
  pack wave-perf
}

# After the step became two kernels (interior box and boundary blocks) and the tile design took
# the queue's ring (zq): the wave GPU tests, the small design test under the sanitizers, then
# launch shapes at 512^3 without CPML, R = 1, 2, 4, 8, the fastest kept for wave-perf.
stage_wave-split-test() {
  gpu_tests wave-split-test 'WaveGpu*' 500
  SANITIZE_FILTER=WaveGpu.TileAndL1DesignsAgreeOnASmallGrid SANITIZE_TIMEOUT=240 stage_sanitize
}

stage_wave-gpu-tests() { gpu_tests wave-gpu-tests 'WaveGpu*' 400; }

stage_wave-configs2() {
  local r p
  for r in 1 2 4 8; do
    # (The l1 shapes without a design failed at R = 8, whose default is the tile: the call's log.)
    for p in '{"design":"l1","block":"32x4","vec":4,"nw":32}' '{"design":"l1","block":"32x4","vec":2,"nw":32}' \
             '{"design":"l1","block":"16x16","vec":2,"nw":32}' '{"design":"l1","block":"32x8","vec":2,"nw":16}' \
             '{"design":"tile","block":"16x8","nw":32}' \
             '{"design":"tile","block":"16x8","nw":32,"zq":1}' '{"design":"tile","block":"8x16","nw":8,"zq":1}' \
             '{"design":"tile","block":"32x4","nw":32,"zq":1}'; do
      case $p in *zq*) [ "$r" -eq 1 ] && continue ;; esac
      wave_run "cfg-r$r-$(echo "$p" | sed 's/"zq":1/zq/' | tr -dc '0-9xzq')$(case $p in *tile*) echo -tile;; esac)" \
        $(cube 512 "$r" 0 60) --kernel-params "$p"
    done
  done
  wave_best
  pack wave-configs2
}

# One kernel against two (split) in the same call, and the tile's zq, R = 1, 2, 4, 8, 512^3 without
# CPML; the fastest per R kept for wave-perf in the same call.
stage_wave-configs3() {
  local r p
  for r in 1 2 4 8; do
    case $r in
      1) set -- '{"design":"l1","block":"32x8","vec":2,"nw":16,"split":0}' '{"design":"l1","block":"32x8","vec":2,"nw":16,"split":1}' \
           '{"design":"tile","block":"8x16","nw":8,"split":1}' ;;
      2) set -- '{"design":"l1","block":"32x8","vec":2,"nw":16,"split":0}' '{"design":"tile","block":"8x16","nw":8,"zq":1,"split":0}' \
           '{"design":"tile","block":"8x16","nw":8,"zq":1,"split":1}' '{"design":"tile","block":"16x8","nw":8,"zq":1,"split":1}' ;;
      4) set -- '{"design":"l1","block":"32x4","vec":4,"nw":32,"split":0}' '{"design":"l1","block":"32x4","vec":4,"nw":32,"split":1}' \
           '{"design":"tile","block":"8x16","nw":8,"zq":1,"split":1}' '{"design":"tile","block":"8x16","nw":16,"zq":1,"split":1}' \
           '{"design":"tile","block":"16x8","nw":8,"split":1}' ;;
      8) set -- '{"design":"tile","block":"16x8","nw":32,"split":0}' '{"design":"tile","block":"16x8","nw":32,"split":1}' \
           '{"design":"tile","block":"16x8","nw":32,"zq":1,"split":1}' '{"design":"tile","block":"8x16","nw":16,"split":1}' \
           '{"design":"l1","block":"32x4","vec":2,"nw":32,"split":0}' ;;
    esac
    for p in "$@"; do
      wave_run "cfg-r$r-$(echo "$p" | sed 's/"zq":1/zq/; s/"split":\([01]\)/s\1/' | tr -dc '0-9xzqs')$(case $p in *tile*) echo -tile;; esac)" \
        $(cube 512 "$r" 0 60) --kernel-params "$p"
    done
  done
  wave_best
  pack wave-configs3
}

# At 1024^3 the tile at nw 8 fell behind the earlier l1 figures at R = 1 and 2: both designs and
# longer chunks in one call (1024^3, no CPML).
stage_wave-big() {
  local p
  for p in '1 {"design":"l1","block":"32x8","vec":2,"nw":16,"split":0}' '1 {"design":"tile","block":"8x16","nw":32,"split":1}' \
           '2 {"design":"tile","block":"8x16","nw":8,"zq":1,"split":1}' '2 {"design":"l1","block":"16x16","vec":2,"nw":32,"split":0}' \
           '2 {"design":"tile","block":"8x16","nw":32,"zq":1,"split":1}'; do
    wave_run "big-r${p%% *}-$(echo "${p#* }" | sed 's/"zq":1/zq/; s/"split":\([01]\)/s\1/' | tr -dc '0-9xzqs')" \
      $(cube 1024 "${p%% *}" 0 60) --kernel-params "${p#* }"
  done
  pack wave-big
}

# The step's tma design (issue 13, ninth session).
stage_wave-tma-test() {
  gpu_tests wave-tma-test 'WaveGpu*:CudaSeismic.TmaTileRing:CudaSeismic.RegistryHoldsEveryFamily:CudaSeismic.RefusalsAreExactlyTheDesignedOnes' 600
  SANITIZE_FILTER='WaveGpu.TileAndL1DesignsAgreeOnASmallGrid:CudaSeismic.TmaTileRing' SANITIZE_TIMEOUT=300 stage_sanitize
}

# Shapes of the tma design, each radius beside its default in the same call (512^3, no CPML, 60
# steps); WAVE_TMA_RADII narrows it.
wave_tma_shapes() {  # size, then radii
  local n=$1 r p
  shift
  for r in "$@"; do
    wave_run "tma$n-r$r-default" $(cube "$n" "$r" 0 60)
    for p in ${WAVE_TMA_SHAPES:-'{"design":"tma","block":"16x16","nw":16,"ahead":2}' '{"design":"tma","block":"8x16","nw":16,"ahead":2}' \
             '{"design":"tma","block":"16x8","nw":16,"ahead":2}' '{"design":"tma","block":"8x16","nw":32,"ahead":1}' \
             '{"design":"tma","block":"16x16","nw":32,"ahead":1}' '{"design":"tma","block":"32x8","nw":16,"ahead":2}'}; do
      wave_run "tma$n-r$r-$(echo "$p" | sed 's/"design":"tma",//' | tr -dc '0-9x,')" $(cube "$n" "$r" 0 60) --kernel-params "$p"
    done
  done
}

stage_wave-tma-configs() {
  wave_tma_shapes 512 ${WAVE_TMA_RADII:-4 5 6 8}
  pack wave-tma-configs
}

stage_wave-tma-1024() {
  wave_tma_shapes 1024 ${WAVE_TMA_RADII:-4 8}
  pack wave-tma-1024
}

# The defaults at R = 5, 6, 7 (tma, whose GPU tests ran at R = 1, 4 and 8 then) on wave-verify's 3D
# geometry against the analytic solution, and their final field against the l1 march's.
stage_wave-verify-tma() {
  local r
  for r in ${WAVE_VERIFY_RADII:-5 6 7}; do
    for p in '{}' '{"design":"l1"}'; do
      wave_run "verify3d-r$r-$([ "$p" = '{}' ] && echo default || echo l1)" --constant 2000 --shape 161,161,161 \
        --spacing 5 --radius $r --cpml 20 --time 0.35 --cfl-safety 0.4 --source 400,400,400 --ricker 20 \
        --receiver-line "400,400,500:400,400,700:5" --compare-analytic --kernel-params "$p"
    done
    python3 -c "import numpy as np, json; a, b = (np.load(f'/tmp/wave/verify3d-r$r-{d}/final.npy') for d in ('default', 'l1')); \
s = json.load(open('/tmp/wave/verify3d-r$r-default/summary.json')); \
print('R = $r: misfit', s['analytic']['misfit'], '; points differing from l1:', int((a != b).sum()), 'of', a.size)" | tee -a "$LOG"
  done
  pack wave-verify-tma
}

stage_wave-tma-cpml() {
  local r p
  for r in ${WAVE_TMA_RADII:-4 5 6 7 8}; do
    wave_run "cpml-r$r-default" $(cube 512 "$r" 20 60)
    case $r in
      8) set -- '{"design":"tile","block":"8x16","nw":16,"split":1}' ;;
      *) set -- '{"design":"l1","block":"32x4","vec":'$([ "$r" -le 4 ] && echo 4 || echo 2)',"nw":32}' ;;
    esac
    for p in "$@" '{"design":"tma","block":"16x16","nw":16,"boundary":"tile"}' '{"design":"tma","block":"8x16","nw":16,"boundary":"tile"}' \
             '{"design":"tma","block":"8x16","nw":16,"boundary":"l1"}' '{"design":"tma","block":"16x16","nw":16,"boundary":"l1"}'; do
      wave_run "cpml-r$r-$(echo "$p" | sed 's/"design":"\([a-z0-9]*\)",/\1-/; s/"boundary":"\([a-z0-9]*\)"/b\1/' | tr -dc 'a-z0-9x,-')" \
        $(cube 512 "$r" 20 60) --kernel-params "$p"
    done
  done
  pack wave-tma-cpml
}

stage_tma-ring-check() {
  bench tma-ring-check --op d2xyz --variant plan --no-cache --radius 5,6,7,8 --size 512,512,512 \
    --size 1024,1024,1024 --dtype float --reps 10
  bench tma-ring-check-double --op d2xyz --variant plan --no-cache --radius 4 --size 512,512,512 \
    --size 1024,1024,1024 --dtype double --reps 10
}

stage_wave-gpu-tests() {  # every wave GPU test (after the defaults changed)
  gpu_tests wave-gpu-tests 'WaveGpu.*' 420
}

stage_wave-cfg-tests() {  # and bench --same-size-copy's CLI tests (test_cli, built here)
  gpu_tests wave-cfg-tests 'WaveGpu.AHandBuilt*:WaveGpu.BadKernelParameters*:WaveGpu.ZqAndSplit*:WaveGpu.Defaults*' 120
  cmake --build --preset default --target test_cli -j "$(nproc)" >>/tmp/build.log 2>&1 || { tail -30 /tmp/build.log | tee -a "$LOG"; status=1; return; }
  timeout 120 ./build/tests/test_cli --gtest_filter='Cli.BenchSameSize*:Cli.BadInput*:Cli.BenchPlanRows*' >/tmp/cli.log 2>&1 || status=1
  cat /tmp/cli.log >>"$LOG"
  grep -E "^\[ +(FAILED|PASSED|SKIPPED) |tests ran|Failure" /tmp/cli.log | tail -8
}

wave_shapes() {  # name prefix, size, radius, steps, then kernel-parameter sets ('{}' the default)
  local pre=$1 n=$2 r=$3 steps=$4 p
  shift 4
  for p in "$@"; do
    wave_run "$pre-r$r-$([ "$p" = '{}' ] && echo default || echo "$p" | sed 's/"design":"\([a-z0-9]*\)",*/\1-/' | tr -dc 'a-z0-9x,-')" \
      $(cube "$n" "$r" 0 "$steps") --kernel-params "$p"
  done
}

stage_wave-small() {
  local r
  for r in ${WAVE_SMALL_RADII:-3 4 5 6 7 8}; do
    wave_shapes small256 256 "$r" 200 '{}' '{"design":"l1"}' '{"design":"tile","block":"8x16","nw":8,"split":1}' \
      '{"design":"tma","block":"16x16","nw":16}' '{"design":"tma","block":"8x16","nw":16}' \
      '{"design":"tma","block":"16x16","nw":8}' '{"design":"tma","block":"8x16","nw":8}'
  done
  wave_shapes small384 384 4 200 '{}' '{"design":"l1"}' '{"design":"tma","block":"8x16","nw":8}'
  pack wave-small
}

stage_wave-long() {
  wave_shapes long1024 1024 4 60 '{}' '{"design":"tma","block":"16x16","nw":64,"ahead":1}' \
    '{"design":"tma","block":"16x16","nw":64,"ahead":2}' '{"design":"tma","block":"16x16","nw":128,"ahead":1}'
  wave_shapes long1024 1024 5 60 '{}' '{"design":"tma","block":"8x16","nw":64,"ahead":1}' \
    '{"design":"tma","block":"8x16","nw":64,"ahead":2}'
  wave_shapes long1024 1024 8 60 '{}' '{"design":"tma","block":"16x16","nw":64,"ahead":1}' \
    '{"design":"tma","block":"16x16","nw":128,"ahead":1}'
  pack wave-long
}

stage_wave-cpml-nw() {
  local r p
  for r in 4 8; do
    for p in '{}' '{"design":"tma","block":"8x16","nw":8}' '{"design":"tma","block":"8x16","nw":4}' \
             '{"design":"tma","block":"8x16","nw":10}'; do
      wave_run "cpmlnw-r$r-$([ "$p" = '{}' ] && echo default || echo "$p" | tr -dc '0-9x,')" $(cube 512 "$r" 20 60) --kernel-params "$p"
    done
  done
  pack wave-cpml-nw
}

stage_wave-rules() {  # the rules wave-small and wave-long suggested, again, and the radii they left out
  wave_shapes rules256 256 4 200 '{}' '{"design":"l1"}' '{"design":"tma","block":"16x16","nw":16}' '{"design":"tma","block":"8x16","nw":8}'
  wave_shapes rules256 256 5 200 '{}' '{"design":"tma","block":"8x16","nw":8}' '{"design":"tma","block":"8x16","nw":16}' \
    '{"design":"tma","block":"16x16","nw":16}'
  wave_shapes rules256 256 6 200 '{}' '{"design":"tile","block":"8x16","nw":8,"split":1}' '{"design":"tma","block":"8x16","nw":8}'
  wave_shapes rules512 512 4 60 '{}' '{"design":"tma","block":"16x16","nw":32,"ahead":2}' '{"design":"tma","block":"16x16","nw":64,"ahead":2}'
  wave_shapes rules512 512 5 60 '{}' '{"design":"tma","block":"8x16","nw":32,"ahead":2}' '{"design":"tma","block":"8x16","nw":64,"ahead":2}'
  wave_shapes rules512 512 8 60 '{}' '{"design":"tma","block":"16x16","nw":64,"ahead":2}'
  wave_shapes rules1024 1024 6 60 '{}' '{"design":"tma","block":"8x16","nw":64,"ahead":2}'
  wave_shapes rules1024 1024 7 60 '{}' '{"design":"tma","block":"16x16","nw":64,"ahead":2}'
  wave_shapes rules1024 1024 8 60 '{"design":"tma","block":"16x16","nw":64,"ahead":2}'
  pack wave-rules
}

stage_wave-rules2() {  # 512^3 R = 6..8 in longer chunks (wave-rules found them at 1024^3)
  wave_shapes rules2-512 512 6 60 '{}' '{"design":"tma","block":"8x16","nw":64,"ahead":2}' '{"design":"tma","block":"16x16","nw":64,"ahead":2}'
  wave_shapes rules2-512 512 7 60 '{}' '{"design":"tma","block":"16x16","nw":64,"ahead":2}' '{"design":"tma","block":"16x16","nw":32,"ahead":2}'
  wave_shapes rules2-512 512 8 60 '{"design":"tma","block":"16x16","nw":32,"ahead":2}' '{"design":"tma","block":"16x16","nw":64,"ahead":2}' \
    '{"design":"tma","block":"16x16","nw":128,"ahead":2}' '{"design":"tma","block":"16x16","nw":64,"ahead":3}'
  pack wave-rules2
}

# The defaults after wave-rules2, beside the previous ones (kernel parameters by hand) in one call.
stage_wave-final() {
  local r
  for r in 4 5 6 7 8; do wave_shapes final256 256 "$r" 200 '{}'; done
  wave_shapes final256 256 4 200 '{"design":"tma","block":"16x16","nw":16}'
  wave_shapes final256 256 5 200 '{"design":"tma","block":"8x16","nw":16}'
  wave_shapes final256 256 6 200 '{"design":"tma","block":"8x16","nw":16}'
  for r in 4 5 6 7 8; do wave_shapes final512 512 "$r" 200 '{}'; done
  wave_shapes final512 512 6 200 '{"design":"tma","block":"8x16","nw":16}'
  wave_shapes final512 512 7 200 '{"design":"tma","block":"16x16","nw":16}'
  wave_shapes final512 512 8 200 '{"design":"tma","block":"16x16","nw":16}'
  wave_shapes final1024 1024 6 60 '{}'
  pack wave-final
}

stage_lap-samesize() {
  local planes=() ny
  for ny in 256 512 1024 2048 3072 4096 6144 8192 12288 16384; do planes+=(--size "1024,$ny,32"); done
  bench lap-samesize --op laplacian7 --variant plan --no-cache --dtype double,float "${LAP_SIZES[@]}" \
    --reps 10 --same-size-copy
  bench lap-samesize-planes --op laplacian7 --variant plan --no-cache --dtype double,float "${planes[@]}" \
    --reps 10 --same-size-copy
}

stage_check-tests() {
  gpu_tests check-tests 'WaveGpu.*:CudaPlan.*:Defaults.*' 560
  cmake --build --preset default --target test_cli -j "$(nproc)" >>/tmp/build.log 2>&1 || { tail -30 /tmp/build.log | tee -a "$LOG"; status=1; return; }
  timeout 120 ./build/tests/test_cli --gtest_filter='Cli.BenchSameSize*:Cli.BadInput*:Cli.BenchPlanRows*' >/tmp/cli.log 2>&1 || status=1
  cat /tmp/cli.log >>"$LOG"
  grep -E "^\[ +(FAILED|PASSED|SKIPPED) |tests ran|Failure" /tmp/cli.log | tail -8
}

# One no-CPML run at the defaults and one in the l1 march per radius and grid: the final fields
# compared point by point (the designs' arithmetic is the same, so 0 differing points is the
# pass), the defaults' record against the analytic solution. Geometry: a 5 m grid, 2000 m/s, a
# 20 Hz Ricker at the centre, 5 receivers 100-300 m away along x; 0.3 s is before any reflection
# from the box's faces (495 m or more away: the first arrives after ~0.49 s) reaches them.
stage_wave-nocpml-check() {
  local r g name p
  for g in 241,241,241 200,600,600; do
    local nz=${g%%,*} nx=${g##*,}
    local cz=$(( (nz - 1) / 2 * 5 )) cx=$(( (nx - 1) / 2 * 5 ))
    for r in ${WAVE_CHECK_RADII:-4 5 6 7 8}; do
      name="nc-${nz}x${nx}-r$r"
      for p in '{}' '{"design":"l1"}'; do
        wave_run "$name-$([ "$p" = '{}' ] && echo default || echo l1)" --constant 2000 --shape "$g" --spacing 5 \
          --radius "$r" --cpml 0 --time 0.3 --cfl-safety 0.4 --source "$cz,$cx,$cx" --ricker 20 \
          --receiver-line "$cz,$cx,$((cx + 100)):$cz,$cx,$((cx + 300)):5" --compare-analytic --kernel-params "$p"
      done
      python3 - "/tmp/wave/$name" <<'PY' | tee -a "$LOG"
import json, sys
import numpy as np
d = sys.argv[1]
a, b = (np.load(f"{d}-{k}/final.npy") for k in ("default", "l1"))
s, l = (json.load(open(f"{d}-{k}/summary.json")) for k in ("default", "l1"))
n = int((a != b).sum())
print(f"{d.split('/')[-1]}: {s['kernel'].split(' R=')[0]}; points differing from l1: {n} of {a.size}; "
      f"misfit {s['analytic']['misfit']:.4f} (l1 {l['analytic']['misfit']:.4f})")
sys.exit(1 if n else 0)
PY
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      rm -f /tmp/wave/$name-*/final.npy
    done
  done
  pack wave-nocpml-check
}

# The no-CPML step on boxes shorter in z than across (the chunks of 64 planes were chosen on
# cubes): the defaults against the same shape in chunks of 16 and the l1 march, R = 4, 6, 8.
stage_wave-zshapes() {
  local g r p
  for g in ${WAVE_ZSHAPES:-200,600,600 320,640,640 192,1024,1024}; do
    local nz=${g%%,*} nx=${g##*,}
    for r in 4 6 8; do
      local block=16x16
      [ "$r" = 6 ] && block=8x16
      for p in '{}' '{"design":"tma","block":"'$block'","nw":16}' '{"design":"l1"}'; do
        wave_run "zs-${nz}x${nx}-r$r-$([ "$p" = '{}' ] && echo default || echo "$p" | sed 's/"design":"\([a-z0-9]*\)",*/\1-/' | tr -dc 'a-z0-9x,-')" \
          --constant 2000 --shape "$g" --spacing 10 --radius "$r" --cpml 0 --steps 200 \
          --source "$(( nz / 2 * 10 )),$(( nx / 2 * 10 )),$(( nx / 2 * 10 ))" --ricker 8 --no-final --kernel-params "$p"
      done
    done
  done
  pack wave-zshapes
}

# 200 x 600^2 at the defaults against chunks of 64 and 16, R = 4, 6, 8. It ran once (eleventh
# session) with the long chunks evened out over the depth (4 chunks of 50, the defaults then):
# that change measured no faster and was not kept.
stage_wave-even() {
  local r p
  for r in 4 6 8; do
    local block=16x16
    [ "$r" = 6 ] && block=8x16
    for p in '{}' '{"design":"tma","block":"'$block'","nw":64}' '{"design":"tma","block":"'$block'","nw":16}'; do
      wave_run "even-200x600-r$r-$([ "$p" = '{}' ] && echo default || echo "$p" | sed 's/"design":"\([a-z0-9]*\)",*/\1-/' | tr -dc 'a-z0-9x,-')" \
        --constant 2000 --shape 200,600,600 --spacing 10 --radius "$r" --cpml 0 --steps 200 \
        --source 1000,3000,3000 --ricker 8 --no-final --kernel-params "$p"
    done
  done
  pack wave-even
}

stage_prof-long() {
  local r
  for r in 8 7 6; do
    prof prof-long-r$r --op d2xyz --variant plan --no-cache --radius $r --size 1024,1024,1024 --dtype float --reps 5
  done
}

stage_tma-nw128() {  # chunks of 128 against 64, R = 6..8, whole planes, the plan's blocks and caps
  bench tma-nw128-r67 --op d2xyz --variant tma --radius 6,7 --size 512,512,512 --size 1024,1024,1024 --dtype float \
    --param block=8x16x1,16x16x1 --param nw=64,128 --param ahead=2 --param regs=96 --param strips=1 --reps 10
  bench tma-nw128-r8 --op d2xyz --variant tma --radius 8 --size 512,512,512 --size 1024,1024,1024 --dtype float \
    --param block=16x16x1 --param nw=64,128 --param ahead=2 --param regs=0 --param strips=1 --reps 10
}

stage_tma-long() {
  bench tma-long1024-r48 --op d2xyz --variant tma --radius 4,8 --size 1024,1024,1024 --dtype float \
    --param block=16x16x1 --param nw=16,32,64 --param ahead=2 --param regs=0 --param strips=0,1 --reps 10
  bench tma-long1024-r5 --op d2xyz --variant tma --radius 5 --size 1024,1024,1024 --dtype float \
    --param block=16x16x1 --param nw=16,32,64 --param ahead=2 --param regs=80 --param strips=0,1 --reps 10
  bench tma-long1024-r67 --op d2xyz --variant tma --radius 6,7 --size 1024,1024,1024 --dtype float \
    --param block=8x16x1,16x16x1 --param nw=16,32,64 --param ahead=2 --param regs=96 --param strips=0,1 --reps 10
  bench tma-long512 --op d2xyz --variant tma --radius 4,5 --size 512,512,512 --dtype float \
    --param block=16x16x1 --param nw=16,32,64 --param ahead=2 --param regs=0,80 --param strips=1 --reps 10
  bench tma-long-double --op d2xyz --variant tma --radius 4 --size 512,512,512 --size 1024,1024,1024 --dtype double \
    --param block=16x16x1 --param nw=16,32,64 --param ahead=2 --param regs=80 --param strips=0 --reps 10
}

stage_tma-nw128b() {  # tma-nw128's R = 7, 8 rows in the plan's shapes again (the last device minutes)
  bench tma-nw128b-r7 --op d2xyz --variant tma --radius 7 --size 1024,1024,1024 --size 512,512,512 --dtype float \
    --param block=16x16x1 --param nw=64,128 --param ahead=2 --param regs=96 --param strips=1 --reps 10
  bench tma-nw128b-r8 --op d2xyz --variant tma --radius 8 --size 1024,1024,1024 --size 512,512,512 --dtype float \
    --param block=16x16x1 --param nw=64,128 --param ahead=2 --param regs=0 --param strips=1 --reps 10
}

stage_plan-long() {
  bench plan-long --op d2xyz --variant plan --no-cache --radius 4,5,6,7,8 --size 512,512,512 \
    --size 1024,1024,1024 --dtype float --reps 10
  bench plan-long-double --op d2xyz --variant plan --no-cache --radius 4 --size 512,512,512 \
    --size 1024,1024,1024 --dtype double --reps 10
}

stage_plan-check3() {  # after the defaults took pipelined zq 1 at R = 4 (float): tests and the plan
  gpu_tests plan-check3 'Defaults.*:CudaPlan.*:CudaSeismic.Pipelined*' 300
  bench plan-check3 --op d2xyz --variant plan --no-cache --radius 3,4,5 --dtype float,double \
    --size 512,512,512 --size 1024,1024,1024 --reps 10
}

# The step's tile design in the d2xyz winners' shapes (128-thread blocks, nw 6-16) against the
# defaults, R = 4 and 8, 512^3, no CPML (issue 13, sixth session).
stage_wave-tile-nw() {
  local r p
  for r in 4 8; do
    wave_run "nw-r$r-default" $(cube 512 "$r" 0 60)
    for p in '{"design":"tile","block":"16x8","nw":6}' '{"design":"tile","block":"16x8","nw":8}' \
             '{"design":"tile","block":"8x16","nw":8}' '{"design":"tile","block":"16x8","nw":16}'; do
      wave_run "nw-r$r-$(echo "$p" | tr -dc '0-9x')-tile" $(cube 512 "$r" 0 60) --kernel-params "$p"
    done
  done
  pack wave-tile-nw
}

stage_wave-verify() {
  local r
  # 3D: h = 10 m, v = 2000 m/s, Ricker 20 Hz (55 Hz highest: 3.6 points per shortest wavelength
  # at R = 8 needs ~3.2); receivers 200-400 m from the source, before any reflection.
  for r in 1 2 4 8; do
    wave_run "verify3d-r$r" --constant 2000 --shape 161,161,161 --spacing 5 --radius $r --cpml 20 \
      --time 0.35 --cfl-safety 0.4 --source 400,400,400 --ricker 20 \
      --receiver-line "400,400,500:400,400,700:5" --compare-analytic
  done
  wave_run verify2d-r4 --constant 2000 --shape 401,401 --spacing 5 --radius 4 --cpml 20 --time 0.5 \
    --cfl-safety 0.4 --source 1000,1000 --ricker 20 --receiver-line "1000,1100:1000,1500:5" --compare-analytic
  wave_run snapshot3d --layered "0:1500,600:2500,1200:3500" --shape 201,201,201 --spacing 10 --radius 4 \
    --cpml 20 --time 0.6 --source 500,1000,1000 --ricker 10 --free-surface \
    --snapshot-steps 300 --snapshot-slice y=100 --receiver-line "10,1000,0:10,1000,2000:201"
  wave_run stability --constant 2500 --shape 101,101,101 --spacing 10 --radius 8 --cpml 20 --steps 10000 \
    --source 500,500,500 --ricker 15
  pack wave-verify
}

stage_wave-cpml() {
  python3 bench/wave_cpml.py --cli "$FD" --backend cuda --dim 3 --output "$OUT/wave-cpml-3d.json" 2>&1 | tee -a "$LOG"
  python3 bench/wave_cpml.py --cli "$FD" --backend cuda --dim 2 --output "$OUT/wave-cpml-2d.json" 2>&1 | tee -a "$LOG"
}

stage_survey-test() {
  ctest --preset default -j 4 -R "[Ww]ave|Checkpoint|Checksum|[Ss]egy|SEGY|[Ss]urvey" >/tmp/survey-test.log 2>&1 || status=1
  cat /tmp/survey-test.log >>"$LOG"
  ./build/tests/test_cuda --gtest_filter='*Wave*' >>"$LOG" 2>&1 || status=1
  grep -E "measured|Skipped|SKIPPED|Failed|FAILED" /tmp/survey-test.log | tail -20
  tail -6 /tmp/survey-test.log
}

# Checkpoints at an interval longer than a write (the writes hide behind the run): 512^3, R = 4,
# 4000 steps, one every 1500 (two, the second into the first's recycled buffers), against the
# same run without; the loop's stall per checkpoint and the whole run's overhead, measured.
stage_ckpt-long() {
  local d=/tmp/ckpt-long
  rm -rf $d && mkdir -p $d
  local run=($FD wave --backend cuda --quiet --layered 0:1500,1000:2500,2500:3500 --shape 472,472,472 --spacing 10
             --radius 4 --cpml 20 --steps 4000 --source 500,2360,2360 --ricker 10
             --receiver-line "10,2360,0:10,2360,4710:200" --no-final)
  "${run[@]}" --output $d/plain 2>>"$LOG" || status=1
  "${run[@]}" --checkpoint-every 1500 --output $d/ckpt 2>>"$LOG" || status=1
  python3 - $d "$OUT/ckpt-long.json" <<'PY' | tee -a "$LOG"
import json, sys
d = sys.argv[1]
plain = json.load(open(f"{d}/plain/summary.json")); ck = json.load(open(f"{d}/ckpt/summary.json"))
c = ck["checkpoint"]; n = c["count"]
total_plain = plain["timing"]["loop_s"]; total_ck = ck["timing"]["loop_s"] + c["seconds"]
out = {"case": "512^3 computational, R=4, float, 4000 steps, a checkpoint every 1500", "plain": plain["timing"],
       "with_checkpoints": ck["timing"], "checkpoint": c, "stall_s_per_checkpoint": c["seconds"] / n,
       "write_s_per_checkpoint": c["write_seconds"] / n, "overhead": total_ck / total_plain - 1}
json.dump(out, open(sys.argv[2], "w"), indent=1)
print(f"every 1500 of 4000 steps: {n} checkpoints of {c['bytes']/1e9:.2f} GB, the loop stalled {c['seconds']:.2f} s in all "
      f"({c['seconds']/n:.2f} s each), the writer took {c['write_seconds']/n:.2f} s each; loop {total_plain:.2f} s "
      f"plain, {total_ck:.2f} s with: {100*out['overhead']:.1f} % overhead; copy {plain['timing']['copy_gbps']:.0f} GB/s")
PY
}

# The GPU's checkpoint tests alone (library and the bit-identical resume), for a quick call.
stage_wave-tile-test() {  # the wave GPU tests (the tile design among them), the ring tests, and the
  # small tile-against-l1 test under memcheck and racecheck
  timeout 400 ./build/tests/test_cuda --gtest_filter='WaveGpu*:CudaSeismic.Ring*' >/tmp/wave-tile-test.log 2>&1 || status=1
  cat /tmp/wave-tile-test.log >>"$LOG"
  grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED)|Failure" /tmp/wave-tile-test.log | tail -24
  SANITIZE_FILTER=WaveGpu.TileAndL1DesignsAgreeOnASmallGrid SANITIZE_TIMEOUT=150 stage_sanitize
}

stage_ckpt-test() {
  ./build/tests/test_cuda --gtest_filter='*Wave*' >/tmp/ckpt-test.log 2>&1 || status=1
  OMP_NUM_THREADS=4 ./build/tests/test_wave --gtest_filter='Checkpoint*' >>/tmp/ckpt-test.log 2>&1 || status=1
  cat /tmp/ckpt-test.log >>"$LOG"
  grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED)" /tmp/ckpt-test.log | tail -20
}

# The 3D survey's model: 200 x 400 x 400 points of 10 m (2 x 4 x 4 km), water over sediments whose
# velocity rises with depth, a dipping fast layer and a slow Gaussian anomaly.
survey_model() {  # npy path
  python3 - "$1" <<'PY'
import numpy as np, sys
nz, ny, nx, h = 200, 400, 400, 10.0
z = np.arange(nz)[:, None, None] * h
y = np.arange(ny)[None, :, None] * h
x = np.arange(nx)[None, None, :] * h
v = np.where(z < 200, 1500.0, 1800.0 + 0.6 * (z - 200)) + 0 * x + 0 * y
v = np.where(z >= 1100 + 0.1 * (x - 2000), 3500.0, v)
v = v - 400.0 * np.exp(-(((x - 2500) / 400) ** 2 + ((y - 2000) / 400) ** 2 + ((z - 800) / 200) ** 2))
np.save(sys.argv[1], v.astype(np.float32))
PY
}

stage_survey3d() {
  local d=/tmp/survey3d
  rm -rf $d && mkdir -p $d
  survey_model $d/model.npy
  $FD segy from-npy $d/model.npy $d/model.sgy --spacing 10 2>&1 | tee -a "$LOG" || { status=1; return; }
  $FD segy info $d/model.sgy 2>&1 | tee -a "$LOG"
  # 12 shots at 20 m depth along the line y = 2 km, every 300 m; each records a crossline of 301
  # receivers at 10 m depth, 4 km long, centred on the shot's x.
  python3 - $d/survey.json <<'PY'
import json, sys
shots = [{"id": 1001 + i, "source": [20, 2000, 350 + 300 * i]} for i in range(12)]
json.dump({"description": "3D line survey, fdstencil device_run survey3d", "shots": shots}, open(sys.argv[1], "w"), indent=1)
PY
  local cmd=($FD wave --backend cuda --model $d/model.sgy --survey $d/survey.json --segy --time 2.0 --ricker 12
             --radius 4 --cpml 20 --receiver-line "10,2000,0:10,2000,3990:301" --no-final --output $d/out)
  local t0=$(date +%s.%N)
  "${cmd[@]}" 2>&1 | tail -5 | tee -a "$LOG"
  local t1=$(date +%s.%N)
  "${cmd[@]}" 2>&1 | tail -3 | tee -a "$LOG"  # again: every shot verified and skipped
  local t2=$(date +%s.%N)
  echo "survey3d: first run $(python3 -c "print(round($t1 - $t0, 2))") s, the re-run (verify and skip) $(python3 -c "print(round($t2 - $t1, 2))") s" | tee -a "$LOG"
  cp $d/out/survey.json "$OUT/survey3d-manifest.json"
  # Every shot's sidecars and summary, and two shots' SEG-Y records (all twelve records pass 16 MiB).
  (cd $d && find out -name '*.json' -o -name shot.sgy -path '*shot_00100[1-2]*' | tar -cf "$OUT/survey3d.tar" -T - survey.json)
}

# Small shots side by side: the same 16 shots run 1, 2, 4 and 8 at a time, in 2D and 3D.
stage_survey-batch() {
  local d=/tmp/survey-batch b
  rm -rf $d && mkdir -p $d
  python3 - $d <<'PY'
import json, sys
d = sys.argv[1]
json.dump({"shots": [{"id": i + 1, "source": [20, 100 + 50 * i]} for i in range(16)]}, open(f"{d}/s2d.json", "w"))
json.dump({"shots": [{"id": i + 1, "source": [20, 320, 100 + 35 * i]} for i in range(16)]}, open(f"{d}/s3d.json", "w"))
PY
  for b in 1 2 4 8; do
    $FD wave --backend cuda --quiet --constant 2000 --shape 400,1000 --spacing 5 --time 1.0 --ricker 15 --radius 4       --receiver-line "10,0:10,4995:500" --no-final --survey $d/s2d.json --batch $b --output $d/2d-b$b 2>&1 | tail -2 | tee -a "$LOG"
    $FD wave --backend cuda --quiet --constant 2000 --shape 96,128,128 --spacing 5 --time 0.5 --ricker 15 --radius 4       --receiver-line "10,320,0:10,320,635:128" --no-final --survey $d/s3d.json --batch $b --output $d/3d-b$b 2>&1 | tail -2 | tee -a "$LOG"
  done
  python3 - $d "$OUT/survey-batch.json" <<'PY' | tee -a "$LOG"
import glob, json, os, sys
rows = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*-b*", "survey.json"))):
    m = json.load(open(f)); name = os.path.basename(os.path.dirname(f))
    rows.append({"case": name, "batch": m["batch"], "shots": m["shots_run"], "wall_s": m["wall_s"],
                 "shots_per_s": m["shots_per_s"], "copy_gbps": m["copy_gbps"],
                 "gpts_per_shot": [s["gpts"] for s in m["shots"]]})
    print(f'{name:8s} batch {m["batch"]}: {m["shots_run"]} shots in {m["wall_s"]:.2f} s, {m["shots_per_s"]:.2f} shots/s')
json.dump({"rows": rows}, open(sys.argv[2], "w"), indent=1)
PY
}

stage_ckpt-cost() {
  local d=/tmp/ckpt
  rm -rf $d && mkdir -p $d
  # 512^3 computational points (472^3 model + 20-point CPML), R = 4, 600 steps: without checkpoints,
  # then one every 150 steps (3 checkpoints of ~1.5 GB each to the machine's disk).
  local run=($FD wave --backend cuda --quiet --layered 0:1500,1000:2500,2500:3500 --shape 472,472,472 --spacing 10
             --radius 4 --cpml 20 --steps 600 --source 500,2360,2360 --ricker 10
             --receiver-line "10,2360,0:10,2360,4710:200" --no-final)
  "${run[@]}" --output $d/plain 2>>"$LOG" || status=1
  "${run[@]}" --checkpoint-every 150 --output $d/ckpt 2>>"$LOG" || status=1
  df -h /tmp | tee -a "$LOG"
  # Stopped by SIGINT after its first checkpoint, then resumed: the record must equal plain's.
  "${run[@]}" --checkpoint-every 150 --output $d/cut >>"$LOG" 2>&1 &
  local pid=$!
  while kill -0 $pid 2>/dev/null && [ ! -f $d/cut/checkpoint.ckpt ]; do sleep 0.05; done
  kill -INT $pid
  wait $pid
  local rc=$?
  echo "SIGINT: exit $rc (expected 130)" | tee -a "$LOG"
  [ $rc -eq 130 ] || status=1
  "${run[@]}" --checkpoint-every 150 --output $d/cut --resume 2>>"$LOG" || status=1
  if cmp $d/plain/shot.npy $d/cut/shot.npy; then echo "resumed record: identical to the uninterrupted run" | tee -a "$LOG"
  else echo "resumed record: DIFFERS" | tee -a "$LOG"; status=1; fi
  python3 - $d "$OUT/ckpt-cost.json" <<'PY' | tee -a "$LOG"
import json, sys
d = sys.argv[1]
plain = json.load(open(f"{d}/plain/summary.json")); ck = json.load(open(f"{d}/ckpt/summary.json"))
cut = json.load(open(f"{d}/cut/summary.json"))
c = ck["checkpoint"]; n = c["count"]
stall = c["seconds"] / n if n else 0          # the loop's time per checkpoint: download, hand-over, waits
write = c["write_seconds"] / n if n else 0    # the writer thread's time per checkpoint
step_s = plain["timing"]["loop_s"] / plain["steps"]
overhead = (ck["timing"]["loop_s"] + c["seconds"]) / plain["timing"]["loop_s"] - 1
out = {"case": "512^3 computational (472^3 model + CPML 20), R=4, float, 600 steps, 200 receivers",
       "plain": plain["timing"], "with_checkpoints": ck["timing"], "checkpoint": c,
       "stall_s_per_checkpoint": stall, "write_s_per_checkpoint": write, "step_s": step_s,
       "measured_overhead_every_150": overhead, "resumed": cut.get("checkpoint")}
# At an interval whose steps take longer than a write, the writes hide behind the run and each
# checkpoint costs the loop its stall alone (derived from the figures above, not timed).
for every in (1000, 5000):
    hidden = every * step_s >= write
    out[f"derived_share_every_{every}"] = (stall if hidden else stall + write - every * step_s) / (every * step_s)
json.dump(out, open(sys.argv[2], "w"), indent=1)
print(f"checkpoint: {n} of {c['bytes']/1e9:.2f} GB; the loop stalls {stall:.2f} s each, the writer takes {write:.2f} s "
      f"each; step {step_s*1e3:.2f} ms; every 150 steps the run took {100*overhead:.0f} % longer; derived share "
      f"every 1000: {100*out['derived_share_every_1000']:.1f} %, every 5000: {100*out['derived_share_every_5000']:.2f} %")
print(f"copy {plain['timing']['copy_gbps']:.0f} GB/s, plain {plain['timing']['gpts']:.1f} GPts/s")
PY
}

# Runs across GPUs (issues 14 and 31) moved to bench/mgpu.sh.

export NCCL_NVLS_ENABLE=0
for stage in "$@"; do
  echo "=== $stage ($(date +%T))"
  "stage_$stage"
done
echo "=== done ($(date +%T)), status $status"
exit $status
