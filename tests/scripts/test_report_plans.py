"""bench/report_plans.py on hand-made files: the tuned table compares the plan's row with the
fastest earlier record of the same case (never a plan row), the defaults table divides by the
tuned figure and names the lowest share, and a file without plan rows is an error, not an empty
table."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "report_plans.py")


def rec(variant, pct, **extra):
    r = {"op": "d2z", "variant": variant, "dtype": "float", "radius": 4, "nx": 512, "ny": 512, "nz": 512,
         "params": {"nw": 8}, "status": "ok", "median_ms": 0.37, "pct_of_copy": pct, "effective_gbps": 2900.0}
    r.update(extra)
    return r


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class ReportPlansTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, doc):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def bench(self, name, records):
        return self.write(name, {"device": {"name": "test GPU"}, "copy_gbps": 3000.0, "records": records})

    def tune(self, name, pct):
        return self.write(name, {"cases": [{"op": "d2z", "radius": 4, "dtype": "float", "size": [512, 512, 512],
                                            "device": "test GPU", "variant": "window_vec", "params": {"nw": 4},
                                            "median_ms": 0.36, "effective_gbps": 2950.0, "copy_gbps": 3000.0,
                                            "pct_of_copy": pct, "timed": 19, "failed": 0, "seconds": 0.9}]})

    def test_tuned_against_the_best_earlier_record(self):
        plan = self.bench("plan.json", [rec("plan", 97.8, plan_variant="window_vec")])
        before = self.bench("before.json", [rec("window_vec", 97.0), rec("window_vec", 95.0),
                                            rec("plan", 99.9, plan_variant="window")])
        out = run("tuned", plan, "--best", before)
        self.assertEqual(out.returncode, 0, out.stderr)
        row = [l for l in out.stdout.splitlines() if l.startswith("| d2z")][0]
        self.assertIn("| 97.8 | window_vec | 97.0 | +0.8 |", row)

    def test_defaults_against_tuned_and_the_lowest_share(self):
        plan = self.bench("plan.json", [rec("plan", 80.0, plan_variant="window_vec")])
        out = run("defaults", plan, "--tuned", self.tune("t.json", 100.0))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("80.0 %", out.stdout)
        self.assertIn("The lowest share: 80.0 %.", out.stdout)

    def test_tune_table_and_refusals(self):
        out = run("tune", self.tune("t.json", 97.1))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| d2z | 512x512x512 | float | 4 | window_vec | nw=4 | 0.3600 | 2950 | 97.1 | 19 | 0 | 0.9 |",
                      out.stdout)
        no_plan = self.bench("none.json", [rec("window_vec", 97.0)])
        out = run("defaults", no_plan, "--tuned", self.tune("t2.json", 97.0))
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("no plan rows", out.stderr)
        out = run("tune", no_plan)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("not fdstencil tune", out.stderr)


if __name__ == "__main__":
    unittest.main()
