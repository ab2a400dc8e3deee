"""`fdstencil wave` under mpirun (issue 14), as a user launches it: a shot split across 2 ranks
against the same shot run by one process.

- The final field (final.npy) is the same to the bit, in 3D (R = 4, CPML 10) and in 2D under a
  free surface (R = 2), and the record (shot.npy) within 1e-6 of its peak (a receiver whose taps
  straddle two slabs sums them in another order): only rank 0 writes, and summary.json names the
  ranks. With a GPU on every rank the split run is on the GPUs over NCCL and the one-rank run on a
  GPU: there the record agrees within 5e-6 of its peak (the GPU sums a receiver's taps in no fixed
  order) and the field to the bit.
- Snapshots are the one-process run's, to the bit. A split run stopped by SIGTERM (to mpirun, which
  passes it on) leaves its checkpoint and nothing else; that checkpoint resumes under mpirun and in
  one process, and both end with the uninterrupted one-process run's field to the bit.
- Each comparison names its backend (the cpu always, the GPUs where each rank has one); --backend
  auto takes the GPUs only with one per rank, else the cpu, and says so where GPUs were found.
- A survey's shots dealt among 2 ranks as they ask: each shot the one-process survey's to the bit,
  run once, the manifest naming each shot's rank, re-runs skipping every shot.
- Refusals exit 2 on every rank and leave no output directory: a bad survey shot, a directory rank 0 cannot
  make (the other rank then refuses with rank 0's reason), a slab thinner than the radius, a
  --layer-plane-cost below 1, --resume without a checkpoint.

Arguments: FDSTENCIL MPIEXEC [MPIEXEC FLAGS...] [-- unittest arguments]. Exit 77 (skipped) without
NumPy.
"""
import filecmp
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
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


def command(args, ranks=None):
    return ([*MPIEXEC[:1], "-n", str(ranks), *MPIEXEC[1:]] if ranks else []) + [FD, "wave", *args]


def run(args, ranks=None, cwd=None):
    return subprocess.run(command(args, ranks), capture_output=True, text=True, cwd=cwd, timeout=240)


def expect_same_outputs(test, one, two, backend):
    """Run directory `two` against `one`: the final field to the bit (and not all zeros), the record
    within 1e-6 of its peak on the cpu (a receiver whose taps straddle two slabs sums them in
    another order) and within 5e-6 on GPUs (a receiver's taps summed in no fixed order)."""
    f1, f2 = np.load(os.path.join(one, "final.npy")), np.load(os.path.join(two, "final.npy"))
    test.assertGreater(np.abs(f1).max(), 0)
    test.assertEqual(int((f1 != f2).sum()), 0, "points of the final field that differ")
    r1, r2 = np.load(os.path.join(one, "shot.npy")), np.load(os.path.join(two, "shot.npy"))
    tol = (1e-6 if backend == "cpu" else 5e-6) * np.abs(r1).max()
    test.assertGreater(np.abs(r1).max(), 0)
    test.assertLessEqual(float(np.abs(r1 - r2).max()), tol)


CUBE = ["--constant", "2000", "--shape", "40,30,26", "--spacing", "10", "--radius", "4", "--cpml", "10",
        "--steps", "120", "--source", "150,140,130", "--ricker", "15",
        "--receiver-line", "30,140,130:360,140,130:12", "--quiet"]
PLANE = ["--layered", "0:1800,200:2400", "--shape", "50,60", "--spacing", "10", "--radius", "2", "--cpml", "8",
         "--free-surface", "--steps", "150", "--source", "120,300", "--ricker", "12",
         "--receiver-line", "5,100:480,100:16", "--quiet"]


def gpus():
    """The GPUs `fdstencil info` sees (0 in a build without CUDA)."""
    info = subprocess.run([FD, "info", "--json"], capture_output=True, text=True, timeout=120)
    return len([g for g in json.loads(info.stdout).get("gpus", []) if g.get("kind") == "gpu"])


