#!/usr/bin/env python3
"""Pictures of examples/python/imaging_demo.py's results (matplotlib): for an rtm directory, the
true and smooth models and the stacked image (with a gain of depth squared) with the true
interfaces dashed over it; for an fwi
directory, the true, starting and inverted models and the misfit and model error by iteration.

Usage: python3 examples/python/plot_imaging.py DIR OUT.png
"""
import json
import os
import sys

import numpy as np


def model_panel(ax, v, h, title, vmin, vmax):
    nz, nx = v.shape
    im = ax.imshow(v, cmap="viridis", vmin=vmin, vmax=vmax, extent=(0, nx * h / 1e3, nz * h / 1e3, 0), aspect="auto")
    ax.set_title(title)
    ax.set_ylabel("depth (km)")
    return im


def plot_rtm(plt, d, s, out):
    import fdstencil.models as fm
    v, v0, image = (np.load(os.path.join(d, f)) for f in ("true.npy", "smooth.npy", "rtm_image.npy"))
    h = 10.0 * s["scale"]
    fig, axes = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    im = model_panel(axes[0], v, h, "true model (m/s)", v.min(), v.max())
    fig.colorbar(im, ax=axes[0])
    im = model_panel(axes[1], v0, h, "smooth migration model (m/s)", v.min(), v.max())
    fig.colorbar(im, ax=axes[1])
    # Shown with a gain of depth squared against the amplitudes' fall with depth, and clipped at
    # the 99th percentile of what lies below 200 m (the sources' and receivers' imprint is above).
    nz, nx = image.shape
    shown = image * (np.arange(nz)[:, None] * h) ** 2
    clip = np.percentile(np.abs(shown[int(200 / h):]), 99)
    im = axes[2].imshow(shown, cmap="gray", vmin=-clip, vmax=clip, extent=(0, nx * h / 1e3, nz * h / 1e3, 0),
                        aspect="auto")
    fig.colorbar(im, ax=axes[2])
    x = np.arange(nx) * h
    for depth in fm.interface_depths(x):
        axes[2].plot(x / 1e3, depth / 1e3, "r--", lw=0.6)
    for c in s["checks"]:
        axes[2].axvline(c["x_m"] / 1e3, color="c", lw=0.5)
    axes[2].set_title(f"RTM, {s['shots']} shots, gain z^2 (true interfaces dashed; worst peak offset "
                      f"{s['worst_offset_points']:.1f} points on the cyan lines)")
    axes[2].set_xlabel("x (km)")
    axes[2].set_ylabel("depth (km)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def plot_fwi(plt, d, s, out):
    v, v0, vi = (np.load(os.path.join(d, f)) for f in ("true.npy", "start.npy", "inverted.npy"))
    h = 10.0 * s["scale"]
    freqs = s.get("frequencies_hz", [s["frequency_hz"]])
    steps = len(s["history"]) - (1 if "frequencies_hz" in s else 0)
    fig = plt.figure(figsize=(10, 11))
    grid = fig.add_gridspec(4, 1)
    for row, (m, title) in enumerate(((v, "true model"), (v0, "starting model"),
                                      (vi, f"inverted, {steps} {s['optimizer']} steps at "
                                           f"{', '.join(f'{f:g}' for f in freqs)} Hz, {s['shots']} shots"))):
        ax = fig.add_subplot(grid[row])
        fig.colorbar(model_panel(ax, m, h, title + " (m/s)", v.min(), v.max()), ax=ax)
    ax = fig.add_subplot(grid[3])
    hist = s["history"]
    # Each frequency's misfit is of its own data: scaled by its stage's first.
    first = {}
    for r in hist:
        first.setdefault(r.get("frequency_hz"), r["misfit"])
    ax.semilogy(range(len(hist)), [r["misfit"] / first[r.get("frequency_hz")] for r in hist], "b-o", ms=3,
                label="data misfit / its frequency's first")
    ax.semilogy(range(len(hist)), [r["model_error"] for r in hist], "r-s", ms=3, label="||v - v_true|| / start's")
    for i in range(1, len(hist)):
        if hist[i].get("frequency_hz") != hist[i - 1].get("frequency_hz"):
            ax.axvline(i - 0.5, color="k", lw=0.5)
    ax.set_xlabel("step (frequencies in turn)")
    ax.legend()
    ax.grid(True, which="both", lw=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    d, out = sys.argv[1], sys.argv[2]
    with open(os.path.join(d, "summary.json")) as f:
        s = json.load(f)
    (plot_rtm if s["demo"] == "rtm" else plot_fwi)(plt, d, s, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
