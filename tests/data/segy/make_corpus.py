#!/usr/bin/env python3
"""Writes tests/data/segy/: small SEG-Y files built byte by byte here, one per case the reader
must handle as the field writes it (issue 34), each with the samples it holds in
<name>.expected.npy (traces, samples) float32, and cases.json saying what each file is.

Usage: python3 tests/data/segy/make_corpus.py [DIR]   (default: this script's folder)

The files are committed; this script says how they were made. Values are small integers (and
IBM's -118.625 and 1.0), so every format holds them exactly.
"""
import json
import os
import struct
import sys

import numpy as np

NS, TRACES = 4, 3
# (code, numpy type or None for IBM / 24-bit, segyio 1.8 decodes it)
FORMATS = {1: (None, True), 2: ("i4", True), 3: ("i2", True), 5: ("f4", True), 6: ("f8", False),
           7: (None, False), 8: ("i1", True), 9: ("i8", False), 10: ("u4", False), 11: ("u2", False),
           12: ("u8", False), 15: (None, False), 16: ("u1", False)}
IBM = {-118.625: 0xC276A000, 1.0: 0x41100000, 0.0: 0, 100.0: 0x42640000, 2.0: 0x41200000,
       3.0: 0x41300000, 4.0: 0x41400000, 5.0: 0x41500000}


def values(fmt):
    """(TRACES, NS) values every format holds: unsigned formats non-negative."""
    if fmt == 1:
        base = [[-118.625, 1.0, 0.0, 100.0], [2.0, 3.0, 4.0, 5.0], [1.0, 0.0, -118.625, 2.0]]
    elif fmt in (10, 11, 12, 15, 16):
        base = [[0, 1, 17, 100], [2, 3, 4, 5], [127, 9, 8, 7]]
    else:
        base = [[-100, 0, 17, 100], [2, -3, 4, 5], [127, -128, 8, -7]]
    return np.array(base, dtype=np.float32)


def sample_bytes(fmt, v, little):
    end = "<" if little else ">"
    if fmt == 1:
        return b"".join(struct.pack(end + "I", IBM[float(x)]) for x in v)
    if fmt in (7, 15):
        out = b""
        for x in v:
            b = int(x).to_bytes(3, "big", signed=fmt == 7)
            out += b[::-1] if little else b
        return out
    dt = np.dtype(FORMATS[fmt][0]).newbyteorder(end)
    return np.asarray(v, dtype=dt).tobytes()


def put(buf, pos, size, value, little, signed=True):
    """A field at its 1-based position (within buf's own numbering)."""
    buf[pos - 1:pos - 1 + size] = int(value).to_bytes(size, "little" if little else "big", signed=signed)


def segy_file(fmt=5, little=False, constant=True, revision=1, bin_ns=NS, trace_ns=NS, bin_dt=2000,
              trace_dt=2000, extended=(), ext_field=None, extra_headers=0, traces=None, data=None):
    text = bytearray(b"\x40" * 3200)  # EBCDIC spaces
    binh = bytearray(400)
    put(binh, 17, 2, bin_dt, little, signed=False)
    put(binh, 21, 2, bin_ns, little, signed=False)
    put(binh, 25, 2, fmt, little)
    if constant:
        put(binh, 97, 4, 0x01020304, little)
    put(binh, 301, 1, revision, little, signed=False)
    put(binh, 305, 2, len(extended) if ext_field is None else ext_field, little)
    put(binh, 307, 2, extra_headers, little)
    out = bytes(text) + bytes(binh)
    for e in extended:
        out += e.ljust(3200, b" ")
    data = values(fmt) if data is None else data
    traces = traces or [{} for _ in range(len(data))]
    for t, fields in enumerate(traces):
        h = bytearray(240 * (1 + extra_headers))
        put(h, 115, 2, trace_ns, little, signed=False)
        put(h, 117, 2, trace_dt, little, signed=False)
        for pos, (size, value) in fields.items():
            put(h, pos, size, value, little)
        out += bytes(h) + sample_bytes(fmt, data[t], little)
    return out, data


def gather_traces():
    """A shot gather: field record 7, source at x = 500 m, receivers at 100, 350, 600 m (cm,
    scalar -100), delay 40 ms x 10^-1."""
    return [{9: (4, 7), 71: (2, -100), 73: (4, 50000), 81: (4, 10000 + 25000 * k), 37: (4, 100 + 250 * k - 500),
             109: (2, 40), 215: (2, -10)} for k in range(TRACES)]


def prestack_traces():
    """Inline 1, crossline 1 at offsets 100, 200, 300: an offset gather of a pre-stack volume."""
    return [{189: (4, 1), 193: (4, 1), 37: (4, 100 * (k + 1))} for k in range(TRACES)]


def model_traces():
    """A 2D line: inline 1, crosslines 1..3, CDP x 0, 10, 20 m."""
    return [{189: (4, 1), 193: (4, k + 1), 181: (4, 10 * k)} for k in range(TRACES)]


def cases():
    for little in (False, True):
        order = "lsb" if little else "msb"
        for fmt in FORMATS:
            yield f"format{fmt}-{order}", dict(fmt=fmt, little=little), "post-stack"
        yield f"no-constant-{order}", dict(fmt=2, little=little, constant=False), "post-stack"
        yield f"shot-gather-{order}", dict(little=little, traces=gather_traces()), "pre-stack"
        yield f"prestack-{order}", dict(little=little, traces=prestack_traces()), "pre-stack"
        yield f"model-2d-{order}", dict(little=little, bin_dt=10000, trace_dt=10000, traces=model_traces()), \
            "post-stack"
    yield "ns-trace-disagrees", dict(trace_ns=462), "post-stack"
    yield "ns-binary-wrong", dict(bin_ns=7), "post-stack"
    yield "dt-disagrees", dict(trace_dt=4000), "post-stack"
    yield "ext-text-2", dict(extended=(b"((SEG: Anything))", b"more")), "post-stack"
    yield "ext-text-variable", dict(revision=2, ext_field=-1,
                                    extended=(b"first", b"second", b"((  seg: endTEXt  ))")), "post-stack"
    yield "ext-text-variable-ebcdic", dict(revision=2, ext_field=-1, extended=(
        bytes([0x4D, 0x4D, 0xE2, 0xC5, 0xC7, 0x7A, 0x40, 0xC5, 0x95, 0x84, 0xE3, 0x85, 0xA7, 0xA3, 0x5D, 0x5D]),)), \
        "post-stack"
    yield "extra-trace-header", dict(revision=2, extra_headers=1), "post-stack"


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    index = {}
    for name, spec, kind in cases():
        data, expected = segy_file(**spec)
        with open(os.path.join(folder, name + ".sgy"), "wb") as f:
            f.write(data)
        np.save(os.path.join(folder, name + ".expected.npy"), expected)
        index[name] = {"kind": kind, "format": spec.get("fmt", 5), "little_endian": spec.get("little", False),
                       "segyio_decodes": FORMATS[spec.get("fmt", 5)][1]}
    with open(os.path.join(folder, "cases.json"), "w") as f:
        json.dump(index, f, indent=1, sort_keys=True)
    print(f"{len(index)} files in {folder}")


if __name__ == "__main__":
    main()
