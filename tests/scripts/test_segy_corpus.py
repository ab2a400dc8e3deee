"""SEG-Y as the field writes it (issue 34): the committed corpus tests/data/segy/ (written byte by
byte by its make_corpus.py; no file from elsewhere) read by the built tool:

- every file's traces (`segy to-npy --traces`) equal the samples the file was made with, bit for
  bit: both byte orders, every rev 2 sample format, extended textual headers (a count, -1 with the
  EndText stanza in ASCII and EBCDIC), an additional trace header, headers that disagree;
- `segy info` tells a shot gather and a pre-stack volume from post-stack files;
- where Python's segyio (Debian python3-segyio) decodes the format and the layout, it reads the
  same samples;
- the corpus is what make_corpus.py writes.

Needs NumPy and $FDSTENCIL_CLI (CTest sets it); exits 77 (skipped) without them. segyio is
optional: without it its comparison reports skipped.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
except ImportError:
    np = None
try:
    import segyio
except ImportError:
    segyio = None

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "data", "segy")
CLI = os.environ.get("FDSTENCIL_CLI", "")
MISSING = None if np is not None else f"{sys.executable} cannot import numpy"
if MISSING is None and not (CLI and os.access(CLI, os.X_OK)):
    MISSING = "$FDSTENCIL_CLI does not name the built fdstencil (CTest sets it)"
# What segyio 1.8 cannot do, so its reading of these is not compared: a variable count of extended
# headers (it puts the first trace at 3600 - 3200 bytes), rev 2's additional trace headers, and a
# binary header's sample count the file's size does not fit.
SEGYIO_LIMITS = {"ext-text-variable", "ext-text-variable-ebcdic", "extra-trace-header", "ns-binary-wrong"}


def cases():
    with open(os.path.join(CORPUS, "cases.json")) as f:
        return json.load(f)


def traces_of(name, tmp):
    out = os.path.join(tmp, name + ".npy")
    r = subprocess.run([CLI, "segy", "to-npy", "--traces", os.path.join(CORPUS, name + ".sgy"), out],
                       capture_output=True, text=True)
    return (np.load(out) if r.returncode == 0 else None), r.stderr


def expected(name):
    return np.load(os.path.join(CORPUS, name + ".expected.npy"))


def same_bits(a, b):
    return a.shape == b.shape and np.array_equal(a.astype(np.float32).view(np.uint32), b.view(np.uint32))


class SegyCorpus(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fdstencil_segy_corpus_")

    def tearDown(self):
        for n in os.listdir(self.tmp):
            os.remove(os.path.join(self.tmp, n))
        os.rmdir(self.tmp)

    def test_every_file_reads_the_samples_it_was_made_with(self):
        for name in cases():
            got, err = traces_of(name, self.tmp)
            self.assertIsNotNone(got, f"{name}: {err}")
            self.assertTrue(same_bits(got, expected(name)), f"{name}: {got} against {expected(name)}")

    def test_info_tells_pre_stack_from_post_stack(self):
        for name, c in cases().items():
            r = subprocess.run([CLI, "segy", "info", "--json", os.path.join(CORPUS, name + ".sgy")],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, f"{name}: {r.stderr}")
            info = json.loads(r.stdout)
            self.assertEqual(info["kind"], c["kind"], name)
            self.assertEqual(info["byte_order"], "little-endian" if c["little_endian"] else "big-endian", name)
        gather = json.loads(subprocess.run([CLI, "segy", "info", "--json", os.path.join(CORPUS, "shot-gather-msb.sgy")],
                                           capture_output=True, text=True).stdout)
        self.assertEqual(gather["receiver_x"], [100.0, 600.0])
        self.assertEqual(gather["source_x"], [500.0, 500.0])
        self.assertEqual(gather["field_records"], 1)
        self.assertAlmostEqual(gather["delay_s"][0], 0.004)

    def test_trace_headers_give_each_traces_geometry(self):
        for order in ("msb", "lsb"):
            path = os.path.join(CORPUS, f"shot-gather-{order}.sgy")
            r = subprocess.run([CLI, "segy", "info", "--json", "--trace-headers", path], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = json.loads(r.stdout)["trace_headers"]
            self.assertEqual([t["group_x"] for t in rows], [100.0, 350.0, 600.0])
            self.assertEqual([t["offset"] for t in rows], [-400.0, -150.0, 100.0])
            self.assertEqual({t["field_record"] for t in rows}, {7})
        r = subprocess.run([CLI, "segy", "info", "--trace-headers", path], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--trace-headers lists every trace in JSON", r.stderr)

    def test_headers_that_disagree_are_warned_of(self):
        for name, words in {"ns-trace-disagrees": ["462", "115-116", "read 4"],
                            "ns-binary-wrong": ["binary header says 7", "read 4, trace 0's"],
                            "dt-disagrees": ["2000", "4000", "3217-3218", "117-118"]}.items():
            r = subprocess.run([CLI, "segy", "info", "--json", os.path.join(CORPUS, name + ".sgy")],
                               capture_output=True, text=True)
            warnings = " ".join(json.loads(r.stdout)["warnings"])
            for w in words:
                self.assertIn(w, warnings, name)

    @unittest.skipIf(segyio is None, "segyio (Debian python3-segyio) is not installed")
    def test_segyio_reads_the_same_samples_where_it_decodes_them(self):
        compared = 0
        for name, c in cases().items():
            if not c["segyio_decodes"] or name in SEGYIO_LIMITS:
                continue
            endian = "little" if c["little_endian"] else "big"
            with segyio.open(os.path.join(CORPUS, name + ".sgy"), ignore_geometry=True, endian=endian) as f:
                theirs = np.asarray(f.trace.raw[:], dtype=np.float32)
            got, err = traces_of(name, self.tmp)
            self.assertTrue(same_bits(got, theirs), name)
            compared += 1
        self.assertGreaterEqual(compared, 20)

    def test_the_corpus_is_what_make_corpus_writes(self):
        subprocess.run([sys.executable, os.path.join(CORPUS, "make_corpus.py"), self.tmp], check=True,
                       capture_output=True)
        for n in sorted(os.listdir(self.tmp)):
            if n.endswith(".npy"):  # by value: another NumPy may write another header
                self.assertTrue(same_bits(np.load(os.path.join(self.tmp, n)), np.load(os.path.join(CORPUS, n))), n)
                continue
            with open(os.path.join(self.tmp, n), "rb") as a, open(os.path.join(CORPUS, n), "rb") as b:
                self.assertEqual(a.read(), b.read(), n)


if __name__ == "__main__":
    if MISSING:
        print(f"skipped: {MISSING}")
        sys.exit(77)
    unittest.main()
