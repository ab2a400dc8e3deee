#!/usr/bin/env bash
# A split run's host memory per rank against the rank count (issue 31), on the cpu over MPI: one
# 3D run of 380 x 240 x 240 computational points (a 340 x 200 x 200 model in a 20-point CPML),
# R = 4, 20 steps, a checkpoint at step 10 and the final field, on 1, 2, 3 and 4 ranks. Each rank
# holds its slab's state and its planes of the model, and writes its part of the files; the peak
# resident memory of every rank comes from summary.json. Prints a table and writes
# $OUT/split-memory.json. Usage: bash bench/split_memory.sh [FDSTENCIL]
set -euo pipefail
cd "$(dirname "$0")/.."
FD=${1:-build-cpu/fdstencil}
OUT=${OUT:-bench/results/cpu}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
args=(wave --backend cpu --quiet --constant 2000 --shape 340,200,200 --spacing 10 --radius 4 --cpml 20
      --steps 20 --checkpoint-every 10 --source 1700,1000,1000 --ricker 8 --receiver-line "500,1000,1000:3000,1000,1000:8")
for p in 1 2 3 4; do
  launch=()
  [ "$p" -gt 1 ] && launch=(mpirun --oversubscribe -np "$p")
  "${launch[@]}" "$FD" "${args[@]}" --output "$WORK/p$p"
done
python3 - "$WORK" "$OUT/split-memory.json" <<'PY'
import json, os, sys
work, out = sys.argv[1], sys.argv[2]
rows = []
for p in (1, 2, 3, 4):
    s = json.load(open(os.path.join(work, f"p{p}", "summary.json")))
    peaks = s["ranks"]["host_peak_bytes"] if p > 1 else [s["host_peak_bytes"]]
    state = s["ranks"]["device_bytes"] if p > 1 else [s["timing"]["device_bytes"]]
    rows.append({"ranks": p, "host_peak_bytes": peaks, "state_bytes": state})
one = rows[0]["host_peak_bytes"][0]
for r in rows:
    worst = max(r["host_peak_bytes"])
    r["worst_over_one_per_rank"] = worst / (one / r["ranks"])
    print(f"{r['ranks']} rank(s): host peak per rank {[round(b / 2**20) for b in r['host_peak_bytes']]} MiB, "
          f"state {[round(b / 2**20) for b in r['state_bytes']]} MiB; the largest is "
          f"{100 * r['worst_over_one_per_rank']:.0f} % of one rank's peak / P")
os.makedirs(os.path.dirname(out), exist_ok=True)
json.dump({"case": "cpu, float, 380x240x240 computational, R 4, CPML 20, 20 steps, checkpoint at 10",
           "rows": rows}, open(out, "w"), indent=1)
PY