class SplitRunsMatchOneRank(unittest.TestCase):
    """Each case names its backend: the cpu over MPI always, the GPUs over NCCL where there is one
    per rank (else skipped), each against one process on the same backend."""

    def same_shot(self, args, backend, snapshots=()):
        if backend == "cuda" and gpus() < 2:
            self.skipTest("a split run on the GPUs needs one GPU per rank: fewer than 2 GPUs here")
        args = [*args, "--backend", backend]
        with tempfile.TemporaryDirectory() as tmp:
            one, two = os.path.join(tmp, "one"), os.path.join(tmp, "two")
            a = run([*args, "--output", one])
            self.assertEqual(a.returncode, 0, a.stderr)
            b = run([*args, "--output", two], ranks=2)
            self.assertEqual(b.returncode, 0, b.stdout + b.stderr)
            summary = load_json(os.path.join(two, "summary.json"))
            self.assertEqual(summary["ranks"]["count"], 2)
            self.assertEqual(summary["backend"], backend)
            self.assertEqual(load_json(os.path.join(one, "summary.json"))["backend"], backend)
            expect_same_outputs(self, one, two, backend)
            self.assertEqual(sorted(os.listdir(one)), sorted(os.listdir(two)))
            # Written by every rank, its own planes: the files one process writes, to the byte.
            for name in ("final.npy", *snapshots):
                self.assertTrue(filecmp.cmp(os.path.join(one, name), os.path.join(two, name), shallow=False), name)
            for name in snapshots:
                s1, s2 = np.load(os.path.join(one, name)), np.load(os.path.join(two, name))
                self.assertEqual(s1.shape, s2.shape, name)
                self.assertEqual(int((s1 != s2).sum()), 0, "points of " + name + " that differ")
            return summary

    def test_3d_cpu(self):
        self.same_shot(CUBE, "cpu")

    def test_3d_cuda(self):
        s = self.same_shot(CUBE, "cuda")
        self.assertGreater(s["ranks"]["exchange_ms"], 0)

    def test_2d_free_surface_cpu(self):
        self.same_shot(PLANE, "cpu")

    def test_2d_free_surface_cuda(self):
        self.same_shot(PLANE, "cuda")

    def test_snapshots_cpu(self):
        self.same_shot([*CUBE, "--snapshot-steps", "0,60,120"], "cpu",
                       ["snapshot_000000.npy", "snapshot_000060.npy", "snapshot_000120.npy"])
        self.same_shot([*PLANE, "--snapshot-every", "50"], "cpu", ["snapshot_000050.npy", "snapshot_000150.npy"])

    def test_sliced_snapshots_cpu(self):
        # Each rank cuts its planes; rank 0 gathers the cuts, never the field: the one-process files.
        for cut in ("z=25", "z=3", "y=15", "x=3"):
            with self.subTest(cut=cut):
                self.same_shot([*CUBE, "--snapshot-steps", "60,120", "--snapshot-slice", cut], "cpu",
                               ["snapshot_000060.npy", "snapshot_000120.npy"])
        self.same_shot([*PLANE, "--snapshot-every", "50", "--snapshot-slice", "x=10"], "cpu",
                       ["snapshot_000050.npy", "snapshot_000150.npy"])

    def test_npy_model_cpu(self):
        # Each rank reads only the model planes its slab needs: a model that varies along z and x.
        with tempfile.TemporaryDirectory() as tmp:
            v = np.full((40, 30, 26), 2000, np.float32)
            v[20:] = 2400
            v[:, :, 13:] += 100
            path = os.path.join(tmp, "v.npy")
            np.save(path, v)
            self.same_shot(["--model", path, *CUBE[4:]], "cpu")

    def test_auto_takes_the_gpus_only_with_one_per_rank(self):
        # 2 ranks on this one node: the GPUs with 2 or more, else the cpu, said where some GPU was
        # found (a one-GPU machine), silent where none was.
        n = gpus()
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "auto")
            r = run([*PLANE, "--output", out], ranks=2)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(load_json(os.path.join(out, "summary.json"))["backend"], "cuda" if n >= 2 else "cpu")
            said = "every rank runs on the cpu" in r.stderr
            self.assertEqual(said, n == 1, r.stderr)


