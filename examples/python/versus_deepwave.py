"""One 2D shot through fdstencil and through Deepwave's scalar propagator (deepwave.scalar), side by
side: the same model, grid, time step and number of steps (Deepwave is given the step's Courant
number, so that it does not divide it), Ricker source and receivers, 8th order in space, a 20-point
absorbing layer on every side (Deepwave's default width), on the GPU when there is one. Prints each
one's time and GPts/s (over the model and its layers, as Deepwave counts) and how alike the two
records are; draws them side by side.

    python3 examples/python/versus_deepwave.py [--output versus_deepwave.png] [--overwrite]
                                               [--backend auto|cuda|cpu] [--quick]

Deepwave is optional (pip install deepwave, which brings PyTorch): without it the example says so
and runs fdstencil alone. Needs the fdstencil package (pip install ., or PYTHONPATH=build/python)
and Matplotlib.

The two records differ in scale (each code has its own convention for the source term), so they are
compared after the least-squares scale of Deepwave's onto fdstencil's: their correlation and the
misfit left. Each propagator runs once to warm up (its kernels loaded, its memory taken) and is
then timed over a second, identical run."""
import time

import numpy as np

import fdstencil
from shot_gather import example_args, model

LAYER = 20  # points of absorbing layer on every side: Deepwave's default pml_width
RADIUS = 4  # fdstencil's stencil radius: order 8, Deepwave's accuracy=8


def fdstencil_shot(v, h, dt, nt, f0, src, rec, backend):
    wavelet = fdstencil.wave.ricker(f0, dt, nt)
    run = lambda: fdstencil.wave.forward(v, spacing=h, nt=nt, dt=dt, sources=[src * h], wavelets=wavelet,  # noqa: E731
                                         receivers=rec * h, radius=RADIUS, cpml=LAYER, backend=backend)
    run()
    start = time.perf_counter()
    shot = run()
    return shot.traces, time.perf_counter() - start, shot.timing["backend"]


def deepwave_shot(deepwave, torch, v, h, dt, nt, f0, src, rec, device):
    """Deepwave's run of the same shot, and its time. Deepwave divides a dt above its own Courant
    number (0.6) into internal steps; it is given the Courant number of this dt, so that it takes
    the same nt steps as fdstencil."""
    courant = dt * float(v.max()) * np.sqrt(2) / h * (1 + 1e-9)  # 1e-9: no second step by rounding
    vt = torch.from_numpy(v).to(device)
    amp = torch.from_numpy(fdstencil.wave.ricker(f0, dt, nt).astype(np.float32)).reshape(1, 1, -1).to(device)
    s = torch.from_numpy(src.reshape(1, 1, 2)).long().to(device)
    r = torch.from_numpy(rec.reshape(1, -1, 2)).long().to(device)

    def run():
        out = deepwave.scalar(vt, h, dt, source_amplitudes=amp, source_locations=s, receiver_locations=r,
                              accuracy=2 * RADIUS, pml_width=LAYER, pml_freq=f0, courant_number=courant)
        if device == "cuda":
            torch.cuda.synchronize()
        return out

    run()
    start = time.perf_counter()
    out = run()
    return out.receiver_amplitudes[0].cpu().numpy(), time.perf_counter() - start


def likeness(a, b):
    """b scaled by least squares onto a: the scale, the correlation and the relative misfit left."""
    scale = float(np.vdot(a, b) / np.vdot(b, b))
    corr = float(np.vdot(a, b) / np.sqrt(np.vdot(a, a) * np.vdot(b, b)))
    return scale, corr, float(np.linalg.norm(a - scale * b) / np.linalg.norm(a))


def draw(output, f_traces, d_traces, dt, h):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    nt = f_traces.shape[1]
    gain = (np.arange(nt) * dt) ** 1.5  # against the spreading: deep reflections seen beside the direct wave
    panels = [("fdstencil", f_traces)] + ([("Deepwave (scaled)", d_traces)] if d_traces is not None else [])
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 5), squeeze=False)
    clip = np.percentile(np.abs(f_traces * gain), 98)
    for ax, (name, t) in zip(axes[0], panels):
        ax.imshow((t * gain).T, aspect="auto", cmap="gray", vmin=-clip, vmax=clip,
                  extent=[0, t.shape[0] * 2 * h / 1000, nt * dt, 0])
        ax.set_xlabel("receiver x (km)")
        ax.set_ylabel("time (s)")
        ax.set_title(f"{name}: order 8, {LAYER}-point layer, gain t^1.5", fontsize=9)
    fig.tight_layout()
    fig.savefig(output, dpi=110)


def main():
    a = example_args(__doc__, "versus_deepwave.png",
                     "fdstencil's backend; Deepwave runs on the GPU where PyTorch has one")
    h, nt, f0 = (20.0, 1000, 6.0) if a.quick else (10.0, 2500, 15.0)
    v = model(150, 300, h) if a.quick else model(h=h)
    dt = 0.8 * fdstencil.wave.max_stable_dt(2, RADIUS, h, float(v.max()))
    src = np.array([3.0, v.shape[1] // 2])  # grid indices (z, x): on a grid point for both codes
    rec = np.stack([np.full(v.shape[1] // 2, 2.0), np.arange(0, v.shape[1], 2.0)], axis=1)
    points = (v.shape[0] + 2 * LAYER) * (v.shape[1] + 2 * LAYER) * nt

    f_traces, f_s, f_backend = fdstencil_shot(v, h, dt, nt, f0, src, rec, a.backend)
    print(f"fdstencil ({f_backend}): {len(rec)} receivers x {nt} steps in {f_s:.3f} s, {points / f_s / 1e9:.2f} GPts/s")
    try:
        import deepwave
        import torch
    except ImportError as e:
        print(f"Deepwave is not here ({e.name} is not installed for this Python: pip install deepwave): "
              "fdstencil alone")
        d_traces = None
    else:
        device = "cuda" if torch.cuda.is_available() else "cpu"
        d_traces, d_s = deepwave_shot(deepwave, torch, v, h, dt, nt, f0, src, rec, device)
        scale, corr, misfit = likeness(f_traces, d_traces)
        d_traces = d_traces * scale
        print(f"Deepwave {deepwave.__version__} ({device}): {d_s:.3f} s, {points / d_s / 1e9:.2f} GPts/s; "
              f"fdstencil took {f_s / d_s:.2f}x its time")
        print(f"the records: correlation {abs(corr):.5f}, misfit {misfit:.3%} once Deepwave's is scaled by {scale:.4g}"
              + (" (its source term has the other sign)" if scale < 0 else ""))
    draw(a.output, f_traces, d_traces, dt, h)
    print(f"wrote {a.output}")


if __name__ == "__main__":
    main()
