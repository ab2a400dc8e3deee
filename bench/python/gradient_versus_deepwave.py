#!/usr/bin/env python3
"""The FWI gradient's cost: fdstencil.wave.gradient against Deepwave's deepwave.scalar with
loss.backward(), on one GPU, one shot, the same grid, dt, Ricker source, receivers and absorbing
width, order 2R in space (Deepwave's accuracy = 2R), float32 (issue 37's targets). Deepwave is
given the Courant number of the shared dt, so that both take the same steps.

For each tool, medians of `--repeats` calls after a warm-up:
  forward_gpts    padded points x steps / the forward call's wall time (fdstencil.wave.forward;
                  Deepwave without requires_grad)
  gradient_gpts   the same over the gradient's call (forward and backward: fdstencil.wave.gradient
                  with observed traces of zero, whose misfit is 1/2 sum d^2; Deepwave's
                  loss = sum d^2 and loss.backward())
  cost            gradient time / forward time
  peak_gib        the device memory in use above the call's start, at its highest: sampled every
                  2 ms from cudaMemGetInfo (which can miss a short peak), or PyTorch's own peak
                  allocation where that is higher
fdstencil runs three times: keeping every step's field, under a budget of `--budget` of that
(binomial checkpoints), and with boundary saving (the strips around the layers kept, the field
stepped back; fdstencil_boundary), and reports how far the last boundary-saving gradient lies
from the last every-field one off the model's outer faces (boundary_gap_abs, the largest
difference, and boundary_gap, that over the largest value there, null where the gradient is zero
there: at 2000^2 the receivers hear nothing within 2000 steps; the faces beside the layer take
shares the strips leave out). Its gradient's parts: gradient_forward_s (the first sweep, its fields
kept), backward_s (the adjoint and the steps run again), library_s (the C++ call whole: the rest
of gradient_s is Python's). The copy bandwidth of the card, measured once, is reported beside them.

`--no-deepwave` times fdstencil alone (where Deepwave cannot be carried).

Usage: python3 bench/python/gradient_versus_deepwave.py [--dim 2] [--size 2000] [--layer 20] [--no-deepwave]
       [--steps 2000] [--radius 4] [--repeats 3] [--budget 0.1] [--output FILE.json]
Exit status: 0; 2 without PyTorch with a GPU, Deepwave or fdstencil (it says which).
"""
import argparse
import json
import math
import statistics
import sys
import threading
import time

import numpy as np

VELOCITY = 2000.0  # m/s: the cost does not depend on the medium
SPACING = 10.0  # m
F0 = 10.0  # Hz


class PeakMemory:
    """The device memory in use, sampled in a thread while the block runs, above its value at the
    start, or PyTorch's own peak above its start where that is higher (PyTorch's cache is emptied
    first, so that its allocations show in cudaMemGetInfo too)."""

    def __init__(self, torch):
        self.torch, self.peak, self.stop = torch, 0, threading.Event()

    def used(self):
        free, total = self.torch.cuda.mem_get_info()
        return total - free

    def __enter__(self):
        self.torch.cuda.empty_cache()
        self.torch.cuda.reset_peak_memory_stats()
        self.torch_base = self.torch.cuda.memory_allocated()
        self.base = self.used()
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()
        return self

    def sample(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, self.used() - self.base)
            time.sleep(0.002)

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.peak = max(self.peak, self.used() - self.base,
                        self.torch.cuda.max_memory_allocated() - self.torch_base)


def geometry(dim, n):
    """Grid indices of the source (the middle) and of a receiver line 2 points below the top."""
    mid = n // 2
    return np.array([mid] * dim, np.int64), np.array([[2] + [mid] * (dim - 2) + [x] for x in range(0, n, 4)],
                                                      np.int64)


def timed(torch, f):
    torch.cuda.synchronize()
    with PeakMemory(torch) as m:
        t0 = time.perf_counter()
        out = f()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
    return wall, m.peak / 2**30, out


