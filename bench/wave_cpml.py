#!/usr/bin/env python3
"""How much the wave solver's CPML reflects, in dB, at several widths, measured with `fdstencil wave`.

Method (the text docs/ quotes):

  Two runs share a homogeneous model (2000 m/s, 5 m spacing), one Ricker source (15 Hz, delayed by
  1.5 / f0 so it starts at 1e-8 of its peak), the same receivers relative to the source, the same
  time step and the same number of steps.

  (a) The test model has a CPML of width W outside every face. The source lies d_s = 45 points
      from its left face (x = 0); a vertical line of receivers lies d_r = 15 points from it, from
      the source's depth downwards. Seen from the source's mirror image behind the left face, the
      receiver dz below the source is hit at incidence angle atan(dz / (d_s + d_r)): the receivers
      at dz = 0, 35, 60, 104 points measure 0, 30, 45 and 60 degrees. Every other face lies so far
      from the source and the receivers (P points, below) that nothing it reflects reaches a
      receiver within the recorded time: each figure belongs to the left face and its angle.
  (b) The reference is the same model extended by P points to the left, the source and receivers
      moved with it, so no face is near enough to reflect anything into the record.

  a - b is then the wave the left face's CPML reflected (plus round-off). Each receiver's window
  runs from t = 0 until the echo from the rigid wall behind the widest CPML measured, which has
  crossed the layer twice, has passed (its path over the wave speed, plus the wavelet's duration
  2 x delay, plus 0.5 / f0 of cosine taper at the window's end). P is chosen so that every path
  off any other face (and, in the reference, off every face) is longer than the speed times the
  longest window. Per receiver:

    peak_db = 20 log10( max|a - b| / max|b| )                over the window
    band_db = 20 log10( max over f in the band |A(f) - B(f)| / |B(f)| )
              A, B the spectra of the tapered windows zero-padded to >= 8x the window, the band
              where the Ricker's amplitude spectrum is >= 10 % of its peak: 0.196 f0 .. 2.211 f0.
    floor_db = peak_db's ratio before the front reflection can arrive: how far apart the two runs
              are where physics says they agree (round-off and the stencil's numerical precursor);
              a floor near peak_db would mean the runs are not comparable.

  The width's figures are the worst over the angles. They are ratios at the receiver, not
  reflection coefficients: the reflection travelled further than the direct wave, so it has
  spread more; spreading_db (10 log10 of the path ratio in 2D, 20 log10 in 3D) is the amount to
  add for an estimate of the coefficient at the face.

Usage: python3 bench/wave_cpml.py [--dim 2|3] [--widths 10,20,40] [--cli PATH] [--backend auto]
       [--output FILE.json] [--keep DIR]
The 2D default runs in seconds on a CPU; --dim 3 (tens of millions of points) is meant for a GPU.
Exit status: 0 on success, 2 for bad arguments or a missing CLI, 1 when a run fails or its output
is not what the solver documents.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# CMake names the CLI target's output `fdstencil` in the build root (CMakeLists.txt OUTPUT_NAME).
DEFAULT_CLIS = [os.path.join(REPO_ROOT, "build", "fdstencil"), os.path.join(REPO_ROOT, "build-cli", "fdstencil")]

# The model and wavelet. 2000 m/s at 5 m and 15 Hz give v / (2.76 f0 h) = 9.7 points per
# wavelength at the Ricker's highest significant frequency (2.76 f0, its 1 % point): over twice
# what order 8 needs for 1 % phase error, so numerical dispersion does not pose as reflection.
VELOCITY = 2000.0
SPACING = 5.0
F0 = 15.0
# At 1.5 / f0 before its peak the Ricker is 1e-8 of it: the source is "off" before t = 0 and a
# reflection "arrives" at its path over v, so the geometry below can be trusted to 1e-8.
DELAY_PERIODS = 1.5
# The cosine taper at each window's end, against spectral leakage of the truncated 2D tail.
TAPER_PERIODS = 0.5
# The band: where the Ricker's amplitude spectrum is at least this share of its peak.
BAND_FRACTION = 0.1
# Zero padding of the windows before the FFT, for a smooth spectral ratio over the band.
PAD_FACTOR = 8

# Geometry in grid points. 45 points = 1.7 dominant wavelengths from source to face: the face is in
# the source's far field. 15 points keep the receivers' 8-point Hicks stencils clear of the layer.
SOURCE_TO_FACE = 45
RECEIVER_TO_FACE = 15
ANGLES = (0.0, 30.0, 45.0, 60.0)
# Extra distance on every clearance: numerical dispersion lets the highest frequencies run a few
# per cent fast or slow, and the halo behind the CPML adds R points to the wall echo's path.
SPEED_MARGIN = 1.05
GUARD_POINTS = 10


def ricker_amplitude(f, f0):
    """The Ricker wavelet's amplitude spectrum, 1 at its peak f = f0: (f/f0)^2 exp(1 - (f/f0)^2)."""
    x2 = (np.asarray(f, dtype=float) / f0) ** 2
    return x2 * np.exp(1.0 - x2)


