"""`fdstencil wave` under mpirun (issue 14), as a user launches it: a shot split across 2 ranks
against the same shot run by one process.

- The record (shot.npy) and the final field (final.npy) are the same to the bit, in 3D (R = 4,
  CPML 10) and in 2D under a free surface (R = 2): only rank 0 writes, and summary.json names the
  ranks. With a GPU on every rank the split run is on the GPUs over NCCL and the one-rank run on a
  GPU: there the record agrees within 5e-6 of its peak (the GPU sums a receiver's taps in no fixed
  order) and the field to the bit.
- Refusals exit 2 on every rank and leave no output directory: snapshots, checkpoints, a survey, a
  directory rank 0 cannot make (the other rank then reports that another rank refused), a slab
  thinner than the radius.

Arguments: FDSTENCIL MPIEXEC [MPIEXEC FLAGS...]. Exit 77 (skipped) without NumPy.
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

FD = None
MPIEXEC = []


def load_json(path):
    with open(path) as f:
        return json.load(f)


def run(args, ranks=None, cwd=None):
    cmd = ([*MPIEXEC[:1], "-n", str(ranks), *MPIEXEC[1:]] if ranks else []) + [FD, "wave", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=240)


CUBE = ["--constant", "2000", "--shape", "40,30,26", "--spacing", "10", "--radius", "4", "--cpml", "10",
        "--steps", "120", "--source", "150,140,130", "--ricker", "15",
        "--receiver-line", "30,140,130:360,140,130:12", "--quiet"]
PLANE = ["--layered", "0:1800,200:2400", "--shape", "50,60", "--spacing", "10", "--radius", "2", "--cpml", "8",
         "--free-surface", "--steps", "150", "--source", "120,300", "--ricker", "12",
         "--receiver-line", "5,100:480,100:16", "--quiet"]


class SplitRunsMatchOneRank(unittest.TestCase):
    def same_shot(self, args):
        with tempfile.TemporaryDirectory() as tmp:
            one, two = os.path.join(tmp, "one"), os.path.join(tmp, "two")
            a = run([*args, "--output", one])
            self.assertEqual(a.returncode, 0, a.stderr)
            b = run([*args, "--output", two], ranks=2)
            self.assertEqual(b.returncode, 0, b.stdout + b.stderr)
            summary = load_json(os.path.join(two, "summary.json"))
            self.assertEqual(summary["ranks"]["count"], 2)
            self.assertEqual(summary["backend"], load_json(os.path.join(one, "summary.json"))["backend"])
            f1, f2 = np.load(os.path.join(one, "final.npy")), np.load(os.path.join(two, "final.npy"))
            self.assertGreater(np.abs(f1).max(), 0)
            self.assertEqual(int((f1 != f2).sum()), 0, "points of the final field that differ")
            r1, r2 = np.load(os.path.join(one, "shot.npy")), np.load(os.path.join(two, "shot.npy"))
            tol = 0 if summary["backend"] == "cpu" else 5e-6 * np.abs(r1).max()
            self.assertLessEqual(float(np.abs(r1 - r2).max()), tol)
            self.assertEqual(sorted(os.listdir(one)), sorted(os.listdir(two)))
            return summary

    def test_3d(self):
        s = self.same_shot(CUBE)
        if s["backend"] == "cuda":
            self.assertGreater(s["ranks"]["exchange_ms"], 0)

    def test_2d_free_surface(self):
        self.same_shot(PLANE)


class SplitRunRefusals(unittest.TestCase):
    def refused(self, extra, words, args=CUBE, ranks=2):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            r = run([*args, "--output", out, *extra], ranks=ranks)
            self.assertNotEqual(r.returncode, 0, r.stderr)
            for w in words:
                self.assertIn(w, r.stderr)
            self.assertFalse(os.path.exists(out), "a refused run left its output directory")

    def test_snapshots(self):
        self.refused(["--snapshot-every", "10"], ["takes no snapshots"])

    def test_checkpoints(self):
        self.refused(["--checkpoint-every", "10"], ["neither checkpoints nor resumes"])

    def test_survey(self):
        self.refused(["--survey", "nothing.json"], ["runs one shot"])

    def test_unwritable_output_on_rank_0(self):
        r = run([*CUBE, "--output", "/proc/no/such/dir"], ranks=2)
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot create the directory", r.stderr)
        self.assertIn("another rank refused the run", r.stderr)

    def test_slab_thinner_than_the_radius(self):
        thin = ["--constant", "2000", "--shape", "6,20,20", "--spacing", "10", "--radius", "4", "--cpml", "0",
                "--steps", "10", "--source", "30,100,100", "--quiet"]
        self.refused([], ["thinner than the radius"], args=thin)


if __name__ == "__main__":
    if np is None:
        print("skipped: no NumPy")
        sys.exit(77)
    FD, MPIEXEC = sys.argv[1], sys.argv[2:]
    sys.argv = sys.argv[:1]
    unittest.main(verbosity=2)
