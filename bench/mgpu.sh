#!/usr/bin/env bash
# Wave runs across the GPUs of one host (issue 31), one device call: build, then the named stages,
# each writing its run directories (less their wavefields) and a JSON table under $OUT.
#   build     configure (Release, CUDA) and build the tool and the MPI tests
#   carried   the tool built elsewhere and carried in .carry/fdstencil, else build
#   test      every MPI test (ctest -R mpi_): the split runs on the cpu and on the GPUs, the CLI
#   scaling   weak (512^3 computational per GPU) and strong (1024^3 in all) scaling on 1, 2 and 4
#             GPUs (as many as the host has), the radii MGPU_RADII (default 4 and 8), float,
#             20-point CPML, MGPU_STEPS steps (1000), the overlap chosen by timing both paths
#             (--overlap auto)
#   serial    the same runs on 2 and 4 GPUs with the exchange before the inner planes
#             (--overlap off): auto must never be slower
#   survey    a survey of MGPU_SHOTS small 3D shots on 1 GPU, then across 2 and 4 (one shot per GPU)
#   keptcheck a 3-shot survey's records on the kept GPU state against each shot run alone
#   surveyalone the survey with each rank seeing only its GPU, and as one process per GPU without MPI
#   big       a model whose state is at least 1.5x one card's memory, on every GPU, against the analytic
#             solution (MGPU_BIG: computational points per axis)
#   state     a 2-GPU run's checkpoints and snapshots (each rank writing its part) against one GPU's,
#             and its stop resumed on 2 GPUs and 1
#   faces     a slab's chunk length (nw 8, 16, 32) at 1024^3, R = 4, on every GPU
#   before    the scaling runs on 2 and 4 GPUs with a slab's face chunks before its inner chunks
#             (faces 0), the path before issue 31's fourth session, beside the default's (faces 1)
#   balance   strong runs (1024^3) on every GPU with a z-layer plane costing 1, 2, 3, 5 and 6 inner
#             planes when the slabs are cut (--layer-plane-cost; the default's are the scaling runs)
#   gputests  the MPI GPU tests (test_mpi_gpu, 2 ranks), carried in .carry/ beside the tool
#   clitest   the command-line tests that need GPUs, with the carried tool
# Example: bash bench/mgpu.sh build test scaling serial
# The JSON tables come from bench/mgpu_report.py; the tars hold every run's summary.json.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
FD=./build/fdstencil
LOG=$OUT/mgpu-log.txt
WORK=/tmp/mgpu
status=0
GPUS=$(nvidia-smi -L 2>/dev/null | wc -l)
STEPS=${MGPU_STEPS:-1000}
# --bind-to none: OpenMPI binds a small job's ranks to one core each, and NCCL's proxy thread then
# shares it with the rank (docs/multigpu.md). NCCL_NVLS_ENABLE=0: no NVLink multicast.
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE=0 -x OMP_NUM_THREADS)
export NCCL_NVLS_ENABLE=0 OMP_NUM_THREADS=4

stage_build() {
  nvidia-smi --query-gpu=name,memory.total --format=csv | tee -a "$LOG"
  nvidia-smi topo -m 2>&1 | head -8 | tee -a "$LOG"
  { cmake --preset default -DFDSTENCIL_CUDA=ON &&
    cmake --build --preset default -j "$(nproc)" --target fdstencil_cli test_mpi test_mpi_gpu; } >/tmp/build.log 2>&1 ||
    { tail -40 /tmp/build.log | tee -a "$LOG"; exit 1; }
  grep -E "^-- fdstencil:" /tmp/build.log | tee -a "$LOG"
  echo "build ok"
}

# The tool as built on the development machine and carried in .carry/ (the device call names it in
# `carry`), which saves the call the build; a build here when it does not run on this machine.
stage_carried() {
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
  MPIRUN+=(-x LD_LIBRARY_PATH)
  if [ -x .carry/fdstencil ] && .carry/fdstencil info >>"$LOG" 2>&1; then
    FD=.carry/fdstencil
    echo "carried build ok" | tee -a "$LOG"
  else
    echo "the carried build does not run here: building" | tee -a "$LOG"
    stage_build
  fi
}