def ricker_band(f0, fraction=BAND_FRACTION):
    """(f_lo, f_hi): where the Ricker's amplitude spectrum is >= fraction of its peak, by bisection
    on the closed form (0.196 f0 and 2.211 f0 for 10 %)."""
    if not 0 < fraction < 1:
        raise ValueError(f"the band's fraction must lie in (0, 1), got {fraction}")

    def solve(lo, hi):  # the spectrum minus the level changes sign once between lo and hi
        g = lambda x: float(ricker_amplitude(x * f0, f0)) - fraction  # noqa: E731
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if (g(lo) < 0) == (g(mid) < 0):
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi) * f0

    return solve(0.0, 1.0), solve(1.0, 10.0)


def ricker(f0, delay, dt, nt):
    """The CLI's Ricker: (1 - 2a) exp(-a), a = (pi f0 (t - delay))^2, at t = n dt."""
    a = (math.pi * f0 * (np.arange(nt) * dt - delay)) ** 2
    return (1 - 2 * a) * np.exp(-a)


def db(ratio):
    return 20.0 * math.log10(ratio) if ratio > 0 else -math.inf


def reflection_db(test, ref, dt, band, n_window=None, taper_samples=0, n_floor=None):
    """The reflection a - b against the reference b over the first n_window samples.

    Returns {"peak_db", "band_db"} (and "floor_db" when n_floor is given: the peak ratio over the
    first n_floor samples only). The spectra are those of the windows with a cosine taper over
    their last taper_samples samples, zero-padded to at least PAD_FACTOR times the window; band_db
    is the largest ratio at a frequency in band = (f_lo, f_hi) Hz."""
    a = np.asarray(test, dtype=np.float64)
    b = np.asarray(ref, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"the traces must be 1D and of one length, got {a.shape} and {b.shape}")
    n = len(a) if n_window is None else int(n_window)
    if not 2 <= n <= len(a):
        raise ValueError(f"the window of {n} samples does not fit traces of {len(a)}")
    if not np.all(np.isfinite(a[:n])) or not np.all(np.isfinite(b[:n])):
        raise ValueError("a trace holds NaN or infinity")
    d = a[:n] - b[:n]
    bw = b[:n]
    bmax = np.max(np.abs(bw))
    if bmax == 0:
        raise ValueError("the reference trace is zero over the window: nothing to compare with")
    out = {"peak_db": db(np.max(np.abs(d)) / bmax)}
    if n_floor is not None:
        m = max(1, min(int(n_floor), n))
        out["floor_db"] = db(np.max(np.abs(d[:m])) / bmax)
    w = np.ones(n)
    k = min(int(taper_samples), n - 1)
    if k > 0:
        w[n - k:] = 0.5 * (1 + np.cos(np.pi * np.arange(1, k + 1) / k))
    nfft = 1 << int(math.ceil(math.log2(PAD_FACTOR * n)))
    f = np.fft.rfftfreq(nfft, dt)
    D = np.abs(np.fft.rfft(d * w, nfft))
    B = np.abs(np.fft.rfft(bw * w, nfft))
    inband = (f >= band[0]) & (f <= band[1])
    if not np.any(inband):
        raise ValueError(f"no FFT frequency falls in the band {band[0]:.3g}..{band[1]:.3g} Hz")
    if np.any(B[inband] == 0):
        raise ValueError("the reference's spectrum vanishes inside the band")
    out["band_db"] = db(float(np.max(D[inband] / B[inband])))
    return out


