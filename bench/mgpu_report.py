#!/usr/bin/env python3
"""Tables of wave runs across GPUs (bench/mgpu.sh, issue 31).

    mgpu_report.py RUNS_DIR OUT.json      every run directory's summary.json (and every survey's
                                          survey.json) as one table, with the scaling efficiencies
    mgpu_report.py --line RUN_DIR         one run's line of that table
    mgpu_report.py --state RUNS_DIR OUT.json  the state runs (bench/mgpu.sh state): checkpoint
                                          cost, and the resumed runs against the uninterrupted
    mgpu_report.py --make-survey N FILE   a survey of N shots on a 216^3 model (bench/mgpu.sh survey)

A run directory is named <kind>-r<R>-<gpus>[-<tag>] (weak, strong, big) or survey-<gpus>.
Efficiency: weak = GPts/s on g GPUs / (g x on 1); strong likewise (the same domain on every g).
"""
import glob
import json
import os
import re
import sys


def run_row(summary):
    t, r = summary["timing"], summary.get("ranks", {})
    row = {
        "gpts": t["gpts"], "loop_s": t["loop_s"], "total_s": t["total_s"], "steps": summary["steps"],
        "step_ms": 1e3 * t["loop_s"] / summary["steps"], "copy_gbps": t["copy_gbps"],
        "percent_of_bound": t["percent_of_bound"], "points": summary["domain"]["points"],
        "kernel": summary["kernel"], "ranks": r.get("count", 1), "device_bytes": t["device_bytes"],
    }
    for key in ("overlap_asked", "overlap", "exchange_ms", "inside_ms", "device_bytes", "host_peak_bytes", "probe"):
        if key in r:
            row["rank_" + key if key.endswith("bytes") else key] = r[key]
    if "analytic" in summary:
        row["analytic_misfit"] = summary["analytic"]["misfit"]
    return row


