# EXPERIMENT: the backward march's chunk and block rows, timed by the library's backward_s.
import os, statistics, sys, time, json
import numpy as np, torch, fdstencil
out = {}
for dim, size, steps in ((2, 2000, 1000), (3, 216, 300)):
    v = np.full((size,) * dim, 2000.0, np.float32)
    mid = size // 2
    src = np.array([mid] * dim) * 10.0
    rec = np.array([[2] + [mid] * (dim - 2) + [x] for x in range(0, size, 4)]) * 10.0
    dt = 0.8 * fdstencil.wave.max_stable_dt(dim, 4, 10.0, 2000.0)
    w = fdstencil.wave.ricker(10.0, dt, steps)[:steps]
    zeros = np.zeros((len(rec), steps))
    call = lambda: fdstencil.wave.gradient(v, zeros, 10.0, steps, dt=dt, radius=4, cpml=20, double=False,
                                           backend="cuda", memory_budget=0, info=True, sources=[src], wavelets=w,
                                           receivers=rec)[3]
    configs = [(c, 1) for c in (2, 4, 8)] if dim == 2 else [(c, 4) for c in (4, 8, 16)]
    for c, b in configs:
        os.environ["ADJ_CHUNK"] = str(c)
        call()
        t = statistics.median(call()["backward_s"] for _ in range(3))
        fw = statistics.median(call()["forward_s"] for _ in range(1))
        pts = (size + 40) ** dim
        out[f"{dim}D chunk {c} by {b}"] = t
        print(f"{dim}D {size} {steps} steps: chunk {c:3d} by {b}: backward {t:.4f} s = {t / steps * 1e6:.1f} us/step, {pts * steps / t / 1e9:.1f} GPts/s; first sweep {fw:.4f} s", flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