stage_test() {
  ctest --preset default -R "mpi_" --output-on-failure >/tmp/mgpu-test.log 2>&1 || status=1
  cat /tmp/mgpu-test.log >>"$LOG"
  tail -14 /tmp/mgpu-test.log
}

# One run into $WORK/<name>: name, ranks, then fdstencil wave's options.
run() {
  local name=$1 ranks=$2
  shift 2
  local launch=()
  [ "$ranks" -gt 1 ] && launch=("${MPIRUN[@]}" -np "$ranks")
  rm -rf "${WORK:?}/$name"
  mkdir -p "$WORK"
  "${launch[@]}" $FD wave --backend cuda --quiet --output "$WORK/$name" "$@" 2>>"$LOG" ||
    { echo "wave $name FAILED" | tee -a "$LOG"; status=1; return; }
  python3 bench/mgpu_report.py --line "$WORK/$name" | tee -a "$LOG"
}

# A box of nz x n x n computational points (a 20-point CPML on every face inside them), the source
# at the model's centre: nz, n, radius, then more options.
box() {
  local nz=$1 n=$2 r=$3
  shift 3
  local mz=$((nz - 40)) m=$((n - 40))
  echo --constant 2000 --shape $mz,$m,$m --spacing 10 --radius "$r" --cpml 20 --steps "$STEPS" \
    --source "$((mz * 5)),$((m * 5)),$((m * 5))" --ricker 8 --no-final "$@"
}

# Weak and strong runs on g GPUs: prefix, g, then more options.
scale_runs() {
  local tag=$1 g=$2
  shift 2
  for r in ${MGPU_RADII:-4 8}; do
    run "weak-r$r-$g$tag" "$g" $(box $((512 * g)) 512 $r "$@")
    run "strong-r$r-$g$tag" "$g" $(box 1024 1024 $r "$@")
  done
}

report() {  # table name: the runs under $WORK into $OUT/<name>.json, then a tar of their summaries
  python3 bench/mgpu_report.py "$WORK" "$OUT/$1.json" | tee -a "$LOG"
  tar -C "$WORK" --exclude='*.npy' --exclude='*.ckpt*' -cf "$OUT/$1.tar" . && rm -rf "$WORK"
}

stage_scaling() {
  for g in 1 2 4; do [ "$g" -le "$GPUS" ] && scale_runs "" $g; done
  report mgpu-scaling
}

stage_serial() {
  for g in ${MGPU_SERIAL_COUNTS:-2 4}; do [ "$g" -le "$GPUS" ] && scale_runs "-off" $g --overlap off; done
  report mgpu-serial
}

stage_before() {
  for g in 2 4; do [ "$g" -le "$GPUS" ] && scale_runs "-faces0" $g --kernel-params '{"faces":0}'; done
  report mgpu-faces-before
}

stage_balance() {
  for c in ${MGPU_COSTS:-1 2 3 5 6}; do
    for r in 4 8; do run "strong-r$r-$GPUS-cost$c" "$GPUS" $(box 1024 1024 $r --layer-plane-cost "$c"); done
  done
  report mgpu-balance
}

stage_gputests() {
  "${MPIRUN[@]}" -np 2 .carry/test_mpi_gpu --gtest_color=no >/tmp/gputests.log 2>&1 || status=1
  cat /tmp/gputests.log >>"$LOG"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|FAILED" /tmp/gputests.log
}

stage_survey() {
  local shots=${MGPU_SHOTS:-32}
  python3 bench/mgpu_report.py --make-survey "$shots" "$WORK/survey.json"
  local model=(--constant 2000 --shape 216,216,216 --spacing 10 --radius 4 --cpml 20 --steps "$STEPS" --ricker 8
               --no-final)
  for g in 1 2 4; do
    [ "$g" -le "$GPUS" ] || continue
    local launch=()
    [ "$g" -gt 1 ] && launch=("${MPIRUN[@]}" -np "$g")
    "${launch[@]}" $FD wave --backend cuda --quiet "${model[@]}" --survey "$WORK/survey.json" \
      --output "$WORK/survey-$g" 2>>"$LOG" || { echo "survey on $g FAILED" | tee -a "$LOG"; status=1; }
  done
  report mgpu-survey
}

