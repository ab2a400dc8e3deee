#!/usr/bin/env python3
"""fdstencil.wave.forward against Deepwave's deepwave.scalar, both called from Python on the same
PyTorch CUDA model: one shot, the same grid, time step, Ricker source, receivers and absorbing
width, order 2R in space (Deepwave's accuracy = 2R), float32. Each pair runs once to warm up and
then `--repeats` times alternated; medians are quoted (issues 35 and 36).

Rates are in GPts/s over the model and its layers (the padded grid, as Deepwave counts) per call:
  wall_gpts   padded points x steps / the call's wall time (both: the call until its traces are
              on the GPU and the device is idle)
  loop_gpts   fdstencil only: its time loop alone (the solver's timing)
  step_gpts   Deepwave only: padded points x its internal steps / the call's wall time
fdstencil's copy bandwidth, measured in its warm-up call (the timed calls leave that probe out), is
reported beside them.

Both take the same dt, 0.8 of fdstencil's stability limit. Deepwave divides a dt above its own
Courant number (0.6 by default, whatever the order) into `step_ratio` internal steps: at this dt it
takes two steps per sample for R <= 4. Per call, that is what a user giving the same dt waits
for; per step, it is step_gpts. `--match-steps` passes Deepwave the Courant number of the shared
dt, so that both take exactly `--steps` steps of the same length (the per-step comparison).

Usage: python3 bench/python/versus_deepwave.py [--dim 3] [--size 472] [--layer 20]
       [--steps 1000] [--radius 1,2,4] [--repeats 3] [--match-steps] [--output FILE.json]
Exit status: 0; 2 without PyTorch with a GPU, Deepwave or fdstencil (it says which).
"""
import argparse
import json
import math
import statistics
import sys
import time

import numpy as np

VELOCITY = 2000.0  # m/s, constant: the step's cost does not depend on the medium
SPACING = 10.0  # m
F0 = 10.0  # Hz


def geometry(dim, n):
    """Grid indices of the source (the middle) and of a receiver line 2 points below the top."""
    mid = n // 2
    src = [mid] * dim
    rec = [[2] + [mid] * (dim - 2) + [x] for x in range(0, n, 4)]
    return np.array(src, np.int64), np.array(rec, np.int64)


def fdstencil_call(fdstencil, torch, vt, a, radius, dt, wavelet, src, rec, probe=False):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    shot = fdstencil.wave.forward(vt, SPACING, a.steps, [src * SPACING], wavelet, rec * SPACING, dt=dt,
                                  radius=radius, cpml=a.layer, backend="cuda", measure_bound=probe)
    torch.cuda.synchronize()
    return time.perf_counter() - t0, shot.timing


def courant_number(dim, dt):
    """The Courant number of dt in Deepwave's convention, dt v sqrt(dim) / h, raised by 1e-9 so that
    its own rounding cannot ask for a second substep."""
    return dt * VELOCITY * math.sqrt(dim) / SPACING * (1 + 1e-9)


