"""bench/plot.py on the committed H200 results: every figure kind is drawn, and bad input exits 2
without leaving a figure behind. Exit code 77 (CTest: skipped) where matplotlib is missing."""
import glob
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
SCRIPT = os.path.join(ROOT, "bench", "plot.py")
RESULTS = os.path.join(ROOT, "bench", "results", "nvidia-h200")


class PlotTest(unittest.TestCase):
    def test_every_figure_kind(self):
        files = [os.path.join(RESULTS, f) for f in
                 ("lap-sizes.json", "lap-quick.json", "lap-m.json", "lap-planes.json", "lap-k8.json", "lap-nzc.json")]
        with tempfile.TemporaryDirectory() as out:
            r = subprocess.run([sys.executable, SCRIPT, "--out", out, *files], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            made = sorted(os.path.basename(p) for p in glob.glob(os.path.join(out, "*.png")))
            self.assertEqual(made, ["laplacian_k8_nzc.png", "laplacian_k8_tuning.png", "laplacian_m.png",
                                    "laplacian_planes.png", "laplacian_sizes.png"])
            for name in made:
                self.assertGreater(os.path.getsize(os.path.join(out, name)), 10000, name)

    def test_bad_input_exits_two_and_writes_nothing(self):
        with tempfile.TemporaryDirectory() as out:
            broken = os.path.join(out, "broken.json")
            with open(broken, "w") as f:
                f.write("{not json")
            for bad in (broken, os.path.join(out, "missing.json")):
                r = subprocess.run([sys.executable, SCRIPT, "--out", out, os.path.join(RESULTS, "lap-m.json"), bad],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 2, bad)
                self.assertNotIn("Traceback", r.stderr)
            self.assertEqual(glob.glob(os.path.join(out, "*.png")), [])


if __name__ == "__main__":
    unittest.main()
