# Where a spread gradient's extra time per shot goes: each shot's parts (info) on one GPU and on
# all, and the cost of allocating and freeing one shot's kept fields (33 GB) alone and on all GPUs
# at once.
import statistics, sys, threading, time, types, json
sys.path.insert(0, "bench/python")
import numpy as np
import fdstencil, fdstencil.wave as fw
from gradient_over_gpus import survey, SPACING
a = types.SimpleNamespace(dim=2, size=2000, cpml=20, radius=4, steps=2000, shots=16)
gpus = fdstencil._core.gpu_count()
dt = 0.8 * fw.max_stable_dt(2, 4, SPACING, 2600.0 * 1.02)
v, shots = survey(a, dt)
common = dict(dt=dt, radius=4, cpml=20, double=False, backend="cuda")
every = list(range(gpus))
fw.gradient_many(v, SPACING, a.steps, shots, devices=every, info=True, **common)  # warm-up
out = {}
for name, devs in (("one", [0]), ("all", every), ("one_again", [0]), ("all_again", every)):
    t = time.perf_counter()
    r = fw.gradient_many(v, SPACING, a.steps, shots, devices=devs, info=True, **common)
    wall = time.perf_counter() - t
    info = r[3]
    parts = {k: statistics.median(i[k] for i in info) for k in ("forward_s", "backward_s", "total_s")}
    parts["rest_s"] = statistics.median(i["total_s"] - i["forward_s"] - i["backward_s"] for i in info)
    out[name] = {"wall_s": wall, "per_gpu_shots": len(info) / len(devs), **parts}
    print(name, json.dumps(out[name]), flush=True)
try:
    import cupy as cp
    nbytes = info[0]["stored_bytes"]
    def alloc(dev, res):
        with cp.cuda.Device(dev):
            t0 = time.perf_counter(); p = cp.cuda.runtime.malloc(nbytes); t1 = time.perf_counter()
            cp.cuda.runtime.free(p); t2 = time.perf_counter()
            res[dev] = (t1 - t0, t2 - t1)
    for rep in range(2):
        res = {}; alloc(0, res); print("malloc/free alone", nbytes, res, flush=True)
        res = {}; th = [threading.Thread(target=alloc, args=(d, res)) for d in every]
        [x.start() for x in th]; [x.join() for x in th]; print("malloc/free on all at once", res, flush=True)
except Exception as e:
    print("cupy part:", e)
