#!/usr/bin/env bash
# The cpu wave step of two builds side by side (issue 38's first step: interior_run): R = 4 and 8,
# float, 128^3 and 216^3 models with the default 10-point CPML and a 148^3 one without, STEPS steps
# (1000 unless set), each run REPS times (3 unless set) by each build in turn, OMP_NUM_THREADS
# threads (2 unless set). Writes each run's summary.json as OUT/<build>-<case>-<rep>.json and prints
# GPts/s.
# Usage: bash bench/cpu_step_compare.sh OLD_FDSTENCIL NEW_FDSTENCIL OUT
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 OLD_FDSTENCIL NEW_FDSTENCIL OUT" >&2; exit 2; }
old=$1 new=$2 out=$3
mkdir -p "$out"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
steps=${STEPS:-1000} reps=${REPS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A cases=(
  [r4-128-cpml10]="--shape 128,128,128 --source 640,640,640 --radius 4"
  [r8-128-cpml10]="--shape 128,128,128 --source 640,640,640 --radius 8"
  [r4-216-cpml10]="--shape 216,216,216 --source 1080,1080,1080 --radius 4"
  [r4-148-none]="--shape 148,148,148 --source 740,740,740 --radius 4 --cpml 0"
)
for c in "${!cases[@]}"; do
  for rep in $(seq "$reps"); do
    for b in old new; do
      fd=$old; [ $b = new ] && fd=$new
      # shellcheck disable=SC2086
      "$fd" wave --backend cpu --quiet --constant 2000 --spacing 10 --ricker 8 --no-final --steps "$steps" ${cases[$c]} \
        --output "$work/run" --overwrite
      cp "$work/run/summary.json" "$out/$b-$c-$rep.json"
      python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['timing']; print(sys.argv[2], f\"{t['gpts']:.4f} GPts/s\")" \
        "$out/$b-$c-$rep.json" "$b $c $rep"
    done
  done
done
