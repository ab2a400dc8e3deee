#!/usr/bin/env python3
"""Born modelling's cost against the forward run's, from Python on one GPU (issue 37): the same
shot (a constant model, a Ricker source in the middle, a receiver line two points below the top,
a CPML of `--layer` points on every face, order 2R, float32) through fdstencil.wave.modelled (the
forward run the linearised solvers step) and fdstencil.wave.born (the background and the
scattered field side by side, with Born's source term added each step), and through
fdstencil.wave.forward for the copy bandwidth of the card, measured in the same run.

Reported: medians of `--repeats` calls after a warm-up, in GPts/s over the padded grid (points x
steps / the call's wall time), and born's time over modelled's.

Usage: python3 bench/python/born_cost.py [--dim 2] [--size 2000] [--layer 20] [--steps 2000]
       [--radius 4] [--repeats 3] [--output FILE.json]
Exit status: 0; 2 without fdstencil's GPU backend or a GPU.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

VELOCITY = 2000.0  # m/s: the cost does not depend on the medium
SPACING = 10.0  # m
F0 = 10.0  # Hz


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dim", type=int, default=2, choices=(2, 3))
    p.add_argument("--size", type=int, default=2000, help="model points per axis (default 2000)")
    p.add_argument("--layer", type=int, default=20, help="CPML points on every face (default 20)")
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--radius", type=int, default=4)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--output", help="a JSON file for the figures")
    a = p.parse_args()
    try:
        import fdstencil
        import fdstencil.wave as fw
    except ImportError as e:
        print(f"born_cost: fdstencil is not importable: {e}", file=sys.stderr)
        return 2
    if fdstencil._core.gpu_count() == 0:
        print("born_cost: no GPU", file=sys.stderr)
        return 2
    n, dim = a.size, a.dim
    v = np.full((n,) * dim, VELOCITY, np.float32)
    dv = np.full(v.shape, 50.0)  # everywhere: scattered energy reaches the receivers from the first steps
    dt = 0.8 * fw.max_stable_dt(dim, a.radius, SPACING, VELOCITY)
    mid = (n // 2) * SPACING
    shot = dict(spacing=SPACING, nt=a.steps, sources=[[mid] * dim], wavelets=fw.ricker(F0, dt, a.steps)[:a.steps],
                receivers=[[2 * SPACING] + [mid] * (dim - 2) + [x * SPACING] for x in range(0, n, 4)], dt=dt,
                radius=a.radius, cpml=a.layer, double=False, backend="cuda")
    probe = fw.forward(v, SPACING, a.steps, shot["sources"], shot["wavelets"], shot["receivers"], dt=dt,
                       radius=a.radius, cpml=a.layer, backend="cuda", measure_bound=True)
    copy_gbps = probe.timing["copy_gbps"]
    calls = {"modelled": lambda: fw.modelled(v, **shot), "born": lambda: fw.born(v, dv, **shot)}
    seconds = {}
    for name, call in calls.items():
        call()  # warm-up
        times = []
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            out = call()
            times.append(time.perf_counter() - t0)
        assert np.all(np.isfinite(out)) and np.any(out != 0), name
        seconds[name] = statistics.median(times)
    points = float(n + 2 * a.layer) ** dim * a.steps
    doc = {"dim": dim, "size": n, "layer": a.layer, "steps": a.steps, "radius": a.radius, "dtype": "float32",
           "copy_gbps": copy_gbps, "modelled_s": seconds["modelled"], "born_s": seconds["born"],
           "modelled_gpts": points / seconds["modelled"] / 1e9, "born_gpts": points / seconds["born"] / 1e9,
           "born_over_modelled": seconds["born"] / seconds["modelled"]}
    print(f"{dim}D {n} + {a.layer}, R = {a.radius}, {a.steps} steps: modelled {doc['modelled_gpts']:.1f} GPts/s, "
          f"born {doc['born_gpts']:.1f} GPts/s ({doc['born_over_modelled']:.2f}x the time; copy {copy_gbps} GB/s)")
    if a.output:
        with open(a.output, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