# A survey's shots on the state the first shot left (wave::Options::kept_state) against each shot
# run alone: the records must be the same bytes (a layered model, a receiver line, shots that move
# the source and change the wavelet), before the survey stage times the kept state.
stage_keptcheck() {
  mkdir -p "$WORK"
  local model=(--layered 0:1800,600:2600 --shape 120,140,160 --spacing 10 --radius 4 --cpml 20 --steps 600
               --receiver-line 30,700,50:30,700,1550:64 --no-final)
  printf '{"shots": [{"id": 1, "source": [300, 700, 400], "ricker": 10},
    {"id": 2, "source": [500, 600, 900], "ricker": 14}, {"id": 3, "source": [350, 800, 1200], "ricker": 8}]}' \
    >"$WORK/kept.json"
  rm -rf "$WORK/kept"
  $FD wave --backend cuda --quiet "${model[@]}" --survey "$WORK/kept.json" --output "$WORK/kept" 2>>"$LOG" ||
    { echo "keptcheck survey FAILED" | tee -a "$LOG"; status=1; return; }
  local id src f
  for id in 1 2 3; do
    src=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['shots'][$id-1]; print(','.join(map(str,s['source'])), s['ricker'])" "$WORK/kept.json")
    rm -rf "$WORK/kept-alone-$id"
    $FD wave --backend cuda --quiet "${model[@]}" --source "${src% *}" --ricker "${src#* }" \
      --output "$WORK/kept-alone-$id" 2>>"$LOG" || status=1
    f=$(printf "%s/kept/shot_%06d/shot.npy" "$WORK" "$id")
    if cmp -s "$f" "$WORK/kept-alone-$id/shot.npy"; then
      echo "shot $id: the same bytes as alone (state_kept $(python3 -c "import json,sys; print([s['state_kept'] for s in json.load(open(sys.argv[1]))['shots'] if s['id']==$id][0])" "$WORK/kept/survey.json"))" | tee -a "$LOG"
    else
      echo "shot $id: DIFFERS from its run alone" | tee -a "$LOG"
      status=1
    fi
  done
}

# Where a survey across GPUs loses: the same shots on every GPU as stage survey, but (a) each rank
# seeing only its own GPU (CUDA_VISIBLE_DEVICES per rank), and (b) one process per GPU, no MPI,
# each given a quarter of the shots.
stage_surveyalone() {
  local shots=${MGPU_SHOTS:-32} g=$GPUS
  python3 bench/mgpu_report.py --make-survey "$shots" "$WORK/survey.json"
  python3 bench/mgpu_report.py --make-survey $((shots / g)) "$WORK/survey-part.json"
  local model=(--constant 2000 --shape 216,216,216 --spacing 10 --radius 4 --cpml 20 --steps "$STEPS" --ricker 8
               --no-final)
  "${MPIRUN[@]}" -np "$g" bash -c 'CUDA_VISIBLE_DEVICES=$OMPI_COMM_WORLD_LOCAL_RANK exec "$@"' _ \
    $FD wave --backend cuda --quiet "${model[@]}" --survey "$WORK/survey.json" --output "$WORK/survey-$g-own" \
    2>>"$LOG" || { echo "survey-$g-own FAILED" | tee -a "$LOG"; status=1; }
  local pids=() i
  for ((i = 0; i < g; ++i)); do
    CUDA_VISIBLE_DEVICES=$i $FD wave --backend cuda --quiet "${model[@]}" --survey "$WORK/survey-part.json" \
      --output "$WORK/alone-$g-gpu$i" 2>>"$LOG" &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || { echo "a lone survey FAILED" | tee -a "$LOG"; status=1; }; done
  python3 - "$WORK" "$g" <<'PY' | tee -a "$LOG"
import json, statistics, sys
work, g = sys.argv[1], int(sys.argv[2])
for i in range(g):
    m = json.load(open(f"{work}/alone-{g}-gpu{i}/survey.json"))
    setup = statistics.median(s["setup_s"] for s in m["shots"])
    print(f"alone gpu{i}: {m['shots_run']} shots in {m['wall_s']:.2f} s, median setup {setup:.3f} s")
PY
  report mgpu-survey-alone
}

