#!/usr/bin/env python3
"""RTM and FWI on fdstencil's own synthetic model (fdstencil.models.faulted: five dipping layers, a
normal fault and a high-velocity body, 300 x 1000 points at 10 m), the demonstrations of issue 37.

  rtm  Shots along the surface on the true model; the reflections (the true model's traces less
       the smooth model's) migrated on the smooth model by fw.rtm_many (J^T d), the images stacked and
       differentiated in depth (reflectivity()). Along vertical lines clear of the fault and the
       body, the image's peak near each interface is compared with the interface's depth.
  fwi  From the smooth model, `--iterations` steps of Adam or steepest descent on the misfit
       summed over the shots, at each of `--frequencies` in turn (one by default), each gradient
       from fw.gradient_many (forward and exact adjoint on the GPU when present, the shots spread
       over every visible GPU and summed in their order), scaled by depth and
       zero in the top rows. The data misfit and the model error ||v - v_true|| are recorded at
       every iteration.

Results go to --output: the models and the image as .npy, and summary.json (the figures and the
checks). examples/python/plot_imaging.py draws the pictures from them. `--scale s` coarsens the
grid s times (and lowers the frequency as much), for a quick run on a cpu.

Usage: python3 examples/python/imaging_demo.py rtm|fwi --output DIR [--shots N] [--iterations N]
       [--scale S] [--backend auto|cuda|cpu]
"""
import argparse
import json
import os
import sys
import time

import numpy as np

import fdstencil.models as fm
import fdstencil.wave as fw

RADIUS = 4
VMAX = 4500.0  # m/s: the inversion's upper bound, and so dt's stability limit
VMIN = 1500.0
RTM_LINES = (1200.0, 3600.0, 8500.0)  # m: vertical lines clear of the body and the fault plane


