#!/usr/bin/env python3
"""Shots of one 3D model through fdstencil.wave.forward_many on one GPU, then spread over every
visible GPU (issue 36): the wall time of each, shots per second, and the speed-up. Checks first
that every shot's traces from the spread run are the bits the one-GPU run gave it.

Usage: python3 bench/python/shots_over_gpus.py [--size 216] [--cpml 10] [--radius 4]
       [--steps 1000] [--shots 16] [--output FILE.json]
Exit status: 0; 1 when a shot's traces differ; 2 without a GPU (it says so).
"""
import argparse
import json
import sys
import time

import numpy as np

import fdstencil

SPACING = 10.0  # m


def survey(n, shots, dt, steps):
    """A layered model and `shots` sources along x at 3 points' depth, 64 receivers each."""
    v = np.full((n,) * 3, 1800, np.float32)
    v[n // 2:] = 2600
    span = (n - 1) * SPACING
    return v, [{"sources": [[3 * SPACING, span / 2, span * (i + 0.5) / shots]],
                "wavelets": fdstencil.wave.ricker(8, dt, steps),
                "receivers": np.stack([np.full(64, 2 * SPACING), np.full(64, span / 2), np.linspace(0, span, 64)], 1)}
               for i in range(shots)]


def timed(v, shots, a, dt, devices):
    t0 = time.perf_counter()
    runs = fdstencil.wave.forward_many(v, SPACING, a.steps, shots, dt=dt, radius=a.radius, cpml=a.cpml,
                                       backend="cuda", devices=devices)
    return time.perf_counter() - t0, runs


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=int, default=216, help="the model's edge, points (default 216)")
    p.add_argument("--cpml", type=int, default=10, help="absorbing points outside every face (default 10)")
    p.add_argument("--radius", type=int, default=4, help="the stencil's radius (default 4)")
    p.add_argument("--steps", type=int, default=1000, help="time steps a shot (default 1000)")
    p.add_argument("--shots", type=int, default=16, help="shots (default 16)")
    p.add_argument("--output", help="write the figures as JSON here (default: print them)")
    a = p.parse_args()
    gpus = fdstencil._core.gpu_count()
    if gpus == 0:
        print("shots_over_gpus.py: error: fdstencil sees no GPU", file=sys.stderr)
        return 2
    dt = 0.8 * fdstencil.wave.max_stable_dt(3, a.radius, SPACING, 2600.0)
    v, shots = survey(a.size, a.shots, dt, a.steps)
    timed(v, shots[:1], a, dt, list(range(gpus)))  # warm-up: every GPU's context and kernels
    one_s, one = timed(v, shots, a, dt, [0])
    all_s, spread = timed(v, shots, a, dt, list(range(gpus)))
    for i, (x, y) in enumerate(zip(one, spread)):
        if x.traces.tobytes() != y.traces.tobytes():
            print(f"shots_over_gpus.py: shot {i}: the spread run's traces differ from the one-GPU run's",
                  file=sys.stderr)
            return 1
    per_gpu = {g: sum(s.timing["device"] == g for s in spread) for g in range(gpus)}
    doc = {"size": a.size, "cpml": a.cpml, "radius": a.radius, "steps": a.steps, "shots": a.shots, "dtype": "float32",
           "gpus": gpus, "one_gpu_s": one_s, "all_gpus_s": all_s, "one_gpu_shots_per_s": a.shots / one_s,
           "all_gpus_shots_per_s": a.shots / all_s, "speedup": one_s / all_s, "shots_per_gpu": per_gpu,
           "loop_gpts_one_gpu": [s.timing["gpts"] for s in one], "loop_gpts_spread": [s.timing["gpts"] for s in spread],
           "same_traces": True}
    text = json.dumps(doc, indent=1)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")
    print(json.dumps({k: v for k, v in doc.items() if not k.startswith("loop_")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
