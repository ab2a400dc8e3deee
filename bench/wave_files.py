"""Reading `fdstencil wave`'s files for bench/plot_wave.py, every one checked, each refusal an
InputError whose message names the file and the problem (exit 2 in the scripts):

- read_json, read_npy: one file, or a message saying why not.
- read_shot: a shot record, from a run folder, a shot.npy with its shot.json sidecar (the same
  stem, .json), or a SEG-Y file (Python segyio): the traces (nrec, nsamples), the sample
  interval and first sample's time, and where known each receiver's x and offset.
- read_model: a velocity model, from a .npy (nz, nx) or (nz, ny, nx), or a SEG-Y file (one trace
  per vertical column, as src/wave/segy.cpp reads it: 3D by its inline (y) and crossline (x)
  numbers, 2D along the number that varies, else in file order; the sample interval in mm as the
  spacing).
- run_model, run_model_name: the model a run used, rebuilt from its summary.json (constant, layered) or read from
  the file it names.
- run_snapshot, recorded_slice: a run folder's snapshot_<step>.npy, and the --snapshot-slice its
  command cut them with (summary.json's snapshot_slice; older summaries, its command line).
"""
import os
import re
import shlex
import sys

import numpy as np

from report_wave import InputError, read_json  # noqa: F401 (read_json is part of this module's API)

SHOT_FORMAT = "fdstencil-shot-1"
SUMMARY_FORMAT = "fdstencil-wave-summary-1"
# apps/fdstencil/wave_outputs.cpp names each snapshot after its step: snapshot_%06lld.npy.
SNAPSHOT_NAME = re.compile(r"^snapshot_(\d+)\.npy$")
AXES = ("z", "y", "x")
# Metres per unit of a depth model's SEG-Y sample interval (a field of microseconds): millimetres,
# as segyio.tools.from_array and Madagascar write depth, and as src/wave/segy.cpp reads it
# (include/fdstencil/segy.hpp, kDefaultZUnit).
SEGY_Z_UNIT = 1e-3


def read_npy(path, what):
    try:
        a = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file ({what})")
    except IsADirectoryError:
        raise InputError(f"{path}: a folder, not a .npy file ({what})")
    except (OSError, ValueError, EOFError) as e:
        raise InputError(f"{path}: not a readable .npy array: {e}")
    if not isinstance(a, np.ndarray) or a.dtype.kind not in "fiu":
        raise InputError(f"{path}: expected a numeric array, got {getattr(a, 'dtype', type(a))}")
    return a


def is_segy(path):
    return path.lower().endswith((".sgy", ".segy"))


def _segyio(path):
    try:
        import segyio
    except ImportError:
        raise InputError(f"{path}: reading SEG-Y needs the Python module segyio (Debian python3-segyio, pip "
                         f"segyio), which {sys.executable} cannot import")
    return segyio


def _segy_traces(path, what):
    """(segyio, the traces (ntraces, nsamples) float32, a function field -> its values per trace)."""
    segyio = _segyio(path)
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file ({what})")
    try:
        # No geometry inference: a shot record or a 2D line has none, and a 3D cube's is read
        # from the inline and crossline numbers below, whatever the file's sorting.
        with segyio.open(path, "r", ignore_geometry=True) as f:
            traces = np.asarray(f.trace.raw[:], dtype=np.float32)
            fields = {}
            for name in ("INLINE_3D", "CROSSLINE_3D", "GroupX", "GroupY", "SourceX", "SourceY",
                         "SourceGroupScalar", "DelayRecordingTime", "offset"):
                fields[name] = np.asarray(f.attributes(getattr(segyio.TraceField, name))[:], dtype=np.int64)
            interval_us = float(segyio.tools.dt(f, fallback_dt=0.0))
    except (RuntimeError, OSError, ValueError, IndexError, KeyError) as e:
        raise InputError(f"{path}: not a readable SEG-Y file ({what}): {e}")
    if traces.ndim != 2 or traces.shape[0] < 1 or traces.shape[1] < 1:
        raise InputError(f"{path}: holds no traces ({what})")
    return traces, fields, interval_us


def _finite_or_refuse(a, path, what):
    bad = ~np.isfinite(a)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(f"{path}: {what} holds NaN or infinity (first at index {at})")


# ------------------------------------------------------------------------------------------------
# Shot records
# ------------------------------------------------------------------------------------------------