def setup(a):
    h = 10.0 * a.scale
    v = fm.faulted(300 // a.scale, 1000 // a.scale, h)
    v0 = fm.smoothed(v, a.smooth / a.scale)
    dt = 0.8 * fw.max_stable_dt(2, RADIUS, h, VMAX)
    nt = int(a.time * a.scale / dt)
    f0 = a.frequency / a.scale
    nx = v.shape[1]
    xs = np.linspace(0.02, 0.98, a.shots) * (nx - 1) * h
    shot = dict(spacing=h, nt=nt, wavelets=fw.ricker(f0, dt, nt)[:nt], dt=dt, radius=RADIUS, cpml=20,
                receivers=[[h, x * h] for x in range(0, nx, 2)], double=False, backend=a.backend)
    return v, v0, h, xs, shot


def observe(v, xs, shot):
    return [fw.modelled(v, sources=[[2 * shot["spacing"], x]], **shot) for x in xs]


def survey(xs, records, shot, key):
    """The shots as fw.gradient_many and fw.rtm_many take them: each its source 2 points deep at x
    and its record under `key`; and the settings they share."""
    h = shot["spacing"]
    shots = [{"sources": [[2 * h, x]], "wavelets": shot["wavelets"], "receivers": shot["receivers"], key: d}
             for x, d in zip(xs, records)]
    return shots, {k: shot[k] for k in ("spacing", "nt", "dt", "radius", "cpml", "double", "backend")}


def reflectivity(stack):
    """The stacked J^T d's vertical derivative (central differences, zero on the edge rows). J^T d
    estimates the perturbation, band-limited: at an interface a smoothed step, whose derivative
    peaks on the interface itself (-Laplacian, a second derivative, would put its lobes beside it)."""
    out = np.zeros_like(stack)
    out[1:-1] = 0.5 * (stack[2:] - stack[:-2])
    return out


def rtm(a):
    v, v0, h, xs, shot = setup(a)
    t0 = time.perf_counter()
    shots, common = survey(xs, [d - d0 for d, d0 in zip(observe(v, xs, shot), observe(v0, xs, shot))], shot,
                           "recorded")
    stack = fw.rtm_many(v0, shots=shots, **common)  # the shots spread over the GPUs, stacked in order
    seconds = time.perf_counter() - t0
    image = reflectivity(stack)
    checks = []
    for line in RTM_LINES:
        i = int(round(line / h))
        col = np.abs(image[:, i])
        for k, depth in enumerate(fm.interface_depths([i * h])[:, 0]):
            want = depth / h
            lo, hi = max(0, int(want) - 6), min(len(col), int(want) + 7)  # the window inside a coarse grid
            got = lo + int(np.argmax(col[lo:hi]))
            checks.append({"x_m": i * h, "interface": k, "depth_points": want, "peak_points": got,
                           "offset_points": got - want})
    worst = max(abs(c["offset_points"]) for c in checks)
    np.save(os.path.join(a.output, "true.npy"), v)
    np.save(os.path.join(a.output, "smooth.npy"), v0)
    np.save(os.path.join(a.output, "rtm_stack.npy"), stack)
    np.save(os.path.join(a.output, "rtm_image.npy"), image)
    return {"shots": a.shots, "steps": shot["nt"], "dt": shot["dt"], "seconds": seconds, "checks": checks,
            "worst_offset_points": worst, "within_two_points": bool(worst <= 2)}


def misfit_and_gradient(model, xs, observed, shot):
    """The misfit and gradient summed over the shots in their order (the shots spread over the GPUs,
    the sums those of one after another)."""
    shots, common = survey(xs, observed, shot, "observed")
    misfit, grad, _ = fw.gradient_many(model.astype(np.float32), shots=shots, **common)
    return misfit, grad


def adam_step(grad, m, it):
    """Adam (Kingma and Ba): the step in m/s, each point's scaled by its gradient's running size;
    m holds the two moments, updated in place."""
    m[0] = 0.9 * m[0] + 0.1 * grad
    m[1] = 0.999 * m[1] + 0.001 * grad * grad
    return (m[0] / (1 - 0.9 ** (it + 1))) / (np.sqrt(m[1] / (1 - 0.999 ** (it + 1))) + 1e-12)


def fwi(a):
    """`--iterations` steps at each of the --frequencies in turn (low to high: each stage's start is
    the last's result, so the long wavelengths are fitted before the short ones can cycle-skip),
    the optimizer's state new at each. The misfit's fall is measured at the last frequency, from
    the smooth start to the result."""
    v, v0, h, xs, shot = setup(a)
    frequencies = a.frequencies or [a.frequency]
    model = v0.astype(np.float64)
    history = []
    top = max(2, int(round(40.0 / h)))  # the rows of the sources' and receivers' imprint: not updated
    t0 = time.perf_counter()
    for stage, f0 in enumerate(frequencies):
        s = dict(shot, wavelets=fw.ricker(f0 / a.scale, shot["dt"], shot["nt"])[:shot["nt"]])
        observed = observe(v, xs, s)
        if stage == len(frequencies) - 1:
            start_misfit = misfit_and_gradient(v0.astype(np.float64), xs, observed, s)[0]
        moments = [np.zeros_like(model), np.zeros_like(model)]
        for it in range(a.iterations):
            misfit, grad = misfit_and_gradient(model, xs, observed, s)
            error = float(np.linalg.norm(model - v) / np.linalg.norm(v0 - v))
            history.append({"frequency_hz": f0, "iteration": it, "misfit": misfit, "model_error": error})
            print(f"{f0:g} Hz iteration {it}: misfit {misfit:.4g}, model error {error:.3f} of the start's", flush=True)
            grad[:top] = 0
            if a.precondition == "depth":  # against the amplitudes' fall with depth (geometrical spreading)
                grad *= np.arange(grad.shape[0])[:, None] / grad.shape[0]
            # Adam's step, or steepest descent's (the largest change learning_rate m/s).
            step = adam_step(grad, moments, it) if a.optimizer == "adam" else grad / np.abs(grad).max()
            model = np.clip(model - a.learning_rate * step, VMIN, VMAX)
    misfit = misfit_and_gradient(model, xs, observed, s)[0]
    error = float(np.linalg.norm(model - v) / np.linalg.norm(v0 - v))
    history.append({"frequency_hz": frequencies[-1], "iteration": a.iterations, "misfit": misfit,
                    "model_error": error})
    print(f"result: misfit {misfit:.4g} ({start_misfit:.4g} from the start), model error {error:.3f}", flush=True)
    np.save(os.path.join(a.output, "true.npy"), v)
    np.save(os.path.join(a.output, "start.npy"), v0)
    np.save(os.path.join(a.output, "inverted.npy"), model.astype(np.float32))
    return {"shots": a.shots, "frequencies_hz": frequencies, "iterations_per_frequency": a.iterations,
            "optimizer": a.optimizer, "precondition": a.precondition, "learning_rate": a.learning_rate,
            "steps": shot["nt"], "dt": shot["dt"], "seconds": time.perf_counter() - t0, "history": history,
            "misfit_at_last_frequency": {"start": start_misfit, "result": misfit},
            "misfit_fall": start_misfit / misfit, "model_error_fall": 1 / error}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("demo", choices=("rtm", "fwi"))
    p.add_argument("--output", required=True, help="a directory for the arrays and summary.json (made if missing)")
    p.add_argument("--shots", type=int, help="shots along the surface (default: rtm 32, fwi 16)")
    p.add_argument("--iterations", type=int, default=25, help="fwi: steps at each frequency (default 25)")
    p.add_argument("--optimizer", default="adam", choices=("adam", "descent"),
                   help="fwi: Adam, or steepest descent (default adam)")
    p.add_argument("--learning-rate", type=float, default=20.0,
                   help="fwi: Adam's step, or descent's largest change, m/s (default 20)")
    p.add_argument("--precondition", default="depth", choices=("depth", "none"),
                   help="fwi: the gradient scaled by depth, or not (default depth)")
    p.add_argument("--frequency", type=float, default=8.0, help="the Ricker wavelet's peak, Hz (default 8)")
    p.add_argument("--frequencies", type=lambda t: [float(f) for f in t.split(",")],
                   help="fwi: peaks in Hz to invert at in turn, low to high, e.g. 3,5,8 (default: --frequency)")
    p.add_argument("--time", type=float, default=3.0, help="the recording's length, s (default 3)")
    p.add_argument("--smooth", type=float, default=12.0, help="the smooth model's Gaussian, points (default 12)")
    p.add_argument("--scale", type=int, default=1, help="coarsen the grid this many times (default 1)")
    p.add_argument("--backend", default="auto", choices=("auto", "cuda", "cpu"))
    p.add_argument("--force", action="store_true", help="replace the results of an earlier run in --output")
    a = p.parse_args()
    a.shots = a.shots or (32 if a.demo == "rtm" else 16)
    os.makedirs(a.output, exist_ok=True)
    if os.path.exists(os.path.join(a.output, "summary.json")) and not a.force:
        print(f"imaging_demo.py: error: {a.output} holds an earlier run's results (--force replaces them)",
              file=sys.stderr)
        return 2
    out = rtm(a) if a.demo == "rtm" else fwi(a)
    out |= {"demo": a.demo, "scale": a.scale, "frequency_hz": a.frequency / a.scale, "smooth_points": a.smooth,
            "model_shape": list(fm.faulted(300 // a.scale, 1000 // a.scale).shape), "backend": a.backend}
    with open(os.path.join(a.output, "summary.json"), "w") as f:
        json.dump(out, f, indent=1)
    print(json.dumps({k: v for k, v in out.items() if k not in ("history", "checks")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
