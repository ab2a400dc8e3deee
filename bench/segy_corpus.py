#!/usr/bin/env python3
"""SEG-Y files written by others, read by fdstencil and by segyio (issue 34's target).

Usage: bench/segy_corpus.py FDSTENCIL DIR [--json OUT.json]

For every .sgy/.segy under DIR: segyio (python3-segyio) opens it big-endian, else little-endian,
ignoring geometry, and gives its traces as float32; `fdstencil segy to-npy --traces` gives its
own. Where segyio decodes the sample format (1, 2, 3, 5, 8), its samples are the reference; for
the formats of rev 2 that segyio 1.8 reads as IBM floats (6, 7, 9-12, 15, 16), the reference is
the standard's decoding done here with NumPy from the file's bytes. Each file is counted as read
by both and equal bit for bit, read by both and different, read by one of them, or by neither.
The corpus is not committed (it is others' files); the figures go to bench/results/segy-corpus/.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import segyio
except ImportError:
    segyio = None

SEGYIO_FORMATS = {1, 2, 3, 5, 8}
# The trace header fields fdstencil reads (segyio's names), raw.
HEADER_FIELDS = ["FieldRecord", "TraceNumber", "CDP", "INLINE_3D", "CROSSLINE_3D", "offset", "SourceX", "SourceY",
                 "GroupX", "GroupY", "CDP_X", "CDP_Y", "SourceDepth", "ReceiverGroupElevation",
                 "DelayRecordingTime", "SourceGroupScalar", "ElevationScalar", "ScalarTraceHeader"]
# The standard's sample types, by format code (big-endian; .newbyteorder for little).
NUMPY_TYPES = {6: ">f8", 9: ">i8", 10: ">u4", 11: ">u2", 12: ">u8", 16: "u1"}
THREE_BYTE = {7: True, 15: False}  # int24, uint24: signed?


def segyio_one(path, out):
    """In a child process (segyio's C library aborts on some files): the samples to out.npy and
    the format, byte order, samples and traces to out.json; exit 1 where segyio refuses."""
    for endian in ("big", "little"):
        try:
            with segyio.open(path, ignore_geometry=True, endian=endian) as f:
                fmt = int(f.bin[segyio.BinField.Format])
                if fmt not in range(1, 17):
                    continue
                np.save(out + ".npy", np.asarray(f.trace.raw[:], dtype=np.float32))
                headers = [{k: int(h[getattr(segyio.TraceField, k)]) for k in HEADER_FIELDS} for h in f.header]
                with open(out + ".json", "w") as j:
                    json.dump({"format": fmt, "little": endian == "little", "ns": len(f.samples),
                               "traces": f.tracecount, "headers": headers}, j)
                return 0
        except Exception:  # segyio's refusals are RuntimeError, OSError, ValueError...
            continue
    return 1


def segyio_read(path, tmp):
    """(samples (traces, ns) float32, layout) or None where segyio refuses the file or aborts."""
    out = os.path.join(tmp, "segyio")
    for ext in (".npy", ".json"):
        if os.path.exists(out + ext):
            os.remove(out + ext)
    r = subprocess.run([sys.executable, __file__, "--segyio-one", path, out], capture_output=True, timeout=120)
    if r.returncode != 0:
        return None
    with open(out + ".json") as j:
        return np.load(out + ".npy"), json.load(j)


def standard_samples(path, layout):
    """The samples by the standard's decoding: segyio's samples per trace, the traces that the
    file's size holds at the format's own sample size (segyio 1.8 counts them at 4 bytes)."""
    fmt, little = layout["format"], layout["little"]
    raw = np.fromfile(path, dtype=np.uint8)
    ns = layout["ns"]
    size = {6: 8, 9: 8, 12: 8, 10: 4, 11: 2, 16: 1, 7: 3, 15: 3}[fmt]
    trace_bytes = 240 + ns * size
    ntr = (raw.size - 3600) // trace_bytes
    first = raw.size - ntr * trace_bytes
    body = raw[first:].reshape(ntr, trace_bytes)[:, 240:]
    if fmt in THREE_BYTE:
        b = body.reshape(ntr, ns, 3).astype(np.int64)
        v = (b[..., 2] | (b[..., 1] << 8) | (b[..., 0] << 16)) if not little else \
            (b[..., 0] | (b[..., 1] << 8) | (b[..., 2] << 16))
        if THREE_BYTE[fmt]:
            v = np.where(v >= 1 << 23, v - (1 << 24), v)
        return v.astype(np.float32)
    dt = np.dtype(NUMPY_TYPES[fmt])
    if little:
        dt = dt.newbyteorder("<")
    return np.frombuffer(body.tobytes(), dtype=dt).reshape(ntr, ns).astype(np.float32)


def scale(s):
    """A SEG-Y scalar: positive multiplies, negative divides, 0 is 1."""
    return 1.0 if s == 0 else float(s) if s > 0 else 1.0 / -s


def expected_geometry(h):
    """fdstencil's geometry of one trace, from segyio's raw fields and the standard's scalars."""
    xy, z = scale(h["SourceGroupScalar"]), scale(h["ElevationScalar"])
    return {"field_record": h["FieldRecord"], "channel": h["TraceNumber"], "cdp": h["CDP"],
            "inline": h["INLINE_3D"], "crossline": h["CROSSLINE_3D"], "offset": h["offset"],
            "source_x": h["SourceX"] * xy, "source_y": h["SourceY"] * xy, "group_x": h["GroupX"] * xy,
            "group_y": h["GroupY"] * xy, "cdp_x": h["CDP_X"] * xy, "cdp_y": h["CDP_Y"] * xy,
            "source_depth": h["SourceDepth"] * z, "group_elevation": h["ReceiverGroupElevation"] * z,
            "delay_s": h["DelayRecordingTime"] * scale(h["ScalarTraceHeader"]) * 1e-3}


def headers_agree(tool, path, headers):
    """Whether `segy info --trace-headers` gives every trace the geometry segyio's fields say."""
    r = subprocess.run([tool, "segy", "info", "--json", "--trace-headers", path], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        return False
    ours = json.loads(r.stdout)["trace_headers"]
    if len(ours) != len(headers):
        return False
    for mine, h in zip(ours, headers):
        for k, v in expected_geometry(h).items():
            if abs(mine[k] - v) > 1e-9 * max(1.0, abs(v)):
                return False
    return True


def fdstencil_read(tool, path, tmp):
    out = os.path.join(tmp, "traces.npy")
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run([tool, "segy", "to-npy", "--traces", path, out], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return np.load(out), ""


def compare(tool, path, tmp):
    row = {"file": path}
    ref = segyio_read(path, tmp) if segyio else None
    ours, why = fdstencil_read(tool, path, tmp)
    row["segyio"] = ref is not None
    row["fdstencil"] = ours is not None
    if not row["fdstencil"]:
        row["fdstencil_error"] = why
    if ref is None or ours is None:
        return row
    samples, layout = ref
    row["format"], row["little_endian"] = layout["format"], layout["little"]
    if layout["format"] not in SEGYIO_FORMATS:
        samples = standard_samples(path, layout)
        row["reference"] = "standard"
    else:
        row["reference"] = "segyio"
    row["equal"] = samples.shape == ours.shape and np.array_equal(
        samples.view(np.uint32), ours.astype(np.float32).view(np.uint32))
    # segyio's headers are its layout's; where its layout is not the standard's, not compared.
    if row["reference"] == "segyio":
        row["headers_equal"] = headers_agree(tool, path, layout["headers"])
    if not row["equal"]:
        row["shapes"] = [list(samples.shape), list(ours.shape)]
    return row


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--segyio-one":
        return segyio_one(sys.argv[2], sys.argv[3])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fdstencil")
    ap.add_argument("dir")
    ap.add_argument("--json")
    a = ap.parse_args()
    if segyio is None:
        print("segyio (python3-segyio) is not installed: nothing to compare against")
        return 77
    files = sorted(os.path.join(d, n) for d, _, ns in os.walk(a.dir) for n in ns
                   if n.lower().endswith((".sgy", ".segy")))
    with tempfile.TemporaryDirectory() as tmp:
        rows = [compare(a.fdstencil, p, tmp) for p in files]
    for r in rows:
        r["file"] = os.path.relpath(r["file"], a.dir)
    both = [r for r in rows if r["segyio"] and r["fdstencil"]]
    summary = {
        "files": len(rows),
        "segyio_reads": sum(r["segyio"] for r in rows),
        "fdstencil_reads": sum(r["fdstencil"] for r in rows),
        "both_equal": sum(r.get("equal", False) for r in both),
        "both_different": [r["file"] for r in both if not r["equal"]],
        "headers_compared": sum("headers_equal" in r for r in both),
        "headers_equal": sum(r.get("headers_equal", False) for r in both),
        "headers_different": [r["file"] for r in both if r.get("headers_equal") is False],
        "segyio_only": [r["file"] for r in rows if r["segyio"] and not r["fdstencil"]],
        "fdstencil_only": [r["file"] for r in rows if r["fdstencil"] and not r["segyio"]],
        "segyio_version": getattr(segyio, "__version__", "?"),
    }
    print(json.dumps(summary, indent=2))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"summary": summary, "files": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