# Long enough that SIGTERM arrives mid-run: OpenMPI 4.1's mpirun took ~2 s to pass it on to the
# ranks (measured here: stopped at step ~9500 of a run of ~50 us steps), and the whole run takes
# ~6 s alone on 2 cores. On the cpu (over MPI) even where GPUs are: on two GPUs the run would end
# before mpirun has passed the signal on (the GPU split state is tested by
# tests/mpi/test_wave_slabs_gpu.cpp and bench/mgpu.sh's state stage). A checkpoint every 5000
# steps: the first lands well before the signal, and writing more often only adds I/O.
LONG = ["--layered", "0:1800,300:2400", "--shape", "60,80", "--spacing", "10", "--radius", "4", "--cpml", "10",
        "--free-surface", "--steps", "120000", "--source", "200,400", "--ricker", "12",
        "--receiver-line", "5,100:5,780:16", "--backend", "cpu", "--quiet"]


class SplitRunsStopAndResume(unittest.TestCase):
    def test_interrupted_split_run_resumes_on_any_rank_count(self):
        with tempfile.TemporaryDirectory() as tmp:
            ref, cut = os.path.join(tmp, "ref"), os.path.join(tmp, "cut")
            a = run([*LONG, "--output", ref])
            self.assertEqual(a.returncode, 0, a.stderr)
            args = [*LONG, "--checkpoint-every", "5000", "--output", cut]
            p = subprocess.Popen(command(args, 2), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            ckpt = os.path.join(cut, "checkpoint.ckpt")
            deadline = time.time() + 120
            while not os.path.exists(ckpt) and p.poll() is None and time.time() < deadline:
                time.sleep(0.02)
            self.assertIsNone(p.poll(), "the run ended before its first checkpoint")
            seen = os.stat(ckpt)
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=120)
            now = os.stat(ckpt)
            # The step the run stopped after, where rank 0's last words reached mpirun.
            said = re.search(r"interrupted by [^\n]*? after step (\d+)", err)
            stopped_after = int(said.group(1)) if said else None
            self.assertNotEqual(p.returncode, 0, err)
            # (OpenMPI's mpirun may end before the ranks' last words reach it)
            if err.strip():
                self.assertIn("Resume with", err)
            self.assertEqual(os.listdir(cut), ["checkpoint.ckpt"], "an interrupted run writes nothing else")
            alone = os.path.join(tmp, "alone")
            shutil.copytree(cut, alone)
            for out_dir, ranks in ((cut, 2), (alone, None)):
                b = run([*LONG, "--checkpoint-every", "5000", "--output", out_dir, "--resume"], ranks=ranks)
                self.assertEqual(b.returncode, 0, b.stdout + b.stderr)
                summary = load_json(os.path.join(out_dir, "summary.json"))
                # The checkpoint the stop wrote, not a periodic one left by ranks killed before
                # they could write theirs. A stop often lands on a multiple of 5000 (the ranks
                # take the signal some 20000 steps after it is sent, and the poll after a
                # periodic checkpoint's gather is likelier than any other to be the first to see
                # it: 2 stops of 12 on this machine), so the step the run reported is the test.
                step = summary["checkpoint"]["resumed_from_step"]
                self.assertGreater(step, 0)
                if stopped_after is not None:
                    self.assertEqual(step, stopped_after, "resumed from another checkpoint than the stop's")
                else:  # no last words: at least the file must have been replaced after the signal
                    self.assertNotEqual((now.st_ino, now.st_mtime_ns), (seen.st_ino, seen.st_mtime_ns))
                self.assertFalse(os.path.exists(os.path.join(out_dir, "checkpoint.ckpt")))
                expect_same_outputs(self, ref, out_dir, summary["backend"])


# A survey's shots across ranks (issue 31): the model and receivers every shot shares, and four
# sources along the line.
SURVEY_MODEL = ["--layered", "0:1800,200:2600", "--shape", "61,81", "--spacing", "10",
                "--receiver-line", "20,50:20,750:8", "--ricker", "15", "--steps", "250", "--quiet"]
SOURCES = [[300, 150], [300, 400], [300, 650], [200, 300]]


def write_survey(tmp, sources):
    path = os.path.join(tmp, "survey.json")
    with open(path, "w") as f:
        json.dump({"shots": [{"id": i + 1, "source": s} for i, s in enumerate(sources)]}, f)
    return path


