#!/usr/bin/env python3
"""How far boundary saving's gradient lies from every field's after many steps back (issue 37):
fdstencil.wave.gradient on the GPU in float, a constant 2000 m/s model, a 20-point layer, R = 4,
the source in the middle and 50 receivers 50 m down, observed traces of zero, with and without
boundary_saving=True. Prints, per model and step count, the largest |value| of each off the
model's outer faces (which boundary saving changes where the layer is wider than R), whether both
are finite, and the largest gap there. At 2000^2 the receivers hear nothing in 2000 steps (the
gradient is zero there); 400^2 is the case that measures.

Usage: PYTHONPATH=build/python python3 bench/python/boundary_saving_gap.py
"""
import numpy as np, fdstencil
fw = fdstencil.wave
for n, steps in ((2000, 500), (2000, 1000), (2000, 2000), (400, 2000)):
    v = np.full((n, n), 2000.0, np.float32)
    dt = 0.8 * fw.max_stable_dt(2, 4, 10.0, 2000.0)
    src = [[n * 5.0, n * 5.0]]
    rec = [[50.0, x] for x in np.linspace(0, (n - 1) * 10.0, 50)]
    w = fw.ricker(10.0, dt, steps)[:steps]
    z = np.zeros((len(rec), steps))
    a = fw.gradient(v, z, 10.0, steps, src, w, rec, dt=dt, radius=4, cpml=20, double=False, backend="cuda")[1]
    b = fw.gradient(v, z, 10.0, steps, src, w, rec, dt=dt, radius=4, cpml=20, double=False, backend="cuda", boundary_saving=True)[1]
    i = (slice(1, -1),) * 2
    print(n, steps, "every max", np.abs(a[i]).max(), "finite", np.isfinite(a).all(), "strips max", np.abs(b[i]).max(),
          "finite", np.isfinite(b).all(), "gap", np.abs(a[i] - b[i]).max(), flush=True)