def read_shot(path):
    """A shot record: {"data" (nrec, ns) float64, "dt", "t0", "x", "offset" (arrays or None),
    "name", "format"}; from a run folder, shot.npy + its sidecar, or SEG-Y."""
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file or folder (a shot record)")
    if os.path.isdir(path):
        # The run's record: shot.npy as the CLI writes it, else a shot.sgy beside it.
        candidates = [os.path.join(path, n) for n in ("shot.npy", "shot.sgy")]
        found = [c for c in candidates if os.path.exists(c)]
        if not found:
            raise InputError(f"{path}: holds neither shot.npy nor shot.sgy (a run without receivers?)")
        path = found[0]
    if is_segy(path):
        shot = _shot_segy(path)
    elif path.lower().endswith(".npy"):
        shot = _shot_npy(path)
    else:
        raise InputError(f"{path}: expected a run folder, a shot .npy (with its .json sidecar) or a .sgy file")
    data = shot["data"]
    if data.ndim != 2 or data.shape[0] < 1 or data.shape[1] < 2:
        raise InputError(f"{path}: shape {data.shape}: a shot record is (receivers, samples) with at least 2 "
                         f"samples")
    _finite_or_refuse(data, path, "the record")
    if not np.any(data):
        raise InputError(f"{path}: every sample is zero, nothing to draw (did the wave reach the receivers within "
                         f"the run's time?)")
    shot["data"] = data.astype(np.float64)
    shot["name"] = os.path.basename(path)
    return shot