class SurveysAcrossRanks(unittest.TestCase):
    """Each rank runs its share of the shots, whole: every shot's record and final field are the
    one-process survey's to the bit (on one backend), the manifest names the rank of each shot,
    and a re-run, under mpirun or in one process, skips every finished shot."""

    def across(self, backend, ranks=2, batch=1):
        if backend == "cuda" and gpus() < ranks:
            self.skipTest(f"a survey across {ranks} ranks on the GPUs here takes a GPU each: fewer here")
        with tempfile.TemporaryDirectory() as tmp:
            args = [*SURVEY_MODEL, "--backend", backend, "--survey", write_survey(tmp, SOURCES)]
            args += ["--batch", str(batch)] if batch > 1 else []
            one, many = os.path.join(tmp, "one"), os.path.join(tmp, "many")
            a = run([*args, "--output", one])
            self.assertEqual(a.returncode, 0, a.stderr)
            b = run([*args, "--output", many], ranks=ranks)
            self.assertEqual(b.returncode, 0, b.stdout + b.stderr)
            self.assertEqual(sorted(os.listdir(many)), sorted(os.listdir(one)))
            m = load_json(os.path.join(many, "survey.json"))
            self.assertEqual(m["ranks"], ranks)
            self.assertEqual(m["shots_run"], len(SOURCES))
            # Dealt as the ranks ask: each shot once, each on one of the ranks.
            self.assertEqual(sorted(s["id"] for s in m["shots"]), list(range(1, len(SOURCES) + 1)))
            self.assertTrue(all(0 <= s["rank"] < ranks for s in m["shots"]), m["shots"])
            for i in range(1, len(SOURCES) + 1):
                shot = f"shot_{i:06d}"
                expect_same_outputs(self, os.path.join(one, shot), os.path.join(many, shot), backend)
            for r in (ranks, None):
                again = run([*args, "--output", many], ranks=r)
                self.assertEqual(again.returncode, 0, again.stderr)
                m = load_json(os.path.join(many, "survey.json"))
                self.assertEqual((m["shots_run"], m["shots_skipped"]), (0, len(SOURCES)))

    def test_on_the_cpu(self):
        self.across("cpu")

    def test_on_the_gpus(self):
        self.across("cuda")

    def test_on_the_gpus_two_at_a_time(self):
        # A rank's batch is dealt ahead (every P-th shot): its threads may not call MPI.
        self.across("cuda", batch=2)


