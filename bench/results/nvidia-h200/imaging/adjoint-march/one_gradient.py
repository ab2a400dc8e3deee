# EXPERIMENT: one gradient call for ncu (dim, size, steps).
import sys
import numpy as np, fdstencil
dim, size, steps = (int(x) for x in sys.argv[1:4])
v = np.full((size,) * dim, 2000.0, np.float32)
mid = size // 2
src = np.array([mid] * dim) * 10.0
rec = np.array([[2] + [mid] * (dim - 2) + [x] for x in range(0, size, 4)]) * 10.0
dt = 0.8 * fdstencil.wave.max_stable_dt(dim, 4, 10.0, 2000.0)
w = fdstencil.wave.ricker(10.0, dt, steps)[:steps]
print(fdstencil.wave.gradient(v, np.zeros((len(rec), steps)), 10.0, steps, dt=dt, radius=4, cpml=20, double=False,
                              backend="cuda", memory_budget=0, info=True, sources=[src], wavelets=w, receivers=rec)[3])