stage_big() {
  local n=${MGPU_BIG:-2176} c
  c=$(((n - 40) * 5))
  run "big-$GPUS" "$GPUS" --constant 2000 --shape $((n - 40)),$((n - 40)),$((n - 40)) --spacing 10 --radius 4 \
    --cpml 20 --time 0.5 --source "$c,$c,$c" --ricker 8 --no-final --compare-analytic \
    --receiver-line "$((c - 400)),$c,$c:$((c - 200)),$c,$c:3"
  report mgpu-big
}

# A 2-GPU run's gathered checkpoints and snapshots (512^3 computational per GPU, R = 4): their
# cost, every rank's peak host memory, and a run stopped by SIGTERM once its first checkpoint is
# on the disk, resumed on 2 GPUs and on 1, each against the uninterrupted run (mgpu_report.py
# --state). Every run has the same steps, so each checkpoint fits each run.
stage_state() {
  local weak=(--constant 2000 --shape 984,472,472 --spacing 10 --radius 4 --cpml 20 --source "4920,2360,2360"
              --ricker 8 --receiver-line "500,2360,2600:9000,2360,2600:64" --steps 1500)
  run state-plain 2 "${weak[@]}"
  run state-files 2 "${weak[@]}" --checkpoint-every 500 --snapshot-steps 250,750
  run state-one 1 "${weak[@]}" --checkpoint-every 500 --snapshot-steps 250,750
  rm -rf "$WORK/state-cut" "$WORK/state-cut1"
  ("${MPIRUN[@]}" -np 2 $FD wave --backend cuda --quiet --output "$WORK/state-cut" "${weak[@]}" \
     --checkpoint-every 100 2>>"$LOG" &
   pid=$!
   while [ ! -f "$WORK/state-cut/checkpoint.ckpt" ] && kill -0 $pid 2>/dev/null; do sleep 0.05; done
   kill -TERM $pid 2>/dev/null
   wait $pid) || true
  if [ -f "$WORK/state-cut/checkpoint.ckpt" ]; then
    cp -r "$WORK/state-cut" "$WORK/state-cut1"
    "${MPIRUN[@]}" -np 2 $FD wave --backend cuda --quiet "${weak[@]}" --resume --output "$WORK/state-cut" \
      2>>"$LOG" || { echo "resume on 2 GPUs FAILED" | tee -a "$LOG"; status=1; }
    $FD wave --backend cuda --quiet "${weak[@]}" --resume --output "$WORK/state-cut1" 2>>"$LOG" ||
      { echo "resume on 1 GPU FAILED" | tee -a "$LOG"; status=1; }
  else
    echo "no checkpoint to resume" | tee -a "$LOG"
    status=1
  fi
  python3 bench/mgpu_report.py --state "$WORK" "$OUT/mgpu-state.json" | tee -a "$LOG"
  report mgpu-state-runs
}

stage_faces() {  # the chunk length of a slab (its face chunks) at 1024^3, R = 4, on every GPU
  run strong-r4-1 1 $(box 1024 1024 4)
  for nw in 16 8 32; do run "strong-r4-$GPUS-nw$nw" "$GPUS" $(box 1024 1024 4 --kernel-params "{\"nw\":$nw}"); done
  report mgpu-faces
}

# The command-line tests that need GPUs (split runs and surveys on them, --backend auto), with
# the carried tool: the cpu cases ran in CI.
stage_clitest() {
  python3 tests/scripts/test_wave_mpi_cli.py "$FD" "${MPIRUN[@]}" -- -k cuda -k gpus -k auto >/tmp/clitest.log 2>&1 ||
    status=1
  cat /tmp/clitest.log >>"$LOG"
  grep -E "^test_|^Ran|^OK|^FAILED" /tmp/clitest.log
}

# A stage is skipped once the call has run MGPU_DEADLINE seconds (the device tool ends a call at
# 600 s and returns only what is under $OUT by then: a stage cut short loses its table).
for stage in "$@"; do
  if [ "$SECONDS" -gt "${MGPU_DEADLINE:-100000}" ]; then
    echo "=== $stage skipped: $SECONDS s into the call" | tee -a "$LOG"
    continue
  fi
  echo "=== $stage ($(date +%T))" | tee -a "$LOG"
  "stage_$stage"
done
echo "=== done ($(date +%T)), status $status" | tee -a "$LOG"
exit $status
