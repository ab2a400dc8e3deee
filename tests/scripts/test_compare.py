"""bench/compare.py on hand-made result files: it must call a change real only when the two runs'
timing ranges do not overlap, and fail with exit code 2 on unreadable input."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "compare.py")


def record(variant, median, lo, hi, pct):
    return {"op": "laplacian7", "variant": variant, "dtype": "double", "radius": 1, "nx": 512, "ny": 512,
            "nz": 512, "params": {"m": 8}, "status": "ok", "median_ms": median, "min_ms": lo, "max_ms": hi,
            "pct_of_copy": pct}


def write(directory, name, records):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        json.dump({"device": {"name": "test GPU"}, "copy_gbps": 4000.0, "records": records}, f)
    return path


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class CompareTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_verdicts(self):
        old = write(self.dir.name, "old.json", [record("k1", 1.00, 0.99, 1.01, 70.0),
                                                record("k5", 1.00, 0.99, 1.01, 70.0),
                                                record("k7", 1.00, 0.99, 1.01, 70.0)])
        new = write(self.dir.name, "new.json", [record("k1", 0.90, 0.89, 0.91, 77.8),   # faster
                                                record("k5", 1.005, 0.995, 1.02, 69.6),  # overlaps
                                                record("k7", 1.10, 1.09, 1.11, 63.6),    # slower
                                                record("k8", 0.80, 0.79, 0.81, 87.5)])   # new only
        r = run(old, new)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = {l.split()[1]: l for l in r.stdout.splitlines() if l.startswith("laplacian7")}
        self.assertTrue(lines["k1"].endswith("faster"))
        self.assertTrue(lines["k5"].endswith("within noise"))
        self.assertTrue(lines["k7"].endswith("slower"))
        self.assertNotIn("k8", lines)
        self.assertIn("3 cases in common: 1 faster, 1 slower, 1 within noise; 1 only in new", r.stdout)
        only = run(old, new, "--only-changed")
        self.assertNotIn("within noise\n", only.stdout.split("# 3 cases")[0])

    def test_bad_input_exits_two(self):
        good = write(self.dir.name, "good.json", [record("k1", 1.0, 0.9, 1.1, 70.0)])
        other = write(self.dir.name, "other.json", [record("k2", 1.0, 0.9, 1.1, 70.0)])
        broken = os.path.join(self.dir.name, "broken.json")
        with open(broken, "w") as f:
            f.write("{not json")
        for args in [(good, os.path.join(self.dir.name, "missing.json")), (good, broken), (good, other)]:
            r = run(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("compare.py: error", r.stderr)


if __name__ == "__main__":
    unittest.main()
