#!/usr/bin/env python3
"""fdstencil's cpu wave step against Devito's own operator on the same model and cores (issue 38).

Both propagate a constant 2000 m/s model of SIZE^3 points at 10 m with LAYER points of absorbing
layer on every face, space order 2R, leapfrog, float, for STEPS steps of the same dt, on THREADS
OpenMP threads:
  fdstencil  `fdstencil wave --backend cpu --cpml LAYER` (a CPML);
  Devito     an operator of the form Devito's acoustic examples use, m u_tt - lap u + damp u_t = 0,
             with a damping layer of LAYER points on every face (their `nbl`), space_order 2R,
             Devito's default optimisation, generated and compiled by Devito, then timed over
             apply().
GPts/s counts the points of the model and its layers times the steps over the time stepping. The
layers differ in kind (a CPML costs more per point than a damping term), so the comparison favours
Devito there; both figures are printed with the ratio, beside the host's copy bandwidth measured
in the same run (NumPy copying a 1 GiB array, the median of 5).

Usage: python3 bench/devito_compare.py --cli FDSTENCIL [--size 216] [--layer 20] [--radius 4]
                                       [--steps 20] [--threads 2] [--output FILE.json]
Exit status: 0; 2 for bad arguments, a missing CLI, or Devito not installed (pip install devito:
it says so); 1 when a run fails.
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

SPACING = 10.0
VELOCITY = 2000.0
COPY_BYTES = 1 << 30  # the host copy's buffers: far past any cache


def host_copy_gbps():
    """Bytes read and written per second by a NumPy copy of 1 GiB, the median of 5, GB/s."""
    a = np.ones(COPY_BYTES // 4, np.float32)
    b = np.empty_like(a)
    rates = []
    for _ in range(5):
        t = time.perf_counter()
        np.copyto(b, a)
        rates.append(2 * COPY_BYTES / (time.perf_counter() - t) / 1e9)
    return statistics.median(rates)


def run_fdstencil(cli, a):
    with tempfile.TemporaryDirectory() as work:
        c = a.size * SPACING / 2
        cmd = [cli, "wave", "--backend", "cpu", "--quiet", "--constant", str(VELOCITY), "--shape", f"{a.size},{a.size},{a.size}",
               "--spacing", str(SPACING), "--radius", str(a.radius), "--cpml", str(a.layer), "--steps", str(a.steps),
               "--source", f"{c},{c},{c}", "--ricker", "8", "--no-final", "-o", os.path.join(work, "o")]
        r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": str(a.threads)})
        if r.returncode != 0:
            raise RuntimeError(f"fdstencil failed: {r.stderr.strip()}")
        s = json.load(open(os.path.join(work, "o", "summary.json")))
        t = s["timing"]
        # The run's own copy probe and bound (runs of 10^9 point-steps or more) and its threads.
        return {"gpts": t["gpts"], "loop_s": t["loop_s"], "kernel": s["kernel"],
                "computational": s["domain"]["computational"], "dt": s["dt"], "threads": t.get("threads"),
                "copy_gbps": t["copy_gbps"], "percent_of_bound": t["percent_of_bound"]}


def damping(shape, layer):
    """A damping layer of `layer` points on every face: d0 (x / L)^2 at depth x into a layer of
    thickness L, summed over the axes, with d0 = 3 v ln(1000) / (2 L) (a 1e-3 reflection's)."""
    L = layer * SPACING
    d0 = 3 * VELOCITY * np.log(1000.0) / (2 * L)
    damp = np.zeros(shape, np.float32)
    for axis, n in enumerate(shape):
        depth = np.maximum(layer - np.arange(n), 0) + np.maximum(np.arange(n) - (n - 1 - layer), 0)
        profile = (d0 * (depth * SPACING / L) ** 2).astype(np.float32)
        view = [1] * len(shape)
        view[axis] = n
        damp += profile.reshape(view)
    return damp


def run_devito(devito, a, dt):
    n = a.size + 2 * a.layer
    grid = devito.Grid(shape=(n, n, n), extent=((n - 1) * SPACING,) * 3, dtype=np.float32)
    u = devito.TimeFunction(name="u", grid=grid, time_order=2, space_order=2 * a.radius)
    m = devito.Function(name="m", grid=grid)
    damp = devito.Function(name="damp", grid=grid)
    m.data[:] = 1.0 / VELOCITY**2
    damp.data[:] = damping((n, n, n), a.layer)
    u.data[:] = 0.0
    u.data[:, n // 2, n // 2, n // 2] = 1.0  # a nonzero field, so that nothing runs on zeros
    pde = m * u.dt2 - u.laplace + damp * u.dt
    op = devito.Operator([devito.Eq(u.forward, devito.solve(pde, u.forward))], name="devito_acoustic")
    op.apply(time_M=2, dt=dt)  # generated, compiled and loaded before the timed run
    start = time.perf_counter()
    summary = op.apply(time_m=0, time_M=a.steps - 1, dt=dt)
    took = time.perf_counter() - start
    return {"gpts": n**3 * a.steps / took / 1e9, "apply_s": took, "computational": [n, n, n],
            "devito_version": devito.__version__, "devito_language": str(devito.configuration["language"]),
            "devito_summary": str(summary)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cli", required=True, help="the fdstencil binary")
    p.add_argument("--size", type=int, default=216, help="the model's edge in points (default 216)")
    p.add_argument("--layer", type=int, default=20, help="absorbing points on every face (default 20)")
    p.add_argument("--radius", type=int, default=4, help="R: space order 2R (default 4)")
    p.add_argument("--steps", type=int, default=20, help="time steps (default 20)")
    p.add_argument("--threads", type=int, default=2, help="OpenMP threads for both (default 2)")
    p.add_argument("--output", help="write the figures as JSON here (default: print them)")
    a = p.parse_args()
    if not os.access(a.cli, os.X_OK):
        p.error(f"--cli {a.cli}: not an executable")
    # Devito reads its language and the thread count when it is imported: OpenMP on THREADS.
    os.environ["DEVITO_LANGUAGE"] = "openmp"
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    try:
        import devito
    except ImportError:
        print("devito_compare.py: error: Devito is not installed for " + sys.executable + " (pip install devito)",
              file=sys.stderr)
        return 2
    try:
        copy = host_copy_gbps()
        f = run_fdstencil(a.cli, a)
        d = run_devito(devito, a, f["dt"])  # fdstencil's step (0.8 of its limit) for both
    except RuntimeError as e:
        print(f"devito_compare.py: error: {e}", file=sys.stderr)
        return 1
    doc = {"size": a.size, "layer": a.layer, "radius": a.radius, "steps": a.steps, "threads": a.threads, "dt": f["dt"],
           "dtype": "float32", "host_copy_gbps": copy, "fdstencil": f, "devito": d,
           "fdstencil_over_devito": f["gpts"] / d["gpts"]}
    text = json.dumps(doc, indent=1)
    if a.output:
        with open(a.output, "w") as out:
            out.write(text + "\n")
    print(f"host copy {copy:.1f} GB/s; fdstencil {f['gpts']:.4f} GPts/s, Devito {devito.__version__} "
          f"{d['gpts']:.4f} GPts/s: fdstencil at {doc['fdstencil_over_devito']:.2f}x Devito")
    return 0


if __name__ == "__main__":
    sys.exit(main())
