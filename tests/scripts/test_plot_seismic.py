"""bench/plot_seismic.py on the committed H100 results: each figure kind is drawn, and bad input
(unreadable file, a file with no records of the kind) exits 2 without leaving a figure behind.
Exit code 77 (CTest: skipped) where matplotlib is missing."""
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("matplotlib is not installed for", sys.executable, "- skipped")
    sys.exit(77)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "bench", "plot_seismic.py")
RESULTS = os.path.join(ROOT, "bench", "results", "nvidia-h100")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class PlotSeismicTest(unittest.TestCase):
    def test_every_figure_kind(self):
        with tempfile.TemporaryDirectory() as out:
            for kind, name in (("radius", "seis-r512.json"), ("nw", "seis-nw.json"), ("passes", "seis-r1024.json")):
                png = os.path.join(out, kind + ".png")
                r = run(kind, os.path.join(RESULTS, name), "--out", png)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertGreater(os.path.getsize(png), 10000, kind)

    def test_bad_input_exits_two_and_writes_nothing(self):
        with tempfile.TemporaryDirectory() as out:
            broken = os.path.join(out, "broken.json")
            with open(broken, "w") as f:
                f.write("{not json")
            no_nw = os.path.join(out, "no_nw.json")  # records, but none with an nw parameter
            with open(os.path.join(RESULTS, "seis-tune3-y.json")) as f:
                doc = json.load(f)
            with open(no_nw, "w") as f:
                json.dump(doc, f)
            for kind, bad in (("radius", broken), ("radius", os.path.join(out, "missing.json")), ("nw", no_nw)):
                r = run(kind, bad, "--out", os.path.join(out, "x.png"))
                self.assertEqual(r.returncode, 2, (kind, bad, r.stderr))
                self.assertNotIn("Traceback", r.stderr)
            self.assertEqual(glob.glob(os.path.join(out, "*.png")), [])


if __name__ == "__main__":
    unittest.main()
