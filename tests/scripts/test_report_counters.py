"""bench/report.py counters on hand-made result files: the derived figures are printed from the
record, --best keeps the fastest record per cell, a failed profile shows its reason, and no
counters at all is an error (exit 1 with a message), never an empty table."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "report.py")


def record(variant, pct, fetch_eff, counters_status="ok"):
    c = {"status": counters_status}
    if counters_status == "ok":
        c.update({"achieved_gbps": 2900.0, "dram_read_per_cube": 1.063, "fetch_efficiency": fetch_eff,
                  "dram_write_per_cube": 0.995, "write_efficiency": 1.005, "read_write_ratio": 1.07,
                  "l2_read_per_cube": 1.06, "l2_write_per_cube": 1.0, "l1_read_per_cube": 3.12,
                  "l2_hit_rate_pct": 51.8})
    else:
        c["reason"] = "Nsight Compute (ncu) not found"
    return {"op": "d2x", "variant": variant, "dtype": "float", "radius": 4, "nx": 512, "ny": 512, "nz": 512,
            "params": {"block": "64x4x1"}, "status": "ok", "median_ms": 0.37, "pct_of_copy": pct,
            "effective_gbps": 2940.0, "counters": c}


def write(directory, records):
    path = os.path.join(directory, "r.json")
    with open(path, "w") as f:
        json.dump({"device": {"name": "test GPU"}, "copy_gbps": 3000.0, "records": records}, f)
    return path


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, "counters", *args], capture_output=True, text=True)


class CountersTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def rows(self, out):
        return [l for l in out.splitlines() if l.startswith("| d2x")]

    def test_rows_and_best(self):
        path = write(self.dir.name, [record("vec2", 90.0, 0.90), record("vec4", 97.6, 0.956)])
        r = run(path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(self.rows(r.stdout)), 2)
        header = next(l for l in r.stdout.splitlines() if l.startswith("| op |"))
        for row in self.rows(r.stdout):
            self.assertEqual(row.count("|"), header.count("|"))
        r = run(path, "--best")
        rows = self.rows(r.stdout)
        self.assertEqual(len(rows), 1)
        self.assertIn("| vec4 |", rows[0])
        self.assertIn("| 95.6 |", rows[0])  # fetch efficiency as a percentage
        self.assertIn("| 2900 |", rows[0])  # achieved GB/s

    def test_failed_profile_shows_reason(self):
        r = run(write(self.dir.name, [record("vec4", 97.6, None, "unavailable")]))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("unavailable: Nsight Compute (ncu) not found", r.stdout)
        header = next(l for l in r.stdout.splitlines() if l.startswith("| op |"))
        self.assertEqual(self.rows(r.stdout)[0].count("|"), header.count("|"))  # same columns

    def test_no_counters_is_an_error(self):
        rec = record("vec4", 97.6, 0.95)
        del rec["counters"]
        r = run(write(self.dir.name, [rec]))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no record with counters", r.stderr)


if __name__ == "__main__":
    unittest.main()
