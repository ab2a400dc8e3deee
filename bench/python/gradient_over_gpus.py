#!/usr/bin/env python3
"""A survey's FWI gradient and RTM stack through fdstencil.wave.gradient_many / rtm_many on one
GPU, then spread over every visible GPU (issue 37): the wall time of each, shots per second, the
speed-up and GPts/s (the padded grid's points x steps x shots over the call, forward and backward
together). Checks first that the spread call's misfit, gradient, traces and image are the bits the
one-GPU call gave. Each GPU's copy bandwidth is measured in the same run (forward_many's
measure_bound, one shot a GPU).

Usage: python3 bench/python/gradient_over_gpus.py [--dim 2] [--size 2000] [--cpml 20] [--radius 4]
       [--steps 2000] [--shots 16] [--repeats 3] [--output FILE.json]
Exit status: 0; 1 when the spread call's results differ; 2 without a GPU (it says so).
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

import fdstencil
import fdstencil.wave as fw

SPACING = 10.0  # m


def survey(a, dt):
    """A two-layer model, `shots` sources along x at 3 points' depth, 64 receivers each at 2 points'
    depth, and each shot's observed record from a model 2 % faster below the interface."""
    v = np.full((a.size,) * a.dim, 1800, np.float32)
    v[a.size // 2:] = 2600
    span = (a.size - 1) * SPACING
    mid = [span / 2] if a.dim == 3 else []
    rec = np.stack([np.full(64, 2 * SPACING)] + [np.full(64, m) for m in mid] + [np.linspace(0, span, 64)], 1)
    shots = [{"sources": [[3 * SPACING] + mid + [span * (i + 0.5) / a.shots]],
              "wavelets": fw.ricker(8, dt, a.steps), "receivers": rec} for i in range(a.shots)]
    truth = v.copy()
    truth[a.size // 2:] *= np.float32(1.02)
    common = dict(spacing=SPACING, nt=a.steps, dt=dt, radius=a.radius, cpml=a.cpml, double=False, backend="cuda")
    for s in shots:
        s["observed"] = fw.modelled(truth, sources=s["sources"], wavelets=s["wavelets"], receivers=s["receivers"],
                                    **common)
        s["recorded"] = s["observed"]
    return v, shots


def timed(call, repeats):
    """The result of the last of `repeats` calls, and each call's seconds."""
    seconds = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = call()
        seconds.append(time.perf_counter() - t0)
    return out, seconds


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dim", type=int, choices=(2, 3), default=2, help="2 or 3 (default 2)")
    p.add_argument("--size", type=int, default=2000, help="the model's edge, points (default 2000)")
    p.add_argument("--cpml", type=int, default=20, help="absorbing points outside every face (default 20)")
    p.add_argument("--radius", type=int, default=4, help="the stencil's radius (default 4)")
    p.add_argument("--steps", type=int, default=2000, help="time steps a shot (default 2000)")
    p.add_argument("--shots", type=int, default=16, help="shots (default 16)")
    p.add_argument("--repeats", type=int, default=3, help="timed calls of each kind; medians (default 3)")
    p.add_argument("--output", help="write the figures as JSON here (default: print them)")
    a = p.parse_args()
    gpus = fdstencil._core.gpu_count()
    if gpus == 0:
        print("gradient_over_gpus.py: error: fdstencil sees no GPU", file=sys.stderr)
        return 2
    dt = 0.8 * fw.max_stable_dt(a.dim, a.radius, SPACING, 2600.0 * 1.02)
    v, shots = survey(a, dt)
    every = list(range(gpus))
    common = dict(dt=dt, radius=a.radius, cpml=a.cpml, double=False, backend="cuda")
    plain = [{k: s[k] for k in ("sources", "wavelets", "receivers")} for s in shots[:gpus]]
    bound = fw.forward_many(v, SPACING, 100, plain, dt=dt, radius=a.radius, cpml=a.cpml, backend="cuda",
                            measure_bound=True, devices=every)
    gradient = lambda devices: fw.gradient_many(v, SPACING, a.steps, shots, devices=devices, info=True,  # noqa: E731
                                                **common)
    image = lambda devices: fw.rtm_many(v, SPACING, a.steps, shots, devices=devices, info=True, **common)  # noqa
    gradient(every)  # warm-up: every GPU's context and kernels
    one, one_s = timed(lambda: gradient([0]), a.repeats)
    spread, spread_s = timed(lambda: gradient(every), a.repeats)
    img_one, img_one_s = timed(lambda: image([0]), a.repeats)
    img_spread, img_spread_s = timed(lambda: image(every), a.repeats)
    same = (one[0] == spread[0] and one[1].tobytes() == spread[1].tobytes()
            and all(x.tobytes() == y.tobytes() for x, y in zip(one[2], spread[2]))
            and img_one[0].tobytes() == img_spread[0].tobytes())
    if not same:
        print("gradient_over_gpus.py: the spread call's results differ from the one-GPU call's", file=sys.stderr)
        return 1
    padded = (a.size + 2 * a.cpml) ** a.dim * a.steps * a.shots
    med = {k: statistics.median(s) for k, s in
           (("gradient_one", one_s), ("gradient_spread", spread_s), ("rtm_one", img_one_s), ("rtm_spread", img_spread_s))}
    doc = {"dim": a.dim, "size": a.size, "cpml": a.cpml, "radius": a.radius, "steps": a.steps, "shots": a.shots,
           "dtype": "float32", "gpus": gpus, "gpu_names": [fdstencil._core.gpu_name(g) for g in every],
           "copy_gbps": {s.timing["device"]: s.timing["copy_gbps"] for s in bound},
           "seconds": {"gradient_one_gpu": one_s, "gradient_all_gpus": spread_s, "rtm_one_gpu": img_one_s,
                       "rtm_all_gpus": img_spread_s},
           "median_s": med,
           "gradient_speedup": med["gradient_one"] / med["gradient_spread"],
           "rtm_speedup": med["rtm_one"] / med["rtm_spread"],
           "gradient_gpts": {"one_gpu": padded / med["gradient_one"] / 1e9,
                             "all_gpus": padded / med["gradient_spread"] / 1e9},
           "rtm_gpts": {"one_gpu": padded / med["rtm_one"] / 1e9, "all_gpus": padded / med["rtm_spread"] / 1e9},
           "shots_per_gpu": {g: sum(k["device"] == g for k in spread[3]) for g in every},
           "storage_first_shot": spread[3][0], "misfit": spread[0], "same_bits": True}
    text = json.dumps(doc, indent=1)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
