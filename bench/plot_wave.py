#!/usr/bin/env python3
"""Figures of `fdstencil wave` runs (docs/wave.md), one PNG per call:

  trace    RUN_DIR --output PNG [--receiver K]   receiver K's trace against analytic.npy (a run with
           --compare-analytic), the difference below; the misfit and the end of the comparison
           window from summary.json, the window's end marked
  gather   RUN_DIR|SHOT.npy|SHOT.sgy --output PNG [--clip P] [--gain none|tpow|agc] [--tpow 2]
           [--agc-window S] [--cmap grey|seismic] [--horizontal auto|index|x|offset]   a shot record
           as an image, time down from the sidecar's (shot.json) or the SEG-Y header's sample
           interval; the colour scale clipped at the P-th percentile of |amplitude| (99) after the
           gain: t^p, or AGC (each sample over the RMS of the window of S seconds around it); the
           receivers' x (auto, when it rises or falls along the record), their offset from the
           source, or their index across
  snapshot FILE.npy|RUN_DIR --output PNG [--step N] [--model FILE.npy|FILE.sgy] [--spacing H]
           [--axis z|y|x] [--index I] [--clip P]   a 2D array as an image, or a slice of a 3D one
           across --axis (y by default: a vertical z-x section) at --index (the middle by default);
           symmetric colour scale up to the P-th percentile of |u| (100: the largest), axes in metres
           when the spacing is known (--spacing, the run, a SEG-Y model), else in grid points. With
           a model, the wavefield is drawn over
           the same slice of it (velocity in greys, the wavefield transparent where it is weak); a
           2D snapshot of a 3D model (a --snapshot-slice cut) takes the model's slice from --axis
           and --index, else from the run's command. A RUN_DIR gives snapshot_N (--step N; the last
           by default), the spacing, the time and, without --model, the run's own model
  model    FILE.npy|FILE.sgy|RUN_DIR --output PNG [--axis z|y|x] [--index I] [--spacing H]   a
           velocity model with a colour bar in m/s: a 2D model whole, a 3D one sliced across --axis
           (y) at --index (the middle); a RUN_DIR's model rebuilt from its summary.json; the spacing
           from --spacing, the run, or a SEG-Y file's sample interval read as millimetres
  cpml     FILE.json --output PNG   bench/wave_cpml.py's reflection in dB against the CPML width
           (peak and band, the worst over the angles, each angle faint), the -40 dB target marked
  perf     SUMMARY.json|RUN_DIR ... --output PNG [--reference-gpts 36]   GPts/s against the
           computational points, a line per radius, its bandwidth bound dotted in the same colour,
           and Deepwave's 36 GPts/s as a horizontal line

SEG-Y files (.sgy, .segy) are read with the Python module segyio (Debian python3-segyio); without
it they exit 2 saying so. A SEG-Y model holds one trace per vertical column, as `fdstencil wave
--model` reads it: a 3D cube by its inline (y) and crossline (x) numbers (trace header bytes 189
and 193), a 2D line along the number that varies (in file order where none does). A run folder's
record is its shot.npy, else its shot.sgy.

Inputs are checked before anything is drawn: a missing or malformed file, a receiver out of range,
an array of the wrong rank or holding NaN, a snapshot whose shape differs from the model's slice,
a percentile outside (0, 100], an output folder that does not exist exit 2 with a message and
write nothing. The PNG is written to a temporary name and renamed into place.
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import png_out  # noqa: E402
from report_wave import InputError, expand, load_summary  # noqa: E402
import wave_files  # noqa: E402
from wave_files import AXES, read_json, read_npy  # noqa: E402

DPI = 130  # as bench/plot_seismic.py: legible 7-8 inch figures in docs/ at ~1000 pixels wide
# The comparison target for the perf figure: Deepwave's throughput as the project's brief quotes
# it (36 GPts/s); no run in this repository measured it, hence the flag.
DEEPWAVE_GPTS = 36.0
# The cpml figure's target line: -40 dB, a reflection of 1 % of the direct wave, the level the
# project asks of its CPML.
TARGET_DB = -40.0
# gather: the clip level's percentile of |amplitude|. The strongest 1 % of the samples (the direct
# wave beside the source) saturate, so the weaker arrivals get the rest of the grey scale.
GATHER_CLIP = 99.0
# gather --gain tpow: t^2, Claerbout's default (Imaging the Earth's Interior, 1985): one power of t
# for spherical spreading (amplitude ~ 1/r, r ~ v t), one for what the path loses besides; a 2D
# run's cylindrical spreading alone needs only t^0.5.
GATHER_TPOW = 2.0
# gather --gain agc: the window, seconds. It must span a few periods of the wavelet (0.067 s at the
# 15 Hz Ricker the docs use, 0.1 s at 10 Hz), or AGC flattens the wavelet itself.
AGC_WINDOW_S = 0.1
# AGC divides by the local RMS plus this share of the whole record's RMS: where the record is
# silent (before the first arrival, float32 round-off ~1e-7 of the peak) the gain stays below
# 1000x the record's level instead of lifting round-off to full scale.
AGC_FLOOR = 1e-3
# snapshot with a model: the wavefield is opaque from this share of its colour scale up and fades
# linearly to transparent at 0, so the wavefronts read as solid colour and the model shows through
# where the field is weak.
OPAQUE_FROM = 0.5
# ... and the model under it in greys from 35 % to 90 % of white: on black the blue wavefronts
# vanish, on white the weak red ones.
MODEL_GREYS = (0.35, 0.9)


# ------------------------------------------------------------------------------------------------
# Inputs, checked
# ------------------------------------------------------------------------------------------------

def trace_inputs(args):
    d = args.run_dir
    if not os.path.isdir(d):
        raise InputError(f"{d}: not a run folder (fdstencil wave --output DIR)")
    shot = read_npy(os.path.join(d, "shot.npy"), "the run's shot record")
    side = read_json(os.path.join(d, "shot.json"), "the shot record's sidecar")
    summary = read_json(os.path.join(d, "summary.json"), "the run's summary")
    apath = os.path.join(d, "analytic.npy")
    if not os.path.exists(apath):
        raise InputError(f"{apath}: no such file: run fdstencil wave with --compare-analytic")
    analytic = read_npy(apath, "the analytic record")
    if shot.ndim != 2 or shot.shape != analytic.shape:
        raise InputError(f"{d}: shot.npy {shot.shape} and analytic.npy {analytic.shape} must be one (nrec, nt) shape")
    if not isinstance(side, dict) or side.get("format") != "fdstencil-shot-1" or not _positive(side.get("dt")):
        raise InputError(f"{d}/shot.json: not an fdstencil-shot-1 sidecar with a positive dt")
    an = summary.get("analytic") if isinstance(summary, dict) else None
    if not isinstance(an, dict) or not _positive(an.get("window_end_s")) or not _finite(an.get("misfit")):
        raise InputError(f"{d}/summary.json: no analytic comparison (misfit, window_end_s)")
    k = args.receiver
    if not 0 <= k < shot.shape[0]:
        raise InputError(f"--receiver {k}: the record holds receivers 0..{shot.shape[0] - 1}")
    if not np.all(np.isfinite(shot[k])):
        raise InputError(f"{d}/shot.npy: receiver {k}'s trace holds NaN or infinity (an unstable run?)")
    per = {p.get("receiver"): p for p in an.get("per_receiver", []) if isinstance(p, dict)}
    receivers = side.get("receivers") or []
    return {"u": shot[k].astype(float), "exact": analytic[k].astype(float), "dt": float(side["dt"]),
            "t0": float(side.get("t0", 0.0)), "misfit": float(an["misfit"]),
            "window_end": float(an["window_end_s"]), "mine": per.get(k),
            "skipped": k in (an.get("skipped") or []),
            "position": receivers[k] if k < len(receivers) else None, "dim": (side.get("model") or {}).get("dim")}


def _percentile(p, flag):
    if not (_finite(p) and 0 < p <= 100):
        raise InputError(f"{flag} {p}: a percentile in (0, 100]")
    return float(p)


def _index(shape, axis_name, index, what):
    """A slice position along an axis of a 3D array, checked; the middle when index is None."""
    axis = AXES.index(axis_name)
    n = shape[axis]
    if index is None:
        return n // 2
    if not 0 <= index < n:
        raise InputError(f"--index {index}: {what} {tuple(shape)} has {axis_name} indices 0..{n - 1}")
    return index


def _across(axis_name):
    """The (rows, cols) names of a slice across axis_name of a (z, y, x) array."""
    return tuple(n for n in AXES if n != axis_name)


def _snapshot_model(args, run_dir, summary):
    """The model under a snapshot: (array, its name in the title, its name in messages, the
    spacing its file states), Nones when there is none (a snapshot file without --model)."""
    if args.model:
        name = os.path.basename(args.model)
        v, stated = wave_files.read_model(args.model)
        return v, name, f"the model {name}", stated
    if summary is not None:
        name = wave_files.run_model_name(summary)
        return wave_files.run_model(run_dir, summary), name, name, None
    return None, None, None, None


def snapshot_inputs(args):
    clip = _percentile(args.clip, "--clip")
    if args.spacing is not None and not args.spacing > 0:
        raise InputError(f"--spacing {args.spacing}: must be positive metres")
    summary, run_dir = None, None
    if os.path.isdir(args.file):
        run_dir = args.file
        summary = wave_files.read_summary(run_dir)
        path, step = wave_files.run_snapshot(run_dir, args.step, summary)
    else:
        if args.step is not None:
            raise InputError(f"--step {args.step} picks snapshot_N in a run folder; {args.file} is one snapshot "
                             f"already")
        path, step = args.file, wave_files.snapshot_step(args.file)
    a = read_npy(path, "a snapshot")
    if a.ndim not in (2, 3) or min(a.shape) < 2:
        raise InputError(f"{path}: shape {a.shape}: expected a 2D array or a 3D volume (a 1D line "
                         f"is not an image)")
    if not np.all(np.isfinite(a)):
        raise InputError(f"{path}: holds NaN or infinity (an unstable run?)")
    model, model_name, model_what, stated = _snapshot_model(args, run_dir, summary)
    spacing = args.spacing
    if spacing is None and summary is not None and _positive((summary.get("model") or {}).get("spacing")):
        spacing = float(summary["model"]["spacing"])
    if spacing is None:
        spacing = stated   # a SEG-Y model's sample interval read as millimetres, else None

    mimg, where = None, None
    if a.ndim == 3:
        axis = args.axis or "y"
        k = _index(a.shape, axis, args.index, f"{path}'s shape")
        if model is not None and model.shape != a.shape:
            raise InputError(f"{path}: shape {a.shape}, but {model_what} is {model.shape}: "
                             f"a snapshot of the whole model has the model's shape")
        img = np.take(a, k, axis=AXES.index(axis))
        if model is not None:
            mimg = np.take(model, k, axis=AXES.index(axis))
        (rows, cols), where = _across(axis), f"{axis} index {k} of {a.shape[AXES.index(axis)]}"
    elif model is None or model.ndim == 2:
        if args.index is not None:
            raise InputError(f"--index {args.index} cuts a 3D array; {path} is 2D {a.shape}")
        if model is not None and model.shape != a.shape:
            raise InputError(f"{path}: shape {a.shape}, but {model_what} is {model.shape}: they must "
                             f"agree")
        img, mimg = a, model
        rows, cols = ("z", "x") if model is not None else args.axes
    else:
        # A 2D snapshot of a 3D model: a --snapshot-slice cut, which the file does not record.
        recorded = wave_files.recorded_slice(summary) if summary is not None else None
        if args.index is not None:
            axis, k = args.axis or "y", args.index
        elif recorded is not None and args.axis in (None, recorded[0]):
            axis, k = recorded
        else:
            how = f"the run cut its snapshots at {recorded[0]}={recorded[1]}; " if recorded else ""
            raise InputError(f"{path} is 2D {a.shape} and {model_what} 3D {model.shape}: {how}give "
                             f"--axis and --index of the cut (the run's --snapshot-slice)")
        k = _index(model.shape, axis, k, model_what)
        mimg = np.take(model, k, axis=AXES.index(axis))
        if mimg.shape != a.shape:
            raise InputError(f"{path}: shape {a.shape}, but {model_what}'s slice {axis}={k} is "
                             f"{mimg.shape}: the cut must be the run's --snapshot-slice")
        img = a
        (rows, cols), where = _across(axis), f"{axis} index {k} of {model.shape[AXES.index(axis)]}"
    vmax = float(np.percentile(np.abs(img), clip)) if clip < 100 else float(np.max(np.abs(img)))
    if vmax == 0:
        vmax = float(np.max(np.abs(img))) or 1.0   # the percentile falls on zeros: the largest value
    time = None
    if step is not None and summary is not None and _positive(summary.get("dt")):
        time = step * float(summary["dt"])
    return {"img": img.astype(float), "model": mimg, "model_name": model_name, "rows": rows, "cols": cols,
            "where": where, "spacing": spacing, "vmax": vmax, "clip": clip, "step": step, "time": time,
            "name": os.path.basename(path)}


def gather_inputs(args):
    clip = _percentile(args.clip, "--clip")
    if args.tpow is not None and args.gain != "tpow":
        raise InputError(f"--tpow {args.tpow} goes with --gain tpow")
    if args.agc_window is not None and args.gain != "agc":
        raise InputError(f"--agc-window {args.agc_window} goes with --gain agc")
    shot = wave_files.read_shot(args.source)
    data, dt, t0 = shot["data"], shot["dt"], shot["t0"]
    ns = data.shape[1]
    t = t0 + np.arange(ns) * dt
    gain = "none"
    if args.gain == "tpow":
        p = GATHER_TPOW if args.tpow is None else args.tpow
        if not (_finite(p) and p > 0):
            raise InputError(f"--tpow {p}: the power must be positive (--gain none for no gain)")
        if t[0] < 0:
            raise InputError(f"{shot['name']}: the record starts at t = {t0:g} s; t^p needs t >= 0")
        data = data * t[None, :] ** p
        gain = f"t^{p:g}"
    elif args.gain == "agc":
        w = AGC_WINDOW_S if args.agc_window is None else args.agc_window
        n = int(round(w / dt)) if _finite(w) and w > 0 else 0
        if n < 2 or n > ns:
            raise InputError(f"--agc-window {w}: the window must hold 2..{ns} samples of {dt:.4g} s (the "
                             f"record's length); {w} s holds {n}")
        data = agc(data, n)
        gain = f"AGC {n * dt:.3g} s"
    level = float(np.percentile(np.abs(data), clip))
    clip_text = f"clip {level:.3g} = the {clip:g}th percentile of |amplitude|"
    if level == 0:
        level = float(np.max(np.abs(data)))
        clip_text = f"clip {level:.3g} = the largest |amplitude| (the {clip:g}th percentile is 0)"
    across, label = horizontal(shot, args.horizontal)
    if across[-1] < across[0]:   # drawn rising left to right
        data, across = data[::-1], across[::-1]
    return {"data": data, "across": across, "label": label, "t": t, "dt": dt, "level": level,
            "clip_text": clip_text, "gain": gain, "name": shot["name"], "format": shot["format"]}


def agc(data, n):
    """Each sample over the RMS of the n samples centred on it (fewer at the ends) plus AGC_FLOOR
    times the record's RMS."""
    ns = data.shape[1]
    power = np.concatenate([np.zeros((data.shape[0], 1)), np.cumsum(data * data, axis=1)], axis=1)
    centre = np.arange(ns)
    lo = np.clip(centre - n // 2, 0, ns)
    hi = np.clip(centre - n // 2 + n, 0, ns)
    rms = np.sqrt(np.maximum(power[:, hi] - power[:, lo], 0) / (hi - lo)[None, :])
    return data / (rms + AGC_FLOOR * float(np.sqrt(np.mean(data * data))))


def horizontal(shot, mode):
    """The coordinate across the gather, one per receiver, and its axis label; auto: the receivers'
    x where it rises or falls along the record, else their index."""
    nrec = shot["data"].shape[0]
    index = (np.arange(nrec, dtype=float), "receiver index")
    if mode == "index":
        return index
    name = "x" if mode == "auto" else mode
    c = shot[name]
    if c is None:
        if mode == "auto":
            return index
        what = "receiver positions" if name == "x" else "source and receiver positions"
        raise InputError(f"--horizontal {mode}: {shot['name']} records no {what} (--horizontal index draws it)")
    step = np.diff(c)
    if not (np.all(step > 0) or np.all(step < 0)):
        if mode == "auto":
            return index
        raise InputError(f"--horizontal {mode}: the receivers' {name} neither rises nor falls along "
                         f"{shot['name']} (a grid, or several lines?); --horizontal index draws it")
    return np.asarray(c, dtype=float), {"x": "receiver x (m)", "offset": "offset from the source (m)"}[name]


def model_inputs(args):
    if args.spacing is not None and not args.spacing > 0:
        raise InputError(f"--spacing {args.spacing}: must be positive metres")
    spacing = args.spacing
    if os.path.isdir(args.file):
        summary = wave_files.read_summary(args.file)
        v = wave_files.run_model(args.file, summary)
        name = f"{os.path.basename(os.path.normpath(args.file))}: {wave_files.run_model_name(summary)}"
        if spacing is None and _positive(summary["model"].get("spacing")):
            spacing = float(summary["model"]["spacing"])
    else:
        v, stated = wave_files.read_model(args.file)
        name = os.path.basename(args.file)
        if spacing is None and stated:
            spacing = stated   # a SEG-Y sample interval read as millimetres
            name += " (h from its sample interval)"
    if v.ndim == 2:
        if args.index is not None or args.axis is not None:
            raise InputError(f"{args.file}: a 2D model {v.shape} is drawn whole; --axis and --index slice a 3D one")
        img, (rows, cols), where = v, ("z", "x"), None
    else:
        axis = args.axis or "y"
        k = _index(v.shape, axis, args.index, f"the model {args.file}'s shape")
        img = np.take(v, k, axis=AXES.index(axis))
        (rows, cols), where = _across(axis), f"{axis} index {k} of {v.shape[AXES.index(axis)]}"
    return {"img": img, "rows": rows, "cols": cols, "where": where, "spacing": spacing, "name": name,
            "shape": v.shape, "vmin": float(v.min()), "vmax": float(v.max())}


def cpml_inputs(args):
    doc = read_json(args.file, "bench/wave_cpml.py output")
    widths = doc.get("widths") if isinstance(doc, dict) else None
    if not isinstance(widths, dict) or not widths:
        raise InputError(f"{args.file}: no 'widths' table: not bench/wave_cpml.py output")
    rows = []
    for w, fig in widths.items():
        try:
            rows.append((int(w), float(fig["peak_db"]), float(fig["band_db"]), fig.get("per_angle", {})))
        except (KeyError, TypeError, ValueError):
            raise InputError(f"{args.file}: width {w!r} lacks numeric peak_db and band_db")
    return doc, sorted(rows)


def perf_inputs(args):
    rows = [load_summary(p) for p in expand(args.files)]
    return rows


def _finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _positive(x):
    return _finite(x) and x > 0


# ------------------------------------------------------------------------------------------------
# Figures
# ------------------------------------------------------------------------------------------------

def fig_trace(t, plt):
    n = len(t["u"])
    time = t["t0"] + np.arange(n) * t["dt"]
    fig, (ax, axd) = plt.subplots(2, 1, figsize=(8, 5.2), sharex=True, gridspec_kw={"height_ratios": [3, 1.4]})
    ax.plot(time, t["exact"], color="black", lw=2.2, alpha=0.45, label="analytic")
    ax.plot(time, t["u"], color="tab:blue", lw=1.0, label="fdstencil wave")
    axd.plot(time, t["u"] - t["exact"], color="tab:red", lw=0.9, label="computed - analytic")
    mine = t["mine"]
    own = f", this receiver {100 * mine['misfit']:.3g} %" if mine and _finite(mine.get("misfit")) else \
        (", this receiver not compared (no direct wave in its window)" if t["skipped"] else "")
    for a in (ax, axd):
        a.axvline(t["window_end"], color="dimgray", ls="--", lw=1.1,
                  label=f"window end {t['window_end']:.4g} s: first possible reflection" if a is ax else None)
        a.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    axd.legend(fontsize=8, loc="best")
    pos = t["position"]
    where = f" at ({', '.join(f'{c:g}' for c in pos)}) m" if isinstance(pos, list) else ""
    ax.set_title(f"receiver {t['k']}{where}: misfit up to the window end {100 * t['misfit']:.3g} % "
                 f"(all receivers){own}", fontsize=9.5)
    ax.set_ylabel("u")
    axd.set_ylabel("difference")
    axd.set_xlabel("time (s)")
    return fig


def _edges(c):
    """Cell edges around the centres c (rising): halfway between neighbours, half a step beyond
    the ends; one centre spans +-0.5."""
    if len(c) == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = 0.5 * (c[1:] + c[:-1])
    return np.concatenate([[2 * c[0] - mid[0]], mid, [2 * c[-1] - mid[-1]]])


def _section(shape, spacing):
    """A vertical section's extent (each pixel centred on its grid point: index i spans
    (i - 1/2, i + 1/2) steps), its unit, and a figure size of the image's own aspect within limits
    a page can hold (the colour bars take ~1.4 inch)."""
    step, unit = (spacing, "m") if spacing else (1.0, "grid points")
    extent = (-0.5 * step, (shape[1] - 0.5) * step, (shape[0] - 0.5) * step, -0.5 * step)
    ratio = min(2.0, max(0.35, shape[0] / shape[1]))
    return extent, unit, ratio


def fig_snapshot(s, plt):
    img, vmax = s["img"], s["vmax"]   # symmetric about 0: positive and negative alike
    extent, unit, ratio = _section(img.shape, s["spacing"])
    model = s["model"]
    fig, ax = plt.subplots(figsize=(7.4 + (1.2 if model is not None else 0), 6.0 * ratio + 1.0))
    if model is None:
        im = ax.imshow(img, cmap="RdBu_r", vmin=-vmax, vmax=vmax, extent=extent, aspect="equal",
                       interpolation="nearest")
        fig.colorbar(im, ax=ax, shrink=0.8, label="u")
    else:
        import matplotlib.colors as mcolors
        norm = mcolors.Normalize(vmin=-vmax, vmax=vmax, clip=True)
        cmap = plt.get_cmap("RdBu_r")
        rgba = cmap(norm(img))
        rgba[..., 3] = np.clip(np.abs(img) / (OPAQUE_FROM * vmax), 0.0, 1.0)
        # The model in the lighter greys only, so that red and blue both read over it.
        greys = mcolors.ListedColormap(plt.get_cmap("gray")(np.linspace(MODEL_GREYS[0], MODEL_GREYS[1], 256)))
        vm = ax.imshow(model, cmap=greys, extent=extent, aspect="equal", interpolation="nearest")
        ax.imshow(rgba, extent=extent, aspect="equal", interpolation="nearest")
        fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.8, pad=0.02,
                     label="u (transparent where weak)")
        fig.colorbar(vm, ax=ax, shrink=0.8, pad=0.02, label="velocity (m/s)")
    ax.set_xlabel(f"{s['cols']} ({unit})")
    ax.set_ylabel(f"{s['rows']} ({unit})")
    title = f"{s['name']}: {img.shape[0]} x {img.shape[1]}"
    if s["time"] is not None:
        title += f", t = {s['time']:.4g} s"
    if s["where"]:
        title += f", the slice at {s['where']}"
    scale = f"+-{vmax:.3g}" + (f" (the {s['clip']:g}th percentile of |u|)" if s["clip"] < 100 else "")
    title += f"; colour scale {scale}"
    if model is not None:
        title += f"\nover {s['model_name']} ({model.min():.0f}..{model.max():.0f} m/s)"
    ax.set_title(title, fontsize=9.5)
    return fig


def fig_gather(g, plt):
    data, t, across, level = g["data"], g["t"], g["across"], g["level"]
    fig, ax = plt.subplots(figsize=(8, 6.2))
    cmap = {"grey": "Greys", "seismic": "seismic"}[g["cmap"]]   # Greys: positive black, as on paper
    xe, te = _edges(across), _edges(t)
    steps = np.diff(xe)
    if np.allclose(steps, steps[0], rtol=1e-3):   # evenly spaced: one image, resampled for the screen
        im = ax.imshow(data.T, cmap=cmap, vmin=-level, vmax=level, aspect="auto", interpolation="antialiased",
                       extent=(xe[0], xe[-1], te[-1], te[0]))
    else:   # uneven spacing: a cell per sample, each as wide as its receiver's share of the line
        im = ax.pcolormesh(xe, te, data.T, cmap=cmap, vmin=-level, vmax=level, shading="flat", rasterized=True)
        ax.set_ylim(te[-1], te[0])
    gain = f" x gain ({g['gain']})" if g["gain"] != "none" else ""
    fig.colorbar(im, ax=ax, shrink=0.85, pad=0.02, label="u" + gain)
    ax.set_xlabel(g["label"])
    ax.set_ylabel("time (s)")
    ax.set_title(f"{g['name']} ({g['format']}): {data.shape[0]} receivers x {data.shape[1]} samples at "
                 f"{g['dt'] * 1e3:.4g} ms\ngain {g['gain']}; {g['clip_text']}", fontsize=9.5)
    return fig


def fig_model(m, plt):
    img = m["img"]
    extent, unit, ratio = _section(img.shape, m["spacing"])
    fig, ax = plt.subplots(figsize=(7.4, 6.0 * ratio + 1.0))
    im = ax.imshow(img, cmap="viridis", extent=extent, aspect="equal", interpolation="nearest")
    fig.colorbar(im, ax=ax, shrink=0.8, label="velocity (m/s)")
    ax.set_xlabel(f"{m['cols']} ({unit})")
    ax.set_ylabel(f"{m['rows']} ({unit})")
    title = f"{m['name']}: {' x '.join(str(n) for n in m['shape'])}"
    if m["spacing"]:
        title += f" at h = {m['spacing']:g} m"
    title += f", {m['vmin']:.0f}..{m['vmax']:.0f} m/s"
    if m["where"]:
        title += f"; the slice at {m['where']}"
    ax.set_title(title, fontsize=9.5)
    return fig


def fig_cpml(doc, rows, plt):
    fig, ax = plt.subplots(figsize=(6.5, 4.4))
    ws = [r[0] for r in rows]
    ax.plot(ws, [r[1] for r in rows], "o-", color="tab:blue", label="peak: max|a-b| / max|b| (worst angle)")
    ax.plot(ws, [r[2] for r in rows], "s--", color="tab:orange",
            label="band: max |A-B| / |B| over the Ricker's 10 % band (worst angle)")
    angles = sorted({a for r in rows for a in r[3]}, key=lambda a: float(a))
    for a in angles:  # each angle's peak faintly, to show which one sets the worst figure
        pts = [(r[0], r[3][a]["peak_db"]) for r in rows if a in r[3] and _finite(r[3][a].get("peak_db"))]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ":", color="tab:blue", alpha=0.35, lw=0.9)
            ax.annotate(f"{a}°", pts[-1], xytext=(3, 0), textcoords="offset points", fontsize=7, alpha=0.6)
    ax.axhline(TARGET_DB, color="black", ls="-.", lw=1, label=f"target {TARGET_DB:g} dB (1 %)")
    ax.set_xticks(ws)
    ax.set_xlabel("CPML width (points)")
    ax.set_ylabel("reflection at the receiver (dB)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7.5)
    dev = doc.get("device")
    dev = dev if isinstance(dev, dict) else (dev[0] if isinstance(dev, list) and dev else {})
    ax.set_title(f"CPML reflection, {doc.get('dim', '?')}D, v {doc.get('velocity', '?')} m/s, "
                 f"h {doc.get('spacing', '?')} m, Ricker {doc.get('f0', '?')} Hz; {dev.get('backend', '?')}",
                 fontsize=9)
    return fig


def fig_perf(rows, reference, plt):
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    colours = plt.get_cmap("tab10")
    for i, radius in enumerate(sorted({r["radius"] for r in rows})):
        mine = sorted((r for r in rows if r["radius"] == radius), key=lambda r: r["points"])
        c = colours(i % 10)
        ax.plot([r["points"] for r in mine], [r["gpts"] for r in mine], "o-", color=c, label=f"R = {radius}")
        bound = [r for r in mine if r["bound_gpts"] > 0]
        if bound:
            ax.plot([r["points"] for r in bound], [r["bound_gpts"] for r in bound], "^:", color=c, mfc="none",
                    label=f"R = {radius}: bandwidth bound")
    if reference > 0:
        ax.axhline(reference, color="black", ls="--", lw=1.1, label=f"Deepwave: {reference:g} GPts/s")
    ax.set_xscale("log")
    ax.set_xlabel("computational points (model + absorbing layers)")
    ax.set_ylabel("GPts/s (points x steps / time loop)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    backends = sorted({r["backend"] for r in rows})
    ax.set_title(f"fdstencil wave throughput, {', '.join(backends)}; bound = copy GB/s (same run) / "
                 f"DRAM bytes per point", fontsize=9)
    return fig


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("trace", help="a receiver's trace against the analytic one")
    t.add_argument("run_dir")
    t.add_argument("--receiver", type=int, default=0)
    g = sub.add_parser("gather", help="a shot record as an image, clipped, with a gain")
    g.add_argument("source", metavar="RUN_DIR|SHOT.npy|SHOT.sgy")
    g.add_argument("--clip", type=float, default=GATHER_CLIP,
                   help=f"the colour scale's end: this percentile of |amplitude| after the gain, in (0, 100] "
                        f"(default {GATHER_CLIP:g})")
    g.add_argument("--gain", choices=("none", "tpow", "agc"), default="none",
                   help="none, t^p (--tpow) or AGC (--agc-window) (default none)")
    g.add_argument("--tpow", type=float, help=f"--gain tpow's power p (default {GATHER_TPOW:g})")
    g.add_argument("--agc-window", type=float, metavar="S",
                   help=f"--gain agc's window in seconds (default {AGC_WINDOW_S:g})")
    g.add_argument("--cmap", choices=("grey", "seismic"), default="grey",
                   help="grey (positive black) or seismic (positive red) (default grey)")
    g.add_argument("--horizontal", choices=("auto", "index", "x", "offset"), default="auto",
                   help="across the gather: the receivers' x, their offset from the (first) source, or their "
                        "index; auto: x where it rises or falls along the record, else the index")
    s = sub.add_parser("snapshot", help="a snapshot or a slice of a 3D one, over the model if given")
    s.add_argument("file", metavar="FILE.npy|RUN_DIR")
    s.add_argument("--step", type=int, help="RUN_DIR: the snapshot of step N (default: the last)")
    s.add_argument("--model", metavar="FILE.npy|FILE.sgy",
                   help="the velocity model to draw under the wavefield (default with a RUN_DIR: the run's)")
    s.add_argument("--spacing", type=float, help="grid spacing in metres: axes in metres (default with a RUN_DIR: "
                                                 "the run's)")
    s.add_argument("--axis", choices=AXES, help="3D: the axis the slice cuts (default y)")
    s.add_argument("--index", type=int, help="3D: the slice's index along --axis (default: the middle)")
    s.add_argument("--clip", type=float, default=100.0,
                   help="the colour scale's end: this percentile of |u|, in (0, 100] (default 100: the largest)")
    s.add_argument("--axes", default="zx", choices=("zx", "yx", "zy"),
                   help="2D arrays without a model: the names of their rows and columns (zx: a 2D model, yx: a "
                        "z=K slice)")
    m = sub.add_parser("model", help="a velocity model or a slice of a 3D one")
    m.add_argument("file", metavar="FILE.npy|FILE.sgy|RUN_DIR")
    m.add_argument("--axis", choices=AXES, help="3D: the axis the slice cuts (default y)")
    m.add_argument("--index", type=int, help="3D: the slice's index along --axis (default: the middle)")
    m.add_argument("--spacing", type=float, help="grid spacing in metres: axes in metres")
    c = sub.add_parser("cpml", help="CPML reflection against its width")
    c.add_argument("file")
    f = sub.add_parser("perf", help="GPts/s against size and radius")
    f.add_argument("files", nargs="+")
    f.add_argument("--reference-gpts", type=float, default=DEEPWAVE_GPTS,
                   help=f"the horizontal comparison line (Deepwave, {DEEPWAVE_GPTS:g}); 0 hides it")
    for sp in (t, g, s, m, c, f):
        sp.add_argument("--output", required=True, help="the PNG to write")
    args = p.parse_args(argv)

    try:
        problem = png_out.folder_problem(args.output)
        if problem:
            raise InputError(problem)
        if args.cmd == "trace":
            payload = trace_inputs(args)
            payload["k"] = args.receiver
        elif args.cmd == "gather":
            payload = gather_inputs(args)
            payload["cmap"] = args.cmap
        elif args.cmd == "snapshot":
            payload = snapshot_inputs(args)
        elif args.cmd == "model":
            payload = model_inputs(args)
        elif args.cmd == "cpml":
            payload = cpml_inputs(args)
        else:
            payload = perf_inputs(args)
    except InputError as e:
        print(f"plot_wave.py: error: {e}", file=sys.stderr)
        return 2

    plt = png_out.pyplot("plot_wave.py")
    if plt is None:
        return 1

    if args.cmd == "trace":
        fig = fig_trace(payload, plt)
    elif args.cmd == "gather":
        fig = fig_gather(payload, plt)
    elif args.cmd == "snapshot":
        fig = fig_snapshot(payload, plt)
    elif args.cmd == "model":
        fig = fig_model(payload, plt)
    elif args.cmd == "cpml":
        fig = fig_cpml(*payload, plt)
    else:
        fig = fig_perf(payload, args.reference_gpts, plt)
    return png_out.save(fig, args.output, DPI, "plot_wave.py")


if __name__ == "__main__":
    sys.exit(main())
