#!/usr/bin/env python3
"""Where one GPU gradient's time goes (issue 37): fdstencil.wave.gradient four times on a two-layer
model (float, R = 4, a 20-point CPML, 64 receivers, every step's field kept), each call's wall time
beside its storage report (the forward sweep, the backward sweep and the rest), then
fdstencil.wave.forward of the same shot and its loop's time.

Usage: python3 bench/python/gradient_breakdown.py DIM SIZE STEPS   (e.g. 2 2000 2000, 3 216 500)
"""
import sys, time
import numpy as np
import fdstencil.wave as fw
dim, n, steps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
h = 10.0
v = np.full((n,) * dim, 1800, np.float32); v[n // 2:] = 2600
dt = 0.8 * fw.max_stable_dt(dim, 4, h, 2652.0)
span = (n - 1) * h
mid = [span / 2] if dim == 3 else []
rec = np.stack([np.full(64, 2 * h)] + [np.full(64, m) for m in mid] + [np.linspace(0, span, 64)], 1)
shot = dict(sources=[[3 * h] + mid + [span / 2]], wavelets=fw.ricker(8, dt, steps), receivers=rec)
common = dict(dt=dt, radius=4, cpml=20, double=False, backend="cuda")
obs = fw.modelled(v * np.float32(1.02), h, steps, **shot, **common)
for i in range(4):
    t0 = time.perf_counter()
    out = fw.gradient(v, obs, h, steps, **shot, **common, info=True)
    t1 = time.perf_counter()
    f = fw.forward(v, h, steps, **shot, **{k: common[k] for k in ("dt", "radius", "cpml", "backend")})
    t2 = time.perf_counter()
    k = out[3]
    print(f"call {t1-t0:.3f} s: total {k['total_s']:.3f} forward {k['forward_s']:.3f} backward {k['backward_s']:.3f} "
          f"other {k['total_s']-k['forward_s']-k['backward_s']:.3f}; forward() call {t2-t1:.3f} loop {f.timing['loop_s'] if 'loop_s' in f.timing else f.timing.get('total_s')}", flush=True)