def survey_row(manifest):
    shots = manifest.get("shots", [])
    row = {k: manifest.get(k) for k in ("ranks", "batch", "wall_s", "shots_run", "shots_per_s", "copy_gbps")} | {
        "shot_loop_s": [s.get("loop_s") for s in shots]}
    # How the ranks' shots were dealt: each takes the next whenever it is free.
    if any("rank" in s for s in shots):
        row["shots_by_rank"] = [sum(1 for s in shots if s.get("rank") == r) for r in range(manifest.get("ranks", 1))]
    # Where a shot's time goes beside its loop: the solver's setup before it, the solver's whole
    # run, and the shot's whole time in the survey (checks, outputs, checksums); medians.
    for key in ("setup_s", "total_s", "shot_s"):
        values = sorted(s[key] for s in shots if key in s)
        if values:
            row["median_" + key] = values[len(values) // 2]
    # The shots that ran on the GPU state a rank's earlier shot left (wave::Options::kept_state).
    if any("state_kept" in s for s in shots):
        row["shots_state_kept"] = sum(1 for s in shots if s.get("state_kept"))
    return row


def efficiencies(runs):
    out = {}
    for name, row in runs.items():
        m = re.fullmatch(r"(weak|strong)-r(\d)-(\d+)(-.*)?", name)
        if not m or m.group(3) == "1":
            continue
        one = runs.get(f"{m.group(1)}-r{m.group(2)}-1")
        if one:
            g = int(m.group(3))
            out[name] = row["gpts"] / (g * one["gpts"])
    return out


def survey_efficiencies(surveys):
    one = surveys.get("survey-1")
    out = {}
    for name, row in surveys.items():
        g = int(name.split("-")[1])
        if one and g > 1 and one["shots_per_s"] and name.startswith("survey-"):
            out[name] = row["shots_per_s"] / (g * one["shots_per_s"])
    return out


def line(name, row):
    probe = row.get("probe", {})
    return (f"{name:22s} {row['gpts']:7.1f} GPts/s {row['percent_of_bound']:5.1f} % of bound (copy "
            f"{row['copy_gbps']:.0f} GB/s) step {row['step_ms']:.3f} ms  overlap {row.get('overlap', '-')}"
            f" (on {probe.get('on_ms_per_step', 0):.3f} / off {probe.get('off_ms_per_step', 0):.3f} ms)"
            f" exchange {row.get('exchange_ms', 0):.3f} ms"
            f" device {max(row.get('rank_device_bytes', [row['device_bytes']])) / 2**30:.2f} GiB/rank"
            + (f"  misfit {100 * row['analytic_misfit']:.2f} %" if "analytic_misfit" in row else ""))


def report(runs_dir, out_path):
    runs, surveys = {}, {}
    for f in sorted(glob.glob(os.path.join(runs_dir, "*", "summary.json"))):
        runs[os.path.basename(os.path.dirname(f))] = run_row(json.load(open(f)))
    # survey-<gpus>[-own]: one survey across the ranks; alone-<gpus>-gpu<i>: one process of several
    # run side by side (bench/mgpu.sh surveyalone)
    for f in sorted(glob.glob(os.path.join(runs_dir, "*", "survey.json"))):
        surveys[os.path.basename(os.path.dirname(f))] = survey_row(json.load(open(f)))
    eff, seff = efficiencies(runs), survey_efficiencies(surveys)
    for name, row in runs.items():
        print(line(name, row) + (f"  efficiency {100 * eff[name]:.1f} %" if name in eff else ""))
    for name, row in surveys.items():
        print(f"{name:22s} {row['shots_run']} shots in {row['wall_s']:.1f} s: {row['shots_per_s']:.3f} shots/s"
              + (f"  efficiency {100 * seff[name]:.1f} %" if name in seff else "")
              + "".join(f"  {k} {row[k]:.3f}" for k in ("median_setup_s", "median_total_s", "median_shot_s")
                        if k in row)
              + (f"  state kept {row['shots_state_kept']}" if "shots_state_kept" in row else ""))
    json.dump({"runs": runs, "efficiency": eff, "surveys": surveys, "survey_efficiency": seff},
              open(out_path, "w"), indent=1)


def state(runs_dir, out_path):
    import numpy as np  # the final fields and records; the device image has NumPy

    def summary(name):
        return json.load(open(os.path.join(runs_dir, name, "summary.json")))

    plain, files, one = summary("state-plain"), summary("state-files"), summary("state-one")
    c, c1 = files["checkpoint"], one["checkpoint"]
    peaks = files.get("ranks", {}).get("host_peak_bytes") or []
    # A rank's share: the one-GPU run's host peak over the ranks; the target allows 10 % above it.
    share = one["host_peak_bytes"] / 2
    out = {"plain": plain["timing"], "files": files["timing"], "one": one["timing"], "checkpoint": c,
           "checkpoint_one_gpu": c1, "host_peak_bytes": peaks, "one_gpu_host_peak_bytes": one["host_peak_bytes"],
           "share_bytes": share, "peak_over_share": max(peaks) / share if peaks else None,
           "device_bytes": files.get("ranks", {}).get("device_bytes")}
    print(f"2 GPUs: {c['count']} checkpoints of {c['bytes'] / 1e9:.2f} GB written by both ranks, "
          f"{c['seconds'] / max(c['count'], 1):.2f} s each; 1 GPU: {c1['count']} of {c1['bytes'] / 1e9:.2f} GB, "
          f"{c1['seconds'] / max(c1['count'], 1):.2f} s each in the loop, {c1['write_seconds']:.2f} s writing beside it")
    print(f"loop {plain['timing']['loop_s']:.3f} s plain, {files['timing']['loop_s']:.3f} s with checkpoints and "
          f"snapshots; host peak per rank {[round(p / 2**30, 2) for p in peaks]} GiB, one GPU's "
          f"{one['host_peak_bytes'] / 2**30:.2f} GiB, its half {share / 2**30:.2f} GiB: "
          f"{100 * out['peak_over_share']:.0f} % of the share" if peaks else "no per-rank peaks")
    ref_f = np.load(os.path.join(runs_dir, "state-plain", "final.npy"))
    ref_r = np.load(os.path.join(runs_dir, "state-plain", "shot.npy"))
    for name in ("state-files", "state-one", "state-cut", "state-cut1"):
        d = os.path.join(runs_dir, name)
        if not os.path.exists(os.path.join(d, "final.npy")):
            print(f"{name}: no final field")
            continue
        f, r, s = np.load(os.path.join(d, "final.npy")), np.load(os.path.join(d, "shot.npy")), summary(name)
        row = {"field_points_differing": int((f != ref_f).sum()), "record_max_abs_diff": float(np.abs(r - ref_r).max()),
               "record_peak": float(np.abs(ref_r).max()), "resumed_from_step": s["checkpoint"]["resumed_from_step"],
               "ranks": s.get("ranks", {}).get("count", 1)}
        out[name] = row
        print(f"{name}: ranks {row['ranks']}, resumed from {row['resumed_from_step']}: field points differing "
              f"{row['field_points_differing']}, record max |diff| {row['record_max_abs_diff']:.3g} of peak "
              f"{row['record_peak']:.3g}")
    # The snapshots both runs took, each rank's planes against one GPU's file, to the byte.
    for step in (250, 750):
        name = f"snapshot_{step:06d}.npy"
        a, b = os.path.join(runs_dir, "state-files", name), os.path.join(runs_dir, "state-one", name)
        if os.path.exists(a) and os.path.exists(b):
            same = open(a, "rb").read() == open(b, "rb").read()
            out[name] = {"same_bytes_as_one_gpu": same}
            print(f"{name}: {'the same bytes as' if same else 'DIFFERS from'} one GPU's")
    json.dump(out, open(out_path, "w"), indent=1)


def make_survey(n, path):
    # Sources spread over the middle of a 216^3 model (176^3 model points, h = 10 m).
    shots = [{"id": i + 1, "source": [880, 400 + 80 * (i % 12), 400 + 80 * ((i // 12) % 12)]} for i in range(n)]
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    json.dump({"shots": shots}, open(path, "w"), indent=1)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--line":
        d = sys.argv[2].rstrip("/")
        print(line(os.path.basename(d), run_row(json.load(open(os.path.join(d, "summary.json"))))))
    elif len(sys.argv) == 4 and sys.argv[1] == "--state":
        state(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "--make-survey":
        make_survey(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 3:
        report(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