# ------------------------------------------------------------------------------------------------
# Geometry
# ------------------------------------------------------------------------------------------------

def plan_geometry(dim, velocity, spacing, f0, widths, angles=ANGLES, d_s=SOURCE_TO_FACE, d_r=RECEIVER_TO_FACE):
    """Positions in grid points and each receiver's window, for the method in the docstring."""
    delay = DELAY_PERIODS / f0
    span = d_s + d_r                      # source to receivers, measured through the image
    dz = [int(round(span * math.tan(math.radians(a)))) for a in angles]
    wmax = max(widths)
    receivers = []
    for angle, z in zip(angles, dz):
        direct = math.hypot(z, d_s - d_r)
        front = math.hypot(z, span)       # off the CPML's inner face
        # Off the rigid wall behind the widest layer, through it twice; the wall is held one point
        # beyond the layer (apps/fdstencil/wave_analytic.cpp), 8 points leave room for that and more.
        wall = math.hypot(z, span + 2 * (wmax + 8))
        window_s = wall * spacing / velocity + 2 * delay + TAPER_PERIODS / f0
        receivers.append({"angle_nominal": angle, "dz": z, "angle_deg": math.degrees(math.atan2(z, span)),
                          "direct_points": direct, "front_points": front, "window_s": window_s,
                          "floor_s": front * spacing / (SPEED_MARGIN * velocity)})
    t_max = max(r["window_s"] for r in receivers)
    # Any path off a face P points from every source and receiver is >= 2P long.
    clear = int(math.ceil(SPEED_MARGIN * velocity * t_max / (2 * spacing))) + GUARD_POINTS
    depth = max(dz)
    src_z = clear
    shape = [2 * clear + depth + 1, d_s + clear + 1]   # (nz, nx): the receivers' line, P around
    if dim == 3:
        shape.insert(1, 2 * clear + 1)
    return {"clearance": clear, "shape": shape, "source": {"z": src_z, "y": clear, "x": d_s},
            "line": {"z0": src_z, "z1": src_z + depth, "x": d_r, "n": depth + 1},
            "receivers": receivers, "t_max": t_max, "delay": delay, "extend_left": clear}


def rounded(v):
    """Two decimals for dB figures; None for a difference that is exactly zero (JSON has no -inf)."""
    if isinstance(v, float):
        return round(v, 2) if math.isfinite(v) else None
    return v


def coords(dim, z, y, x, spacing):
    vals = [z, y, x] if dim == 3 else [z, x]
    return ",".join(f"{v * spacing:.6g}" for v in vals)


# ------------------------------------------------------------------------------------------------
# Running the CLI
# ------------------------------------------------------------------------------------------------

class RunError(Exception):
    """A run failed or wrote something the solver does not document: exit status 1."""


