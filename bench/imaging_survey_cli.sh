#!/usr/bin/env bash
# A survey imaged from the command line (issue 37): fdstencil's own faulted model (300 x 1000 points
# of 10 m, fdstencil.models.faulted) recorded shot by shot by `fdstencil wave --survey`, then
# migrated by `fdstencil rtm --survey` in the smooth model, its stack kept after every shot, and
# the same survey's FWI gradient by `fdstencil gradient --survey`. Reports each command's wall time
# and the shots' own times from the summaries.
#
# Usage: bench/imaging_survey_cli.sh OUTDIR [SHOTS] [BACKEND] [DEVICES]   (defaults 32, auto, none)
# DEVICES: rtm's and gradient's --devices (e.g. all: the shots spread over every visible GPU).
# Needs the built tool (build/fdstencil, or $FDSTENCIL_CLI) and the Python module for the model
# (build/python, or $PYTHONPATH).
set -euo pipefail
out=${1:?usage: bench/imaging_survey_cli.sh OUTDIR [SHOTS] [BACKEND] [DEVICES]}
shots=${2:-32}
backend=${3:-auto}
spread=()
[ -z "${4:-}" ] || spread=(--devices "$4")
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${FDSTENCIL_CLI:-$root/build/fdstencil}
export PYTHONPATH=${PYTHONPATH:-$root/build/python}
mkdir -p "$out"
# The models, the survey file and the shared step (set by the inversion's upper velocity, so that
# both models' runs step alike and the records fit the migration).
dt=$(python3 - "$out" "$shots" <<'PY'
import json, sys
import numpy as np
import fdstencil.models as fm
import fdstencil.wave as fw
out, shots = sys.argv[1], int(sys.argv[2])
v = fm.faulted()
np.save(f"{out}/true.npy", v)
np.save(f"{out}/smooth.npy", fm.smoothed(v, 12.0))
xs = np.linspace(0.02, 0.98, shots) * 999 * 10.0
with open(f"{out}/survey.json", "w") as f:
    json.dump({"description": "sources 20 m deep along the surface",
               "shots": [{"id": i + 1, "source": [20.0, float(x)]} for i, x in enumerate(xs)]}, f)
print(0.8 * fw.max_stable_dt(2, 4, 10.0, 4500.0))
PY
)
run=(--spacing 10 --time 3.0 --dt "$dt" --ricker 8 --cpml 20 --radius 4 --receiver-line 10,0:10,9990:500
     --backend "$backend" --quiet --survey "$out/survey.json")
timed() {  # name, command...: the command's wall time into $out/times.txt
  local name=$1; shift
  local t0; t0=$(date +%s.%N)
  "$@"
  echo "$name $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s" | tee -a "$out/times.txt"
}
timed record "$cli" wave --model "$out/true.npy" --no-final "${run[@]}" -o "$out/records"
timed rtm "$cli" rtm --model "$out/smooth.npy" "${run[@]}" "${spread[@]}" --observed "$out/records" -o "$out/rtm"
timed gradient "$cli" gradient --model "$out/smooth.npy" "${run[@]}" "${spread[@]}" --observed "$out/records" \
  -o "$out/gradient"
python3 - "$out" <<'PY'
import collections, json, sys
out = sys.argv[1]
for kind in ("rtm", "gradient"):
    s = json.load(open(f"{out}/{kind}/summary.json"))
    per = sorted(e["storage"]["total_s"] for e in s["shots"])
    print(f"{kind}: {len(per)} shots, median {per[len(per) // 2]:.3f} s a shot in the library, "
          f"{s['seconds_this_invocation']:.2f} s in all; backend {s['shots'][0]['storage']['backend']}; "
          f"shots per GPU {dict(sorted(collections.Counter(e.get('gpu') for e in s['shots']).items()))}")
m = json.load(open(f"{out}/records/survey.json"))
print("record:", {k: m[k] for k in m if k in ("wall_s", "shots_per_s", "copy_gbps", "shots_run")})
PY