def fdstencil_calls(fdstencil, torch, a, geometry_m, dt):
    v = np.full((a.size,) * a.dim, VELOCITY, np.float32)
    vt = torch.from_numpy(v).cuda()
    zeros = np.zeros((len(geometry_m["receivers"]), a.steps))

    def forward(probe=False):
        return fdstencil.wave.forward(vt, SPACING, a.steps, geometry_m["sources"], geometry_m["wavelets"],
                                      geometry_m["receivers"], dt=dt, radius=a.radius, cpml=a.layer, backend="cuda",
                                      measure_bound=probe)

    def gradient(budget, boundary=False):
        return fdstencil.wave.gradient(v, zeros, SPACING, a.steps, dt=dt, radius=a.radius, cpml=a.layer,
                                       double=False, backend="cuda", memory_budget=budget, boundary_saving=boundary,
                                       info=True, **geometry_m)

    return forward, gradient


def deepwave_calls(deepwave, torch, a, src, rec, dt, wavelet):
    amp = torch.from_numpy(wavelet.astype(np.float32)).reshape(1, 1, -1).cuda()
    s, r = torch.from_numpy(src.reshape(1, 1, -1)).cuda(), torch.from_numpy(rec.reshape(1, len(rec), -1)).cuda()
    courant = dt * VELOCITY * math.sqrt(a.dim) / SPACING * (1 + 1e-9)
    vt = torch.full((a.size,) * a.dim, VELOCITY, device="cuda")

    def call(v):
        return deepwave.scalar(v, SPACING, dt, source_amplitudes=amp, source_locations=s, receiver_locations=r,
                               accuracy=2 * a.radius, pml_width=a.layer, pml_freq=F0, courant_number=courant)[-1]

    def gradient():
        v = vt.clone().requires_grad_()
        (call(v) ** 2).sum().backward()
        return v.grad

    return lambda: call(vt), gradient


