"""The benchmark campaigns (bench/campaigns/*.toml) as bench/run.py reads them: each declares its
question, result and command, no two write the same result, and each committed figure it checks
against resolves to one number. With the tool built (FDSTENCIL_CLI), a wave campaign's arguments
run on the cpu at a toy size and its figure resolves in the summary they write."""
import glob
import json
import os
import subprocess
import sys
import tempfile
import tomllib
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import defaults_table  # noqa: E402  bench/defaults_table.py
import results_index  # noqa: E402  bench/results_index.py
import run  # noqa: E402  bench/run.py

CAMPAIGNS = sorted(glob.glob(os.path.join(ROOT, "bench", "campaigns", "*.toml")))


def load(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def toy(args):
    """A wave campaign's arguments at 24^3 points, 5 steps, the source in the middle."""
    out, i = [], 0
    while i < len(args):
        if args[i] in ("--shape", "--source", "--steps", "--cpml"):
            out += [args[i], {"--shape": "24,24,24", "--source": "115,115,115", "--steps": "5", "--cpml": "4"}[args[i]]]
            i += 2
        else:
            out.append(args[i])
            i += 1
    return out


class Campaigns(unittest.TestCase):
    def test_there_are_campaigns(self):
        self.assertGreaterEqual(len(CAMPAIGNS), 4)

    def test_each_declares_what_the_runner_reads(self):
        results = []
        for path in CAMPAIGNS:
            c = load(path)
            with self.subTest(campaign=os.path.basename(path)):
                self.assertTrue(c["question"].endswith("?"), c["question"])
                self.assertIn(c["kind"], ("bench", "wave", "cpml", "gradient", "wave-sweep"))
                self.assertEqual("sweep" in c, c["kind"] == "wave-sweep")
                self.assertTrue(all(isinstance(a, str) for a in c["args"]))
                self.assertNotIn("--json", c["args"])  # the runner names the result
                results.append(c["result"])
        self.assertEqual(len(results), len(set(results)), results)

    def test_each_committed_figure_is_one_number(self):
        for path in CAMPAIGNS:
            rep = load(path).get("reproduces")
            if not rep:
                continue
            with self.subTest(campaign=os.path.basename(path)):
                with open(os.path.join(ROOT, "bench", "results", rep["file"])) as f:
                    value = run.figure(json.load(f), rep.get("record"), rep["at"])
                self.assertTrue(value == value)  # a number, not NaN
                self.assertGreater(rep["noise"], 0)
                self.assertTrue(rep["why"])

    def test_a_figure_that_matches_no_record_is_refused(self):
        with self.assertRaises(SystemExit):
            run.figure({"records": [{"op": "d2x", "v": 1}]}, {"op": "d2z"}, "v")

    @staticmethod
    def sweep_records(sweep):
        """The records of a sweep over `sweep` by a stand-in for the tool, which writes the summary a
        wave run would, its kernel the arguments; and the runner's failed stages."""
        with tempfile.TemporaryDirectory() as tmp:
            tool = os.path.join(tmp, "fd")
            with open(tool, "w") as f:
                f.write("#!/usr/bin/env python3\nimport json, os, sys\na = sys.argv[1:]\n"
                        "o = a[a.index('--output') + 1]\nos.makedirs(o)\n"
                        "t = {'gpts': 1.0, 'percent_of_bound': 2.0, 'copy_gbps': 3.0, 'loop_s': 4.0}\n"
                        "json.dump({'kernel': ' '.join(a), 'domain': {'computational': [1]}, 'steps': 5,"
                        " 'timing': t}, open(o + '/summary.json', 'w'))\n")
            os.chmod(tool, 0o755)
            saved = run.OUT, run.LOG, run.WORK
            run.OUT, run.LOG, run.WORK = tmp, os.path.join(tmp, "log"), os.path.join(tmp, "work")
            try:
                r = run.Runner()
                r.fd = tool
                r.sweep({"question": "?", "args": ["--steps", "5"], "sweep": sweep}, "toy", os.path.join(tmp, "t.json"))
            finally:
                run.OUT, run.LOG, run.WORK = saved
            with open(os.path.join(tmp, "t.json")) as f:
                return json.load(f)["records"], r.failed

    def test_a_sweep_runs_the_product_of_its_lists(self):
        records, failed = self.sweep_records({"model": [["--shape", "8,8"], ["--shape", "9,9"]], "radius": [2, 4],
                                              "kernel_params": {"vec": [2, 4], "split": [0, 1]}})
        self.assertEqual(len(records), 2 * 2 * 4)
        self.assertEqual(failed, [])
        last = records[-1]
        self.assertEqual(json.loads(last["kernel_params"]), {"vec": 4, "split": 1})
        self.assertIn("--shape 9,9 --radius 4 --kernel-params", last["kernel"])
        self.assertEqual(last["gpts"], 1.0)

    def test_a_sweeps_list_of_tables_is_one_run_each(self):
        records, failed = self.sweep_records({"kernel_params": [{"graph": 0}, {"temporal": 2, "temporal_nw": 16}]})
        self.assertEqual(failed, [])
        self.assertEqual([json.loads(r["kernel_params"]) for r in records],
                         [{"graph": 0}, {"temporal": 2, "temporal_nw": 16}])
        self.assertIn('--kernel-params {"temporal": 2, "temporal_nw": 16}', records[1]["kernel"])

    def test_a_sweeps_progress_key_drops_quiet_for_a_bar(self):
        records, _ = self.sweep_records({"progress": ["quiet", "bar"], "radius": [4]})
        quiet, bar = (rec["kernel"] for rec in records)
        self.assertIn("--quiet", quiet.split())
        self.assertNotIn("--quiet", bar.split())
        self.assertNotIn("--progress", quiet + bar)  # the key is the runner's, not the tool's
        with self.assertRaises(SystemExit):
            self.sweep_records({"progress": ["loud"]})

    def test_a_gradient_campaign_runs_the_script_with_the_built_package(self):
        c = {"kind": "gradient", "args": ["--no-deepwave", "--dim", "2"]}
        cmd = run.Runner().command(c, "g", "/tmp/out.json")
        self.assertTrue(cmd[1].endswith(os.path.join("bench", "python", "gradient_versus_deepwave.py")))
        self.assertEqual(cmd[2:], ["--no-deepwave", "--dim", "2", "--output", "/tmp/out.json"])
        self.assertTrue(os.path.isfile(cmd[1]))
        path = run.environment(c)["PYTHONPATH"].split(os.pathsep)[0]
        self.assertEqual(path, os.path.join(run.ROOT, "build", "python"))
        self.assertIsNone(run.environment({"kind": "bench"}))

    def test_wave_campaigns_run_at_a_toy_size(self):
        cli = os.environ.get("FDSTENCIL_CLI")
        if not cli:
            self.skipTest("FDSTENCIL_CLI is not set: the tool was not built")
        for path in CAMPAIGNS:
            c = load(path)
            if c["kind"] != "wave":
                continue
            with self.subTest(campaign=os.path.basename(path)), tempfile.TemporaryDirectory() as tmp:
                r = subprocess.run([cli, "wave", "--backend", "cpu", "--quiet", *toy(c["args"]), "--output", tmp + "/o"],
                                   capture_output=True, text=True, timeout=120)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(os.path.join(tmp, "o", "summary.json")) as f:
                    summary = json.load(f)
                rep = c.get("reproduces", {})
                if rep:
                    run.figure(summary, None, rep.get("now", rep["at"]))


class DefaultsDoc(unittest.TestCase):
    def test_every_row_names_where_it_was_chosen(self):
        rows = defaults_table.rows()
        self.assertGreater(len(rows), 50)
        for row in rows:
            self.assertRegex(row["provenance"], r"^(nvidia-[\w-]+: [\w./, -]+\.json|none: .+)$", row)

    def test_docs_defaults_md_is_generated_from_them(self):
        self.assertEqual(defaults_table.write(check=True), 0,
                         "docs/defaults.md is out of date: run python3 bench/report.py defaults")


class ResultsIndex(unittest.TestCase):
    def test_every_device_folder_has_its_generated_index(self):
        shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], capture_output=True, text=True,
                                 cwd=ROOT)
        if shallow.returncode != 0 or shallow.stdout.strip() != "false":
            self.skipTest("the index names the commits that added the older files: it needs the whole history")
        self.assertEqual(results_index.main(check=True), 0,
                         "a bench/results/<device>/README.md is out of date: run python3 bench/results_index.py")

    def test_a_copy_whose_history_lacks_a_files_commit_reads_the_index_as_current(self):
        # The device machine's copy of the tree: its files are newer than its git history.
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=ROOT).stdout.strip()
        new = "- [a.txt](a.txt): not committed yet\n"
        self.assertTrue(results_index.same_index(new, "- [a.txt](a.txt): added by 0000abc A subject\n"))
        if head:  # a commit this history has: the file really was committed, and the index is stale
            self.assertFalse(results_index.same_index(new, f"- [a.txt](a.txt): added by {head} A subject\n"))
        self.assertFalse(results_index.same_index(new, "- [b.txt](b.txt): added by 0000abc A subject\n"))
        self.assertFalse(results_index.same_index(new, ""))


if __name__ == "__main__":
    unittest.main()
