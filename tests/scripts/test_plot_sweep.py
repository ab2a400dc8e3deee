"""bench/plot_sweep.py on the committed H100 size sweeps: the figure is drawn with both panels,
--widths filters, and bad input exits 2 without leaving a figure behind. Exit code 77 (CTest:
skipped) where matplotlib is missing."""
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
SCRIPT = os.path.join(ROOT, "bench", "plot_sweep.py")
CAMPAIGNS = os.path.join(ROOT, "bench", "results", "nvidia-h100", "campaigns")
FILES = [os.path.join(CAMPAIGNS, f) for f in ("wave-2d-sizes-layers.json", "wave-3d-sizes.json", "wave-3d-layers.json")]
sys.path.insert(0, os.path.join(ROOT, "bench"))
import plot_sweep  # noqa: E402


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class PlotSweepTest(unittest.TestCase):
    def test_the_committed_sweeps_are_drawn(self):
        with tempfile.TemporaryDirectory() as out:
            png = os.path.join(out, "sizes.png")
            r = run(*FILES, "--widths", "0,10", "--output", png)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertGreater(os.path.getsize(png), 20000)

    def test_points_carry_the_radius_the_width_and_the_dimension(self):
        points = plot_sweep.read_points(FILES, {0, 10})
        self.assertEqual({p["dim"] for p in points}, {2, 3})
        self.assertEqual({p["radius"] for p in points}, {2, 4, 8})
        self.assertEqual({p["width"] for p in points}, {0, 10})
        # wave-3d-layers also ran 216^3 with 20 points: --widths 0,10 leaves it out, no filter keeps it.
        self.assertIn(20, {p["width"] for p in plot_sweep.read_points(FILES, None)})
        # A record without a radius of its own takes its kernel's R= (wave-3d-small-l1: R = 4).
        l1 = plot_sweep.read_points([os.path.join(CAMPAIGNS, "wave-3d-small-l1.json")], None)
        self.assertEqual({p["radius"] for p in l1}, {4})
        big = [p for p in points if p["dim"] == 3 and p["points"] == 472 ** 3]
        self.assertEqual(len(big), 6)  # 3 radii, with and without layers

    def test_bad_input_exits_two_and_writes_nothing(self):
        with tempfile.TemporaryDirectory() as out:
            png = os.path.join(out, "x.png")
            broken = os.path.join(out, "broken.json")
            with open(broken, "w") as f:
                f.write("{not json")
            radiusless = os.path.join(out, "radiusless.json")
            with open(radiusless, "w") as f:
                json.dump({"records": [{"ok": True, "gpts": 1.0, "computational": [30, 30],
                                        "model": ["--shape", "10,10"], "kernel": "acoustic_step"}]}, f)
            shapeless = os.path.join(out, "shapeless.json")
            with open(shapeless, "w") as f:
                json.dump({"records": [{"ok": True, "gpts": 1.0, "computational": [10, 10]}]}, f)
            for args in ([broken], [os.path.join(out, "missing.json")], [shapeless], [radiusless],
                         [FILES[0], "--widths", "7"],
                         [FILES[0], "--output", os.path.join(out, "no", "such", "dir.png")]):
                cmd = [*args] if "--output" in args else [*args, "--output", png]
                r = run(*cmd)
                self.assertEqual(r.returncode, 2, (args, r.stderr))
                self.assertIn("error", r.stderr)
                self.assertFalse(os.path.exists(png), args)


if __name__ == "__main__":
    unittest.main()
