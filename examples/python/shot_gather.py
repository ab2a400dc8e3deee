"""A 2D shot gather from Python, plotted with Matplotlib: a layered model with a dipping
interface, a source near the surface, a line of receivers, the record as an image.

    python3 examples/python/shot_gather.py [--output gather.png] [--overwrite] [--backend auto|cuda|cpu] [--quick]

Needs the fdstencil package (pip install ., or PYTHONPATH=build/python) and Matplotlib."""
import argparse
import os
import time

import numpy as np

import fdstencil


def model(nz=300, nx=600, h=10.0):
    """Water-like 1500 m/s over 2200 m/s sediments, a 3000 m/s layer under a dipping interface."""
    z = np.arange(nz)[:, None] * h
    x = np.arange(nx)[None, :] * h
    v = np.full((nz, nx), 1500, np.float32)
    v[np.broadcast_to(z >= 400, v.shape)] = 2200
    v[z >= 1600 + 0.15 * x] = 3000
    return v


def example_args(doc, output, backend_help="fdstencil's backend"):
    """The examples' options: the figure (never replaced unless asked), the backend, --quick."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--output", default=output)
    p.add_argument("--overwrite", action="store_true", help="replace an existing --output file")
    p.add_argument("--backend", default="auto", choices=("auto", "cuda", "cpu"), help=backend_help)
    p.add_argument("--quick", action="store_true", help="a model a quarter the size, for a test")
    a = p.parse_args()
    if os.path.exists(a.output) and not a.overwrite:
        p.error(f"{a.output} exists: give --overwrite to replace it, or another --output")
    return a


def main():
    a = example_args(__doc__, "shot_gather.png")
    # quick: a lower peak frequency on the coarser grid keeps the points per wavelength near the full run's
    h, nt, f0 = (20.0, 1000, 6.0) if a.quick else (10.0, 2500, 15.0)
    v = model(150, 300, h) if a.quick else model(h=h)
    dt = 0.8 * fdstencil.wave.max_stable_dt(2, 4, h, float(v.max()))
    receivers = [[20.0, x] for x in np.arange(0.0, v.shape[1] * h, 2 * h)]
    start = time.perf_counter()
    shot = fdstencil.wave.forward(v, spacing=h, nt=nt, dt=dt, sources=[[30.0, 1500.0]],
                                  wavelets=fdstencil.wave.ricker(f0, dt, nt), receivers=receivers,
                                  backend=a.backend)
    took = time.perf_counter() - start
    print(f"{len(receivers)} receivers x {nt} steps of {dt * 1e3:.3f} ms on {shot.timing['backend']} in {took:.2f} s "
          f"({shot.timing['gpts']:.2f} GPts/s)")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t = shot.traces * (np.arange(nt) * dt) ** 1.5  # a gain for the spreading: deep reflections seen beside the direct wave
    clip = np.percentile(np.abs(t), 98)
    fig, ax = plt.subplots(figsize=(7, 5))
    ax.imshow(t.T, aspect="auto", cmap="gray", vmin=-clip, vmax=clip,
              extent=[0, v.shape[1] * h / 1000, nt * dt, 0])
    ax.set_xlabel("receiver x (km)")
    ax.set_ylabel("time (s)")
    ax.set_title("fdstencil.wave.forward: 2D shot gather, R = 4, gain t^1.5")
    fig.tight_layout()
    fig.savefig(a.output, dpi=110)
    print(f"wrote {a.output}")


if __name__ == "__main__":
    main()
