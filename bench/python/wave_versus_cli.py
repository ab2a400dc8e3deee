#!/usr/bin/env python3
"""One 3D shot run through fdstencil.wave.forward and through `fdstencil wave`, the same model,
shot and options, alternated over several repeats (issue 36: a 512^3 run from Python within 2 % of
the CLI's). Checks first that the two write the same traces, byte for byte.

For each path and radius it reports the medians of:
  gpts      the time loop's rate (the solver's timing: points with the layers x steps / loop_s)
  total_s   the solver's own setup + loop + downloads
  wall_s    the whole call: for the CLI the process (start, checks, outputs written); for Python
            forward's call (the model's copy into the solver, the traces returned), from NumPy and,
            where PyTorch sees a GPU, from a CUDA tensor (copied to the host once, docs/python.md)
and the copy bandwidth each run measured.

Usage: python3 bench/python/wave_versus_cli.py --cli build/fdstencil [--size 512] [--radius 4]
       [--cpml 10] [--steps 1000] [--repeats 3] [--backend cuda] [--output FILE.json]
Exit status: 0; 1 when the traces differ; 2 for a missing tool or package (it says which).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

VELOCITY = 2000.0  # m/s, a constant medium (the CLI's --constant): the step's cost does not depend on it
SPACING = 10.0  # m
F0 = 10.0  # Hz, the Ricker's peak: ~20 points a wavelength at 2000 m/s


def shot_geometry(n):
    """A source in the middle and a line of receivers 2 points below the top, along x, metres."""
    mid = (n // 2) * SPACING
    top = 2 * SPACING
    return [mid, mid, mid], (top, mid, 0.0), (top, mid, (n - 1) * SPACING), n // 4


def run_cli(a, radius, folder):
    src, r0, r1, nrec = shot_geometry(a.size)
    cmd = [a.cli, "wave", "--constant", str(VELOCITY), "--shape", f"{a.size},{a.size},{a.size}", "--spacing",
           str(SPACING), "--steps", str(a.steps), "--radius", str(radius), "--cpml", str(a.cpml), "--ricker", str(F0),
           "--source", ",".join(map(str, src)), "--receiver-line",
           f"{','.join(map(str, r0))}:{','.join(map(str, r1))}:{nrec}", "--backend", a.backend, "--no-final",
           "--quiet", "--output", folder]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr}")
    with open(os.path.join(folder, "summary.json")) as f:
        timing = json.load(f)["timing"]
    return np.load(os.path.join(folder, "shot.npy")), wall, timing


def run_python(fdstencil, a, radius, model):
    src, r0, r1, nrec = shot_geometry(a.size)
    receivers = np.linspace(r0, r1, nrec)
    dt = fdstencil.wave.max_stable_dt(3, radius, SPACING, VELOCITY) * 0.8
    wavelet = fdstencil.wave.ricker(F0, dt, a.steps)
    t0 = time.perf_counter()
    shot = fdstencil.wave.forward(model, SPACING, a.steps, [src], wavelet, receivers, dt=dt, radius=radius,
                                  cpml=a.cpml, backend=a.backend, measure_bound=True)
    wall = time.perf_counter() - t0
    traces = shot.traces.cpu().numpy() if hasattr(shot.traces, "cpu") else np.asarray(shot.traces)
    return traces, wall, shot.timing


def medians(runs):
    keys = ("gpts", "total_s", "wall_s", "copy_gbps", "loop_s", "setup_s")
    return {k: statistics.median(r[k] for r in runs) for k in keys} | {"runs": runs}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", required=True, help="the fdstencil tool")
    p.add_argument("--size", type=int, default=512, help="the model's edge, points, before the layers (default 512)")
    p.add_argument("--radius", default="4", help="radii, comma-separated (default 4)")
    p.add_argument("--cpml", type=int, default=10, help="absorbing points outside every face (default 10)")
    p.add_argument("--steps", type=int, default=1000, help="time steps (default 1000)")
    p.add_argument("--repeats", type=int, default=3, help="runs of each path, alternated (default 3)")
    p.add_argument("--backend", default="cuda", help="cuda or cpu (default cuda)")
    p.add_argument("--output", help="write the figures as JSON here (default: print them)")
    a = p.parse_args()
    if not os.access(a.cli, os.X_OK):
        print(f"wave_versus_cli.py: error: --cli {a.cli} is not an executable", file=sys.stderr)
        return 2
    try:
        import fdstencil
    except ImportError:
        print(f"wave_versus_cli.py: error: fdstencil is not importable by {sys.executable}", file=sys.stderr)
        return 2
    try:
        import torch
        gpu_torch = torch.cuda.is_available() and a.backend == "cuda"
    except ImportError:
        gpu_torch = False
    model = np.full((a.size,) * 3, VELOCITY, np.float32)
    records = []
    for radius in (int(r) for r in a.radius.split(",")):
        paths = {"cli": [], "python_numpy": []} | ({"python_torch_cuda": []} if gpu_torch else {})
        for rep in range(a.repeats):
            with tempfile.TemporaryDirectory() as tmp:
                ref, wall, t = run_cli(a, radius, os.path.join(tmp, "run"))
            paths["cli"].append(t | {"wall_s": wall})
            for name in paths:
                if name == "cli":
                    continue
                m = torch.from_numpy(model).cuda() if name == "python_torch_cuda" else model
                traces, wall, t = run_python(fdstencil, a, radius, m)
                del m
                if traces.tobytes() != ref.tobytes():
                    print(f"wave_versus_cli.py: R = {radius}: {name}'s traces differ from the CLI's", file=sys.stderr)
                    return 1
                paths[name].append({k: t.get(k, 0.0) for k in ("gpts", "loop_s", "setup_s", "total_s", "copy_gbps")}
                                   | {"wall_s": wall})
            print(f"R = {radius}, repeat {rep + 1}: " + ", ".join(
                f"{k} {v[-1]['gpts']:.1f} GPts/s ({v[-1]['wall_s']:.2f} s)" for k, v in paths.items()), flush=True)
        summary = {k: medians(v) for k, v in paths.items()}
        for k in summary:
            summary[k]["gpts_vs_cli"] = summary[k]["gpts"] / summary["cli"]["gpts"]
            summary[k]["wall_vs_cli"] = summary[k]["wall_s"] / summary["cli"]["wall_s"]
        records.append({"radius": radius, "paths": summary})
    doc = {"size": a.size, "cpml": a.cpml, "padded": a.size + 2 * a.cpml, "steps": a.steps, "dtype": "float32",
           "backend": a.backend, "repeats": a.repeats, "same_traces": True,
           "device": torch.cuda.get_device_name() if gpu_torch else "cpu", "records": records}
    text = json.dumps(doc, indent=1)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")
    print(json.dumps([{"radius": r["radius"]} | {k: {m: round(v[m], 4) for m in ("gpts", "wall_s", "gpts_vs_cli",
                                                                                  "wall_vs_cli", "copy_gbps")}
                                                  for k, v in r["paths"].items()} for r in records], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