def medians(runs):
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dim", type=int, choices=(2, 3), default=2, help="2 or 3 (default 2)")
    p.add_argument("--size", type=int, default=2000, help="the model's edge, points, before the layers (default 2000)")
    p.add_argument("--layer", type=int, default=20, help="absorbing points on every side (default 20)")
    p.add_argument("--steps", type=int, default=2000, help="time steps (default 2000)")
    p.add_argument("--radius", type=int, default=4, help="R; Deepwave's accuracy 2R (default 4)")
    p.add_argument("--repeats", type=int, default=3, help="timed calls of each (default 3)")
    p.add_argument("--budget", type=float, default=0.1, help="the checkpointed run's budget, of full storage")
    p.add_argument("--output", help="write the figures as JSON here (default: print them)")
    p.add_argument("--no-deepwave", dest="deepwave", action="store_false", help="time fdstencil alone")
    a = p.parse_args()
    try:
        import torch
        import fdstencil
        deepwave = __import__("deepwave") if a.deepwave else None
    except ImportError as e:
        print(f"gradient_versus_deepwave.py: error: {e.name} is not installed for {sys.executable}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gradient_versus_deepwave.py: error: PyTorch sees no GPU", file=sys.stderr)
        return 2
    src, rec = geometry(a.dim, a.size)
    dt = 0.8 * fdstencil.wave.max_stable_dt(a.dim, a.radius, SPACING, VELOCITY)
    wavelet = fdstencil.wave.ricker(F0, dt, a.steps)[:a.steps]
    geometry_m = {"sources": [src * SPACING], "wavelets": wavelet, "receivers": rec * SPACING}
    padded = (a.size + 2 * a.layer) ** a.dim
    rate = lambda wall: padded * a.steps / wall / 1e9
    f_forward, f_gradient = fdstencil_calls(fdstencil, torch, a, geometry_m, dt)
    if deepwave:
        d_forward, d_gradient = deepwave_calls(deepwave, torch, a, src, rec, dt, wavelet)
    # The warm-ups (kernels loaded, memory taken, clocks up); the first also measures the copy bandwidth.
    copy_gbps = f_forward(probe=True).timing["copy_gbps"]
    full = f_gradient(0)[3]["stored_bytes"]
    budget = int(a.budget * full)
    f_gradient(budget)
    f_gradient(0, True)
    if deepwave:
        d_forward()
        d_gradient()
    runs = {"fdstencil": [], "fdstencil_budget": [], "fdstencil_boundary": []} | \
        ({"deepwave": []} if deepwave else {})
    gradients = {}
    for _ in range(a.repeats):
        fw, fp, _ = timed(torch, f_forward)
        gw, gp, out = timed(torch, lambda: f_gradient(0))
        gradients["every"] = out[1]
        runs["fdstencil"].append({"forward_s": fw, "gradient_s": gw, "forward_peak_gib": fp, "peak_gib": gp,
                                  "gradient_forward_s": out[3]["forward_s"], "backward_s": out[3]["backward_s"],
                                  "library_s": out[3]["total_s"]})
        bw, bp, out = timed(torch, lambda: f_gradient(budget))
        runs["fdstencil_budget"].append({"forward_s": fw, "gradient_s": bw, "peak_gib": bp,
                                         "checkpoints": out[3]["checkpoints"],
                                         "recomputed_steps": out[3]["recomputed_steps"],
                                         "stored_bytes": out[3]["stored_bytes"]})
        sw, sp, out = timed(torch, lambda: f_gradient(0, True))
        gradients["boundary"] = out[1]
        runs["fdstencil_boundary"].append({"forward_s": fw, "gradient_s": sw, "peak_gib": sp,
                                           "reversed_steps": out[3]["reversed_steps"],
                                           "stored_bytes": out[3]["stored_bytes"],
                                           "gradient_forward_s": out[3]["forward_s"],
                                           "backward_s": out[3]["backward_s"], "library_s": out[3]["total_s"]})
        if not deepwave:
            continue
        dfw, dfp, _ = timed(torch, d_forward)
        dgw, dgp, _ = timed(torch, d_gradient)
        runs["deepwave"].append({"forward_s": dfw, "gradient_s": dgw, "forward_peak_gib": dfp, "peak_gib": dgp})
    doc = {"dim": a.dim, "size": a.size, "layer": a.layer, "padded_points": padded, "steps": a.steps,
           "radius": a.radius, "dtype": "float32", "repeats": a.repeats, "device": torch.cuda.get_device_name(),
           "copy_gbps": copy_gbps,
           "full_storage_bytes": full, "budget_bytes": budget, "torch": torch.__version__,
           "deepwave": deepwave.__version__ if deepwave else None, "fdstencil": fdstencil.__version__, "runs": runs, "medians": {}}
    inner = (slice(1, -1),) * a.dim
    every, strips = gradients["every"][inner], gradients["boundary"][inner]
    scale = float(np.abs(every).max())  # zero where no receiver hears the source within the steps
    doc["boundary_gap_abs"] = float(np.abs(strips - every).max())
    doc["boundary_gap"] = doc["boundary_gap_abs"] / scale if scale > 0 else None
    print(f"boundary saving's gradient off the faces: largest gap {doc['boundary_gap_abs']:.2e}, "
          f"largest value {scale:.2e}")
    for tool, r in runs.items():
        m = medians(r)
        m["forward_gpts"], m["gradient_gpts"], m["cost"] = rate(m["forward_s"]), rate(m["gradient_s"]), \
            m["gradient_s"] / m["forward_s"]
        doc["medians"][tool] = m
        print(f"{tool}: forward {m['forward_gpts']:.1f} GPts/s, gradient {m['gradient_gpts']:.1f} GPts/s "
              f"({m['cost']:.2f}x the forward), peak {m['peak_gib']:.1f} GiB", flush=True)
    if not deepwave:
        print(f"(copy {doc['copy_gbps']} GB/s; Deepwave not run)")
    else:
        ours, theirs = doc["medians"]["fdstencil"], doc["medians"]["deepwave"]
        doc["gradient_ratio"] = ours["gradient_gpts"] / theirs["gradient_gpts"]
        doc["peak_memory_ratio"] = ours["peak_gib"] / theirs["peak_gib"]
        print(f"gradient {doc['gradient_ratio']:.2f}x Deepwave's in {doc['peak_memory_ratio']:.2f} of its peak "
              f"memory (copy {doc['copy_gbps']} GB/s)")
    text = json.dumps(doc, indent=1)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