def deepwave_call(deepwave, torch, vt, a, radius, dt, wavelet, src, rec):
    amp = torch.from_numpy(wavelet.astype(np.float32)).reshape(1, 1, -1).cuda()
    s = torch.from_numpy(src.reshape(1, 1, -1)).cuda()
    r = torch.from_numpy(rec.reshape(1, len(rec), -1)).cuda()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    deepwave.scalar(vt, SPACING, dt, source_amplitudes=amp, source_locations=s, receiver_locations=r,
                    accuracy=2 * radius, pml_width=a.layer, pml_freq=F0,
                    courant_number=courant_number(a.dim, dt) if a.match_steps else None)
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dim", type=int, choices=(2, 3), default=3, help="2 or 3 (default 3)")
    p.add_argument("--size", type=int, default=472, help="the model's edge, points, before the layers (default 472)")
    p.add_argument("--layer", type=int, default=20, help="absorbing points on every side (default 20)")
    p.add_argument("--steps", type=int, default=1000, help="time steps (default 1000)")
    p.add_argument("--radius", default="1,2,4", help="radii R, comma-separated; Deepwave's accuracy 2R (default 1,2,4)")
    p.add_argument("--repeats", type=int, default=3, help="timed calls of each, alternated (default 3)")
    p.add_argument("--match-steps", action="store_true",
                   help="give Deepwave the shared dt's Courant number, so that it takes no internal substeps")
    p.add_argument("--output", help="write the figures as JSON here (default: print them)")
    a = p.parse_args()
    try:
        import torch
        import deepwave
        import fdstencil
    except ImportError as e:
        print(f"versus_deepwave.py: error: {e.name} is not installed for {sys.executable}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("versus_deepwave.py: error: PyTorch sees no GPU", file=sys.stderr)
        return 2
    vt = torch.full((a.size,) * a.dim, VELOCITY, device="cuda")
    src, rec = geometry(a.dim, a.size)
    padded = (a.size + 2 * a.layer) ** a.dim
    records = []
    for radius in (int(r) for r in a.radius.split(",")):
        dt = 0.8 * fdstencil.wave.max_stable_dt(a.dim, radius, SPACING, VELOCITY)
        wavelet = fdstencil.wave.ricker(F0, dt, a.steps)[:a.steps]
        args = (torch, vt, a, radius, dt, wavelet, src, rec)
        # The warm-up (kernels loaded, memory taken, clocks up) also measures the copy bandwidth; the
        # timed calls leave that probe out, as a user's call does.
        _, probe = fdstencil_call(fdstencil, *args, probe=True)
        deepwave_call(deepwave, *args)
        f_runs, d_runs = [], []
        for _ in range(a.repeats):
            wall, timing = fdstencil_call(fdstencil, *args)
            f_runs.append({"wall_s": wall, "wall_gpts": padded * a.steps / wall / 1e9} | timing)
            wall = deepwave_call(deepwave, *args)
            d_runs.append({"wall_s": wall, "wall_gpts": padded * a.steps / wall / 1e9})
        f = {k: statistics.median(r[k] for r in f_runs) for k in ("wall_gpts", "gpts")}
        f["copy_gbps"] = probe["copy_gbps"]
        f["percent_of_bound"] = 100 * f["gpts"] / probe["bound_gpts"]
        d = statistics.median(r["wall_gpts"] for r in d_runs)
        ratio = deepwave.discretisation.cfl_condition_n(
            [SPACING] * a.dim, dt, VELOCITY, courant_number=courant_number(a.dim, dt) if a.match_steps else None)[1]
        records.append({"radius": radius, "accuracy": 2 * radius, "fdstencil_wall_gpts": f["wall_gpts"],
                        "fdstencil_loop_gpts": f["gpts"], "fdstencil_copy_gbps": f["copy_gbps"],
                        "fdstencil_percent_of_bound": f["percent_of_bound"], "deepwave_wall_gpts": d,
                        "deepwave_step_ratio": ratio, "deepwave_step_gpts": d * ratio,
                        "ratio_wall": f["wall_gpts"] / d, "fdstencil_runs": f_runs, "deepwave_runs": d_runs})
        print(f"R = {radius}: fdstencil {f['wall_gpts']:.1f} GPts/s per call ({f['gpts']:.1f} in its loop, copy "
              f"{f['copy_gbps']:.0f} GB/s), Deepwave {d:.1f} ({ratio} internal steps a sample: {d * ratio:.1f} "
              f"a step): {f['wall_gpts'] / d:.2f}x", flush=True)
    doc = {"dim": a.dim, "size": a.size, "layer": a.layer, "padded_points": padded, "steps": a.steps,
           "dtype": "float32", "repeats": a.repeats, "device": torch.cuda.get_device_name(),
           "match_steps": a.match_steps, "torch": torch.__version__, "deepwave": deepwave.__version__,
           "fdstencil": fdstencil.__version__, "records": records}
    text = json.dumps(doc, indent=1)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
