#!/usr/bin/env python3
"""Where a fdstencil.wave.forward call's time goes before its time loop (issue 36: at 472^3 the
setup was half a call). One shot (3D, or 2D with --dim 2), a few steps, from NumPy and, where PyTorch sees a GPU, from a
CUDA tensor, each repeated; the first call of each kind also pays for the CUDA context and the
module's first use, so the medians are over the repeats after it. The CUDA tensor runs twice a
round: read where it is (`torch_cuda`, the default: the model's checks and m built on its GPU) and
through the host as before (`torch_cuda_via_host`: fdstencil.wave's in-place path turned off). The
kinds alternate, one call each a round.

Reported per call (seconds, the timing dict of docs/python.md):
  prepare_s      Python's side before the solver: the model as float32 NumPy (a GPU tensor copied
                 to the host, on the host path), the shot's arrays
  model_s        the C++ check and summary of the model (extremes, checksum), one pass
  setup_phases_s the solver's setup by phase (checks, memory, taps, identity, medium, state)
  setup_s        the solver's setup in all, loop_s its time loop, call_s the whole call

Usage: python3 bench/python/setup_cost.py [--dim 3] [--size 472] [--cpml 20] [--radius 4] [--steps 20]
       [--repeats 4] [--backend cuda] [--output FILE.json]
Exit status: 0; 2 for a missing package (it says which).
"""
import argparse
import json
import statistics
import sys

import numpy as np

VELOCITY = 2000.0  # m/s, constant: the setup's cost does not depend on the values
SPACING = 10.0  # m
F0 = 10.0  # Hz


def one_call(fdstencil, model, a, via_host=False, measure_bound=False):
    n = a.size
    mid = (n // 2) * SPACING
    dt = fdstencil.wave.max_stable_dt(a.dim, a.radius, SPACING, VELOCITY) * 0.8
    wavelet = fdstencil.wave.ricker(F0, dt, a.steps)
    top, last = (2 * SPACING, mid, 0.0), (2 * SPACING, mid, (n - 1) * SPACING)
    if a.dim == 2:
        top, last = (top[0], top[2]), (last[0], last[2])
    receivers = np.linspace(top, last, n // 4)
    in_place = fdstencil.wave._in_place_on_gpu
    if via_host:
        fdstencil.wave._in_place_on_gpu = lambda *args: None
    try:
        shot = fdstencil.wave.forward(model, SPACING, a.steps, [[mid] * a.dim], wavelet, receivers, dt=dt,
                                      radius=a.radius, cpml=a.cpml, backend=a.backend, measure_bound=measure_bound)
    finally:
        fdstencil.wave._in_place_on_gpu = in_place
    t = shot.timing
    return {k: t[k] for k in ("prepare_s", "model_s", "setup_s", "loop_s", "total_s", "call_s", "gpts")} | {
        "setup_phases_s": dict(t["setup_phases_s"]), "kernel": t["kernel"], "backend": t["backend"],
        "copy_gbps": t.get("copy_gbps")}


def summary(calls):
    later = calls[1:] if len(calls) > 1 else calls
    med = {k: statistics.median(c[k] for c in later)
           for k in ("prepare_s", "model_s", "setup_s", "loop_s", "total_s", "call_s", "gpts")}
    med["setup_phases_s"] = {p: statistics.median(c["setup_phases_s"][p] for c in later)
                             for p in later[0]["setup_phases_s"]}
    return {"median_after_first": med, "calls": calls}


def line(name, med):
    phases = " ".join(f"{p} {s:.3f}" for p, s in med["setup_phases_s"].items())
    return (f"{name}: call {med['call_s']:.3f} s = prepare {med['prepare_s']:.3f} + model {med['model_s']:.3f} + "
            f"solver {med['total_s']:.3f} (setup {med['setup_s']:.3f}: {phases}; loop {med['loop_s']:.3f})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dim", type=int, default=3, choices=(2, 3))
    p.add_argument("--size", type=int, default=472, help="the model's edge, points, before the layers")
    p.add_argument("--cpml", type=int, default=20, help="absorbing points on each face (default 20)")
    p.add_argument("--radius", type=int, default=4)
    p.add_argument("--steps", type=int, default=20, help="steps per call: few, the setup is the subject")
    p.add_argument("--repeats", type=int, default=4, help="calls of each kind, the first not in the medians")
    p.add_argument("--backend", default="auto", choices=("auto", "cuda", "cpu"))
    p.add_argument("--output", help="write the calls and medians here as JSON")
    a = p.parse_args()
    try:
        import fdstencil
    except ImportError as e:
        print(f"setup_cost: the fdstencil package is not importable ({e})", file=sys.stderr)
        return 2
    out = {"dim": a.dim, "size": a.size, "cpml": a.cpml, "radius": a.radius, "steps": a.steps, "kinds": {}}
    v = np.full((a.size,) * a.dim, VELOCITY, dtype=np.float32)
    kinds = {"numpy": (v, False)}
    try:
        import torch
        if torch.cuda.is_available() and a.backend != "cpu":
            t = torch.from_numpy(v).cuda()
            kinds["torch_cuda"] = (t, False)
            kinds["torch_cuda_via_host"] = (t, True)
    except ImportError:
        print("setup_cost: PyTorch is not installed: NumPy models only", file=sys.stderr)
    calls = {name: [] for name in kinds}
    for _ in range(a.repeats):
        for name, (model, via_host) in kinds.items():
            calls[name].append(one_call(fdstencil, model, a, via_host))
    for name in kinds:
        out["kinds"][name] = summary(calls[name])
        print(line(name, out["kinds"][name]["median_after_first"]), flush=True)
    # The copy bandwidth beside the figures: one more call that measures it (its probe would
    # otherwise sit in the setup timed above).
    out["copy_gbps"] = one_call(fdstencil, v, a, measure_bound=a.backend != "cpu")["copy_gbps"]
    if out["copy_gbps"]:
        print(f"copy bandwidth {out['copy_gbps']:.0f} GB/s (the same run)", flush=True)
    if a.output:
        with open(a.output, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