class SplitRunRefusals(unittest.TestCase):
    def refused(self, extra, words, args=CUBE, ranks=2):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            r = run([*args, "--output", out, *extra], ranks=ranks)
            self.assertNotEqual(r.returncode, 0, r.stderr)
            for w in words:
                self.assertIn(w, r.stderr)
            self.assertFalse(os.path.exists(out), "a refused run left its output directory")

    def test_resume_without_a_checkpoint(self):
        self.refused(["--resume"], ["no checkpoint"])

    def test_resume_from_a_damaged_checkpoint(self):
        # Every rank reads the checkpoint's header before the ranks go on together: every rank
        # stops with an error (once, rank 0 failed alone after the vote and the others waited).
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            os.makedirs(out)
            with open(os.path.join(out, "checkpoint.ckpt"), "wb") as f:
                f.write(b"not a checkpoint")
            r = run([*CUBE, "--output", out, "--resume"], ranks=2)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("not an fdstencil checkpoint", r.stderr)
            self.assertEqual(os.listdir(out), ["checkpoint.ckpt"], "a refused run wrote something")

    def test_a_folder_of_another_run(self):
        # An output folder belongs to one run (issue 33): rank 0 finds the earlier run's files,
        # every rank stops with its message, and the earlier files stay as they were.
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            a = run([*PLANE, "--backend", "cpu", "--output", out])
            self.assertEqual(a.returncode, 0, a.stderr)
            before = sorted(os.listdir(out))
            r = run([*PLANE, "--backend", "cpu", "--output", out], ranks=2)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("holds the outputs of an earlier run", r.stderr)
            self.assertEqual(sorted(os.listdir(out)), before)

    def test_a_bad_survey_shot(self):
        # Shot 3's source lies outside the model: every rank checks every shot before any runs.
        with tempfile.TemporaryDirectory() as tmp:
            survey = write_survey(tmp, [[300, 150], [300, 400], [300, 9000]])
            self.refused([*SURVEY_MODEL, "--backend", "cpu", "--survey", survey], ["survey shot 3"], args=[])

    def test_a_checkpoint_of_another_model(self):
        # The stopped run of LONG leaves its checkpoint; resuming it under 2 ranks with another
        # velocity is refused on every rank (rank 0 finds the fingerprint differs), exit 2, and
        # the checkpoint is left as it was.
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            p = subprocess.Popen(command([*LONG, "--checkpoint-every", "200", "--output", out]),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            ckpt = os.path.join(out, "checkpoint.ckpt")
            deadline = time.time() + 120
            while not os.path.exists(ckpt) and p.poll() is None and time.time() < deadline:
                time.sleep(0.02)
            p.send_signal(signal.SIGINT)
            p.communicate(timeout=120)
            self.assertTrue(os.path.exists(ckpt), "the stopped run left no checkpoint")
            before = os.stat(ckpt).st_mtime_ns
            other = [a if a != "0:1800,300:2400" else "0:1900,300:2400" for a in LONG]
            r = run([*other, "--checkpoint-every", "200", "--output", out, "--resume"], ranks=2)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("belongs to a different run", r.stderr)
            self.assertEqual(os.listdir(out), ["checkpoint.ckpt"])
            self.assertEqual(os.stat(ckpt).st_mtime_ns, before)

    def test_the_gpus_without_one_per_rank(self):
        # --backend cuda under 2 ranks where there are fewer than 2 GPUs (none in CI, one on a
        # one-GPU machine: two ranks would share it): refused on every rank, exit 2, nothing made.
        if gpus() >= 2:
            self.skipTest("this machine has a GPU for each of 2 ranks")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            r = run([*CUBE, "--output", out, "--backend", "cuda"], ranks=2)
            self.assertEqual(r.returncode, 2, r.stderr)
            # No GPU: the input check's refusal; one GPU: the NCCL transport's.
            self.assertTrue("--backend cuda: " in r.stderr or "one GPU per rank" in r.stderr, r.stderr)
            self.assertFalse(os.path.exists(out), "a refused run left its output directory")

    def test_unwritable_output_on_rank_0(self):
        r = run([*CUBE, "--output", "/proc/no/such/dir"], ranks=2)
        self.assertEqual(r.returncode, 2)
        # Rank 0 cannot create the directory and the other rank refuses with rank 0's reason. mpirun
        # ends the ranks still running once one exits non-zero, so either message may be the one
        # that got out (a clean-clone CI run saw rank 0's alone): the reason with its path must be
        # there, and where the other rank's relay got out, it must name rank 0.
        self.assertIn("--output /proc/no/such/dir: cannot create the directory", r.stderr)
        if "another rank refused the run" in r.stderr:
            self.assertIn("another rank refused the run (rank 0): --output /proc/no/such/dir: cannot create the directory",
                          r.stderr)

    def test_slab_thinner_than_the_radius(self):
        thin = ["--constant", "2000", "--shape", "6,20,20", "--spacing", "10", "--radius", "4", "--cpml", "0",
                "--steps", "10", "--source", "30,100,100", "--quiet"]
        self.refused([], ["thinner than the radius"], args=thin)

    def test_layer_plane_cost_below_one(self):
        self.refused(["--layer-plane-cost", "0.5", "--backend", "cpu"], ["--layer-plane-cost 0.5", "at least 1"])


if __name__ == "__main__":
    if np is None:
        print("skipped: no NumPy")
        sys.exit(77)
    # FDSTENCIL MPIEXEC [MPIEXEC FLAGS...] [-- unittest arguments, e.g. -k cuda]
    cut = sys.argv.index("--") if "--" in sys.argv else len(sys.argv)
    FD, MPIEXEC = sys.argv[1], sys.argv[2:cut]
    sys.argv = sys.argv[:1] + sys.argv[cut + 1:]
    unittest.main(verbosity=2)