def _positions(side, key, n, path):
    """Positions [z, x] or [z, y, x] per item, as an (n, dim) array; None when not recorded."""
    items = side.get(key)
    if items is None:
        return None
    if key == "sources":
        items = [s.get("position") if isinstance(s, dict) else None for s in items]
    try:
        a = np.asarray(items, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{path}: '{key}' is not a list of [z, x] or [z, y, x] positions")
    if a.ndim != 2 or a.shape[1] not in (2, 3) or (n is not None and a.shape[0] != n) or not np.all(np.isfinite(a)):
        want = f"{n} " if n is not None else ""
        raise InputError(f"{path}: '{key}' holds {a.shape[0] if a.ndim else 0} entries of shape {a.shape[1:]}, "
                         f"expected {want}finite [z, x] or [z, y, x] positions")
    return a


def _shot_npy(path):
    side_path = path[:-len(".npy")] + ".json"
    side = read_json(side_path, "the shot record's sidecar, which gives the sample interval")
    dt = side.get("dt") if isinstance(side, dict) else None
    if not isinstance(side, dict) or side.get("format") != SHOT_FORMAT or not _positive(dt):
        raise InputError(f"{side_path}: not an {SHOT_FORMAT} sidecar with a positive dt")
    data = read_npy(path, "a shot record")
    if data.ndim != 2:
        raise InputError(f"{path}: shape {data.shape}: a shot record is (receivers, samples)")
    shape = side.get("shape")
    if shape is not None and list(shape) != list(data.shape):
        raise InputError(f"{path}: shape {tuple(data.shape)}, but its sidecar {side_path} says {tuple(shape)}")
    rec = _positions(side, "receivers", data.shape[0], side_path)
    src = _positions(side, "sources", None, side_path)
    x = rec[:, -1] if rec is not None else None
    offset = None
    if rec is not None and src is not None and len(src):
        offset = _signed_offset(rec[:, -1] - src[0, -1], rec[:, 1] - src[0, 1] if rec.shape[1] == 3 else 0.0)
    t0 = side.get("t0", 0.0)
    return {"data": data, "dt": float(dt), "t0": float(t0) if _finite(t0) else 0.0, "x": x, "offset": offset,
            "format": "npy"}


def _signed_offset(dx, dy):
    """The horizontal source-receiver distance, negative on the side of smaller x (of smaller y where
    x is the same), as a 2D line's offsets are signed."""
    dx = np.asarray(dx, dtype=np.float64)
    dy = np.broadcast_to(np.asarray(dy, dtype=np.float64), dx.shape)
    sign = np.where(dx != 0, np.sign(dx), np.where(dy != 0, np.sign(dy), 1.0))
    return sign * np.hypot(dx, dy)


def _shot_segy(path):
    traces, h, interval_us = _segy_traces(path, "a shot record")  # here the interval is time
    if not interval_us > 0:
        raise InputError(f"{path}: the headers give no sample interval (binary header bytes 3217-3218, trace "
                         f"header bytes 117-118 are 0)")
    scalar = h["SourceGroupScalar"].astype(np.float64)
    # SEG-Y's coordinate scalar: positive multiplies, negative divides, 0 means 1.
    factor = np.ones_like(scalar)
    factor[scalar > 0] = scalar[scalar > 0]
    factor[scalar < 0] = 1.0 / -scalar[scalar < 0]
    gx, gy = h["GroupX"] * factor, h["GroupY"] * factor
    sx, sy = h["SourceX"] * factor, h["SourceY"] * factor
    known = np.ptp(gx) > 0 or np.ptp(gy) > 0   # every receiver at one place: the coordinates were not written
    x = gx if known else None
    offset = _signed_offset(gx - sx, gy - sy) if known else None
    if offset is None and np.any(h["offset"]):   # no coordinates, but the offsets were written
        offset = h["offset"].astype(np.float64)
    return {"data": traces, "dt": interval_us * 1e-6, "t0": float(h["DelayRecordingTime"][0]) * 1e-3, "x": x,
            "offset": offset, "format": "SEG-Y"}


# ------------------------------------------------------------------------------------------------
# Velocity models
# ------------------------------------------------------------------------------------------------

def read_model(path):
    """A velocity model (nz, nx) or (nz, ny, nx), float64, finite and positive everywhere, and the
    grid spacing its file states (a SEG-Y sample interval), None where it states none."""
    if is_segy(path):
        v, h = _model_segy(path)
    else:
        v, h = read_npy(path, "a velocity model"), None
    check_model(v, path)
    return v.astype(np.float64), h


def check_model(v, path):
    if v.ndim not in (2, 3) or min(v.shape) < 2:
        raise InputError(f"{path}: shape {tuple(v.shape)}: a velocity model is (nz, nx) or (nz, ny, nx) with at "
                         f"least 2 points per axis")
    bad = ~(np.isfinite(v) & (v > 0))
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(f"{path}: velocity {v[at]} at index {at}: velocities must be finite and positive (m/s)")


def _model_segy(path):
    """As src/wave/segy.cpp reads a model: samples down z; a 3D cube by its inline (y) and
    crossline (x) numbers, in any trace order; a 2D line along whichever number varies, or in file
    order where the numbers do not."""
    traces, h, interval = _segy_traces(path, "a velocity model")
    il, xl = h["INLINE_3D"], h["CROSSLINE_3D"]
    ils, xls = np.unique(il), np.unique(xl)
    pairs = len(set(zip(il.tolist(), xl.tolist())))
    if pairs > 1 and pairs != len(traces):
        raise InputError(f"{path}: inconsistent geometry: {len(traces)} traces but {pairs} distinct (inline, "
                         f"crossline) pairs (bytes 189, 193): a trace per grid column, each pair once")
    if len(ils) > 1 and len(xls) > 1:
        if len(ils) * len(xls) != len(traces):
            raise InputError(f"{path}: inconsistent 3D geometry: {len(traces)} traces over {len(ils)} inlines x "
                             f"{len(xls)} crosslines (each pair must appear exactly once)")
        order = np.lexsort((xl, il))
        v = traces[order].reshape(len(ils), len(xls), traces.shape[1]).transpose(2, 0, 1)
    else:
        order = np.argsort(xl if len(xls) > 1 else il, kind="stable") if pairs > 1 else np.arange(len(traces))
        v = traces[order].T
    return np.ascontiguousarray(v), (interval * SEGY_Z_UNIT if interval > 0 else None)


def run_model_name(summary):
    """How a figure names a run's model: "the run's layered model", "the run's model v.npy"."""
    m = summary.get("model") if isinstance(summary, dict) else None
    m = m if isinstance(m, dict) else {}
    if m.get("kind") == "file" and isinstance(m.get("path"), str):
        return f"the run's model {os.path.basename(m['path'])}"
    return f"the run's {m.get('kind', '?')} model"


def run_model(run_dir, summary):
    """The velocity model of the run in run_dir, from its summary.json's model entry."""
    where = os.path.join(run_dir, "summary.json")
    m = summary.get("model") if isinstance(summary, dict) else None
    if not isinstance(m, dict):
        raise InputError(f"{where}: no model entry; give --model FILE")
    kind, shape = m.get("kind"), m.get("shape")
    if kind == "file":
        path = m.get("path")
        if not isinstance(path, str) or not os.path.exists(path):
            raise InputError(f"{where}: the run's model file {path!r} is not found from here; give --model FILE (or "
                             f"the snapshot file instead of the run folder, for the wavefield alone)")
        return read_model(path)[0]
    if not isinstance(shape, list) or len(shape) not in (2, 3) or not all(isinstance(n, int) and n > 0 for n in shape):
        raise InputError(f"{where}: the model entry has no valid shape")
    if kind == "constant" and _positive(m.get("velocity")):
        v = np.full(shape, np.float32(m["velocity"]), dtype=np.float32)
    elif kind == "layered" and _positive(m.get("spacing")) and isinstance(m.get("layers"), list) and m["layers"]:
        # As src/wave/model.cpp's Model::layered: point k at depth k h takes the last layer whose
        # top is at or above it.
        h = float(m["spacing"])
        depth = np.arange(shape[0], dtype=np.float64) * h
        column = np.full(shape[0], np.float32(m["layers"][0][1]), dtype=np.float32)
        for top, vel in m["layers"]:
            column[depth >= float(top)] = np.float32(vel)
        v = np.broadcast_to(column.reshape([-1] + [1] * (len(shape) - 1)), shape).copy()
    else:
        raise InputError(f"{where}: cannot rebuild a {kind!r} model from its entry; give --model FILE")
    check_model(v, where)
    return v.astype(np.float64)


# ------------------------------------------------------------------------------------------------
# Run folders
# ------------------------------------------------------------------------------------------------

def read_summary(run_dir):
    path = os.path.join(run_dir, "summary.json")
    doc = read_json(path, "the run's summary")
    if not isinstance(doc, dict) or doc.get("format") != SUMMARY_FORMAT:
        raise InputError(f"{path}: not an {SUMMARY_FORMAT} file")
    return doc


def snapshot_step(name):
    m = SNAPSHOT_NAME.match(os.path.basename(name))
    return int(m.group(1)) if m else None


def run_snapshot(run_dir, step, summary=None):
    """(path, step) of snapshot_<step>.npy in run_dir; the last one when step is None. With the
    run's summary, only the snapshots it lists among its outputs are the run's: a file of another
    run left in the folder is refused, never drawn."""
    found = sorted(s for s in (snapshot_step(n) for n in os.listdir(run_dir)) if s is not None)
    listed = set(summary["outputs"]) if summary and "outputs" in summary else None
    steps = [s for s in found if listed is None or f"snapshot_{s:06d}.npy" in listed]
    others = sorted(set(found) - set(steps))
    if step is not None and step in others:
        raise InputError(f"--step {step}: {run_dir}/snapshot_{step:06d}.npy is not among the outputs its summary.json "
                         f"lists: it is another run's")
    if not steps:
        stray = f" (snapshot_{others[0]:06d}.npy is another run's: its summary.json does not list it)" if others else ""
        raise InputError(f"{run_dir}: holds no snapshot_<step>.npy of its run{stray} (run fdstencil wave with "
                         f"--snapshot-every N or --snapshot-steps A,B)")
    if step is None:
        step = steps[-1]
    elif step not in steps:
        shown = ", ".join(str(s) for s in steps[:12]) + (", ..." if len(steps) > 12 else "")
        raise InputError(f"--step {step}: {run_dir} holds the snapshots of steps {shown}")
    return os.path.join(run_dir, f"snapshot_{step:06d}.npy"), step


def recorded_slice(summary):
    """(axis, index) of the run's --snapshot-slice; None if none. summary.json's snapshot_slice, or
    for a summary written before it had one, the command line's flag."""
    recorded = summary.get("snapshot_slice") if isinstance(summary, dict) else None
    if isinstance(recorded, dict) and recorded.get("axis") in AXES and isinstance(recorded.get("index"), int):
        return recorded["axis"], recorded["index"]
    command = summary.get("command") if isinstance(summary, dict) else None
    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    value = None
    for i, w in enumerate(words):
        if w == "--snapshot-slice" and i + 1 < len(words):
            value = words[i + 1]
        elif w.startswith("--snapshot-slice="):
            value = w[len("--snapshot-slice="):]
    if value is None:
        return None
    m = re.fullmatch(r"\s*([zyx])\s*=\s*(\d+)\s*", value)
    return (m.group(1), int(m.group(2))) if m else None


def _finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x)


def _positive(x):
    return _finite(x) and x > 0