def run_cli(cli, args, out_dir):
    cmd = [cli, "wave", *args, "--output", out_dir, "--quiet"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise RunError(f"cannot start {cli}: {e}")
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip()[-2000:]
        raise RunError(f"{' '.join(cmd)} exited {r.returncode}:\n{tail}")
    try:
        with open(os.path.join(out_dir, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(out_dir, "shot.json")) as f:
            sidecar = json.load(f)
        shot = np.load(os.path.join(out_dir, "shot.npy"))
    except (OSError, ValueError) as e:
        raise RunError(f"{out_dir}: cannot read the run's output: {e}")
    if summary.get("format") != "fdstencil-wave-summary-1" or sidecar.get("format") != "fdstencil-shot-1":
        raise RunError(f"{out_dir}: unexpected formats {summary.get('format')!r}, {sidecar.get('format')!r}")
    if shot.ndim != 2 or list(shot.shape) != list(sidecar.get("shape", [])):
        raise RunError(f"{out_dir}: shot.npy has shape {shot.shape}, shot.json says {sidecar.get('shape')}")
    return summary, sidecar, shot


def measure(cli, dim, widths, backend, velocity, spacing, f0, radius, work):
    g = plan_geometry(dim, velocity, spacing, f0, widths)
    s, line = g["source"], g["line"]

    def args_for(shape, shift, width, time_or_steps):
        return ["--constant", f"{velocity:g}", "--shape", ",".join(str(n) for n in shape),
                "--spacing", f"{spacing:g}", "--radius", str(radius), "--cpml", str(width),
                "--source", coords(dim, s["z"], s["y"], s["x"] + shift, spacing),
                "--ricker", f"{f0:g}", "--delay", f"{g['delay']:.9g}",
                "--receiver-line", coords(dim, line["z0"], s["y"], line["x"] + shift, spacing) + ":" +
                coords(dim, line["z1"], s["y"], line["x"] + shift, spacing) + f":{line['n']}",
                "--backend", backend, *time_or_steps]

    ref_shape = list(g["shape"])
    ref_shape[-1] += g["extend_left"]
    # The reference first, by time: the solver picks dt; every test run then takes its step count.
    ref_dir = os.path.join(work, "reference")
    ref_sum, ref_side, ref = run_cli(cli, args_for(ref_shape, g["extend_left"], max(widths),
                                                   ["--time", f"{g['t_max']:.9g}"]), ref_dir)
    steps, dt = ref_sum["steps"], ref_side["dt"]
    if abs(dt - ref_sum["dt"]) > 1e-9 * ref_sum["dt"]:
        raise RunError(f"shot.json's dt {dt} is not the run's dt {ref_sum['dt']}: the record was resampled")
    if ref.shape[0] != line["n"]:
        raise RunError(f"the reference recorded {ref.shape[0]} receivers, {line['n']} were asked for")
    band = ricker_band(f0)
    result = {"widths": {}, "warnings": sorted(set(ref_sum.get("warnings", [])))}
    devices = {(ref_sum.get("backend"), ref_sum.get("kernel"))}
    for width in widths:
        summary, side, test = run_cli(cli, args_for(g["shape"], 0, width, ["--steps", str(steps)]),
                                      os.path.join(work, f"cpml{width}"))
        if test.shape != ref.shape or abs(side["dt"] - dt) > 1e-9 * dt:
            raise RunError(f"width {width}: shot {test.shape} at dt {side['dt']} against the reference's "
                           f"{ref.shape} at dt {dt}")
        devices.add((summary.get("backend"), summary.get("kernel")))
        result["warnings"] = sorted(set(result["warnings"]) | set(summary.get("warnings", [])))
        per_angle = {}
        for rec in g["receivers"]:
            n = min(ref.shape[1], int(rec["window_s"] / dt) + 1)
            fig = reflection_db(test[rec["dz"]], ref[rec["dz"]], dt, band, n_window=n,
                                taper_samples=int(round(TAPER_PERIODS / f0 / dt)),
                                n_floor=int(rec["floor_s"] / dt))
            ratio = rec["front_points"] / rec["direct_points"]
            fig.update({"angle_deg": round(rec["angle_deg"], 2), "window_s": round(n * dt, 6),
                        "spreading_db": round((10 if dim == 2 else 20) * math.log10(ratio), 2)})
            per_angle[f"{rec['angle_nominal']:g}"] = {k: rounded(v) for k, v in fig.items()}
        result["widths"][str(width)] = {
            "peak_db": worst(a["peak_db"] for a in per_angle.values()),
            "band_db": worst(a["band_db"] for a in per_angle.values()),
            "per_angle": per_angle}
    result.update({"dt": dt, "steps": steps, "band_hz": [round(band[0], 3), round(band[1], 3)],
                   "geometry": {"test_shape": g["shape"], "reference_shape": ref_shape,
                                "clearance_points": g["clearance"], "source_to_face_points": SOURCE_TO_FACE,
                                "receivers_to_face_points": RECEIVER_TO_FACE},
                   # One backend and kernel for every run, as a rule; a list shows where they differed.
                   "device": ([{"backend": b, "kernel": k} for b, k in sorted(devices, key=str)]
                              if len(devices) > 1 else dict(zip(("backend", "kernel"), devices.pop()))),
                   "radius": ref_sum.get("radius", radius), "delay": g["delay"]})
    return result


def worst(figures):
    known = [f for f in figures if f is not None]
    return max(known) if known else None


def find_cli(given):
    if given:
        return given if os.path.isfile(given) and os.access(given, os.X_OK) else None
    for path in DEFAULT_CLIS:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return shutil.which("fdstencil")


def parse_widths(text):
    try:
        widths = [int(w) for w in text.split(",") if w.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"widths must be comma-separated integers, got {text!r}")
    if not widths or any(w < 1 for w in widths):
        raise argparse.ArgumentTypeError(f"widths must be positive, got {text!r}")
    return widths


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dim", type=int, choices=(2, 3), default=2)
    p.add_argument("--widths", type=parse_widths, default=[10, 20, 40], help="CPML widths in points (10,20,40)")
    p.add_argument("--cli", help="the fdstencil binary (default: build/fdstencil, build-cli/fdstencil, then PATH)")
    p.add_argument("--backend", default="auto", choices=("auto", "cuda", "cpu"))
    p.add_argument("--radius", type=int, default=4, help="stencil radius R (order 2R), default 4")
    p.add_argument("--output", help="write the JSON here (default: print it)")
    p.add_argument("--keep", metavar="DIR", help="keep the runs' output folders under DIR")
    args = p.parse_args(argv)
    cli = find_cli(args.cli)
    if cli is None:
        print(f"wave_cpml.py: error: no fdstencil binary at {args.cli or ', '.join(DEFAULT_CLIS)} or on PATH "
              f"(build it, or name it with --cli)", file=sys.stderr)
        return 2
    work = args.keep or tempfile.mkdtemp(prefix="wave_cpml_")
    try:
        os.makedirs(work, exist_ok=True)
        result = measure(cli, args.dim, args.widths, args.backend, VELOCITY, SPACING, F0, args.radius, work)
    except (RunError, ValueError) as e:  # ValueError: traces unfit for the measurement
        print(f"wave_cpml.py: error: {e}", file=sys.stderr)
        return 1
    except (KeyError, TypeError) as e:
        print(f"wave_cpml.py: error: a run's summary.json or shot.json lacks a field the solver documents: {e!r}",
              file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    doc = {"method": "(a) CPML of width W on every face, the left face 45 points from the source and 15 from "
                     "a line of receivers, every other face out of reach; (b) the same model extended to the "
                     "left out of reach. a - b is the left face's reflection: peak = max|a-b| / max|b|, band = "
                     "max over the Ricker's 10 % band of |FFT(a-b)| / |FFT(b)|, per incidence angle, the width's "
                     "figure the worst; ratios at the receiver (spreading_db not added). See bench/wave_cpml.py.",
           "dim": args.dim, "velocity": VELOCITY, "spacing": SPACING, "f0": F0,
           "points_per_min_wavelength": round(VELOCITY / (2.76 * F0 * SPACING), 2),
           **result, "cli_backend": args.backend}
    text = json.dumps(doc, indent=1)
    if args.output:
        tmp = args.output + ".tmp"
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, args.output)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
