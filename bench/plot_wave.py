#!/usr/bin/env python3
"""Figures of `fdstencil wave` runs (docs/wave.md), one PNG per call:

  trace    RUN_DIR --output PNG [--receiver K]   receiver K's trace against analytic.npy (a run with
           --compare-analytic), the difference below; the misfit and the end of the comparison
           window from summary.json, the window's end marked
  snapshot FILE.npy --output PNG [--spacing H] [--axis y]   a 2D array as an image, or the middle
           slice of a 3D one across --axis (y by default: a vertical z-x section); symmetric colour
           scale, axes in metres when the spacing is given, else in grid points
  cpml     FILE.json --output PNG   bench/wave_cpml.py's reflection in dB against the CPML width
           (peak and band, the worst over the angles, each angle faint), the -40 dB target marked
  perf     SUMMARY.json|RUN_DIR ... --output PNG [--reference-gpts 36]   GPts/s against the
           computational points, a line per radius, its bandwidth bound dotted in the same colour,
           and Deepwave's 36 GPts/s as a horizontal line

Inputs are checked before anything is drawn: a missing or malformed file, a receiver out of range,
an array of the wrong rank or holding NaN, an output folder that does not exist exit 2 with a
message and write nothing. The PNG is written to a temporary name and renamed into place.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_wave import InputError, expand, load_summary  # noqa: E402

DPI = 130  # as bench/plot_seismic.py: legible 7-8 inch figures in docs/ at ~1000 pixels wide
# The comparison target for the perf figure: Deepwave's throughput as the project's brief quotes
# it (36 GPts/s); no run in this repository measured it, hence the flag.
DEEPWAVE_GPTS = 36.0
# The cpml figure's target line: -40 dB, a reflection of 1 % of the direct wave, the level the
# project asks of its CPML.
TARGET_DB = -40.0


def read_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file ({what})")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}")
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON: {e.msg} at line {e.lineno}")


def read_npy(path, what):
    try:
        a = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file ({what})")
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: not a readable .npy array: {e}")
    if not isinstance(a, np.ndarray) or a.dtype.kind not in "fiu":
        raise InputError(f"{path}: expected a numeric array, got {getattr(a, 'dtype', type(a))}")
    return a


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


def snapshot_inputs(args):
    a = read_npy(args.file, "a snapshot")
    if a.ndim not in (2, 3) or min(a.shape) < 2:
        raise InputError(f"{args.file}: shape {a.shape}: expected a 2D array or a 3D volume (a 1D line "
                         f"is not an image)")
    if not np.all(np.isfinite(a)):
        raise InputError(f"{args.file}: holds NaN or infinity (an unstable run?)")
    if args.spacing is not None and not args.spacing > 0:
        raise InputError(f"--spacing {args.spacing}: must be positive metres")
    labels = ("z", "y", "x")
    if a.ndim == 3:
        axis = labels.index(args.axis)
        mid = a.shape[axis] // 2
        img = np.take(a, mid, axis=axis)
        rows, cols = [n for i, n in enumerate(labels) if i != axis]
        where = f"{args.axis} index {mid} of {a.shape[axis]}"
    else:
        img, (rows, cols), where = a, args.axes, None
    return {"img": img.astype(float), "rows": rows, "cols": cols, "where": where}


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


def fig_snapshot(s, spacing, plt):
    img = s["img"]
    vmax = float(np.max(np.abs(img))) or 1.0   # symmetric about 0: positive and negative alike
    # The image's own aspect, within limits a page can hold; the colour bar takes ~1.4 inch.
    ratio = min(2.0, max(0.35, img.shape[0] / img.shape[1]))
    fig, ax = plt.subplots(figsize=(7.4, 6.0 * ratio + 1.0))
    step, unit = (spacing, "m") if spacing else (1.0, "grid points")
    # Each pixel centred on its grid point: index i spans (i - 1/2, i + 1/2) steps.
    extent = (-0.5 * step, (img.shape[1] - 0.5) * step, (img.shape[0] - 0.5) * step, -0.5 * step)
    im = ax.imshow(img, cmap="RdBu_r", vmin=-vmax, vmax=vmax, extent=extent, aspect="equal",
                   interpolation="nearest")
    ax.set_xlabel(f"{s['cols']} ({unit})")
    ax.set_ylabel(f"{s['rows']} ({unit})")
    fig.colorbar(im, ax=ax, shrink=0.8, label="u")
    title = f"{s['name']}: {img.shape[0]} x {img.shape[1]}"
    if s["where"]:
        title += f", the slice at {s['where']}"
    ax.set_title(title + f"; colour scale +-{vmax:.3g}", fontsize=9.5)
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
    s = sub.add_parser("snapshot", help="a snapshot or a 3D snapshot's middle slice")
    s.add_argument("file")
    s.add_argument("--spacing", type=float, help="grid spacing in metres: axes in metres")
    s.add_argument("--axis", choices=("z", "y", "x"), default="y", help="3D: the axis the middle slice cuts")
    s.add_argument("--axes", default="zx", choices=("zx", "yx", "zy"),
                   help="2D arrays: the names of their rows and columns (zx: a 2D model, yx: a z=K slice)")
    c = sub.add_parser("cpml", help="CPML reflection against its width")
    c.add_argument("file")
    f = sub.add_parser("perf", help="GPts/s against size and radius")
    f.add_argument("files", nargs="+")
    f.add_argument("--reference-gpts", type=float, default=DEEPWAVE_GPTS,
                   help=f"the horizontal comparison line (Deepwave, {DEEPWAVE_GPTS:g}); 0 hides it")
    for sp in (t, s, c, f):
        sp.add_argument("--output", required=True, help="the PNG to write")
    args = p.parse_args(argv)

    try:
        out_dir = os.path.dirname(os.path.abspath(args.output))
        if not os.path.isdir(out_dir) or not os.access(out_dir, os.W_OK):
            raise InputError(f"{args.output}: its folder {out_dir} does not exist or is not writable")
        if args.cmd == "trace":
            payload = trace_inputs(args)
            payload["k"] = args.receiver
        elif args.cmd == "snapshot":
            payload = snapshot_inputs(args)
            payload["name"] = os.path.basename(args.file)
        elif args.cmd == "cpml":
            payload = cpml_inputs(args)
        else:
            payload = perf_inputs(args)
    except InputError as e:
        print(f"plot_wave.py: error: {e}", file=sys.stderr)
        return 2

    try:
        import matplotlib
    except ImportError:
        print("plot_wave.py: error: matplotlib is not installed for " + sys.executable, file=sys.stderr)
        return 1
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if args.cmd == "trace":
        fig = fig_trace(payload, plt)
    elif args.cmd == "snapshot":
        fig = fig_snapshot(payload, args.spacing, plt)
    elif args.cmd == "cpml":
        fig = fig_cpml(*payload, plt)
    else:
        fig = fig_perf(payload, args.reference_gpts, plt)
    fig.tight_layout()
    tmp = args.output + ".tmp.png"
    try:
        fig.savefig(tmp, dpi=DPI)
        os.replace(tmp, args.output)  # nothing half-written under the final name
    except OSError as e:
        print(f"plot_wave.py: error: cannot write {args.output}: {e}", file=sys.stderr)
        if os.path.exists(tmp):
            os.remove(tmp)
        return 1
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
