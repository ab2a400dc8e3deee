"""bench/report.py samesize on hand-made result files: each record is printed against the reference
copy and against the copy of its own bytes, as recorded (never recomputed); records without a
same-size copy are left out, and a file with none is an error (exit 1 with a message)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "report.py")


def record(nx, pct, same=None):
    r = {"op": "laplacian7", "variant": "k9", "dtype": "float", "radius": 1, "nx": nx, "ny": 256, "nz": 256,
         "params": {"nw": 4}, "status": "ok", "median_ms": 0.05, "pct_of_copy": pct, "effective_gbps": 30.0 * pct}
    if same is not None:
        r.update({"copy_same_size_bytes": nx * 256 * 256 * 4, "copy_same_size_gbps": same,
                  "pct_of_same_size_copy": 100.0 * 30.0 * pct / same})
    return r


def run(directory, records, *args):
    path = os.path.join(directory, "r.json")
    with open(path, "w") as f:
        json.dump({"device": {"name": "test GPU"}, "copy_gbps": 3000.0, "records": records}, f)
    return subprocess.run([sys.executable, SCRIPT, "samesize", path, *args], capture_output=True, text=True)


class SameSizeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_rows(self):
        r = run(self.dir.name, [record(256, 88.0, 2700.0), record(512, 93.0), record(384, 90.0, 2850.0)])
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [l for l in r.stdout.splitlines() if l.startswith("| laplacian7")]
        self.assertEqual(len(rows), 2)  # the 512 record has no same-size copy
        self.assertIn("| 256x256x256 |", rows[0])
        self.assertIn("| 88.0 | 2700 | 97.8 |", rows[0])  # 2640 GB/s against 2700
        header = next(l for l in r.stdout.splitlines() if l.startswith("| op |"))
        for row in rows:
            self.assertEqual(row.count("|"), header.count("|"))

    def test_none_is_an_error(self):
        r = run(self.dir.name, [record(256, 88.0)])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--same-size-copy", r.stderr)


if __name__ == "__main__":
    unittest.main()
